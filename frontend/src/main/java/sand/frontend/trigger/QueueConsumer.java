package sand.frontend.trigger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.frontend.FrontendMetrics;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.invoke.AppDirectory;

/**
 * One queue trigger on one frontend: a consumer in the trigger's group (Kafka spreads the topic's partitions over
 * the frontends), an execution per record (or per batch) with the record's idempotency key
 * {@code kafka:<topic>:<partition>:<offset>}, and the batch's offsets committed only once every execution has
 * ended and is recorded (succeeded or dead-lettered). A frontend that dies mid-batch commits nothing: the partition's
 * next owner reads the batch again, and a record that had run answers its first execution instead of running twice.
 */
final class QueueConsumer implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(QueueConsumer.class);
  private static final Duration POLL = Duration.ofMillis(500);

  private final TriggerSet.Armed trigger;
  private final Consumer<String, byte[]> consumer;
  private final AppDirectory directory;
  private final Deliveries deliveries;
  private final FrontendMetrics metrics;
  private volatile boolean stop;
  private volatile boolean ended;
  private volatile long lag;

  QueueConsumer(
      TriggerSet.Armed trigger,
      Consumer<String, byte[]> consumer,
      AppDirectory directory,
      Deliveries deliveries,
      FrontendMetrics metrics) {
    this.trigger = trigger;
    this.consumer = consumer;
    this.directory = directory;
    this.deliveries = deliveries;
    this.metrics = metrics;
  }

  TriggerSet.Armed trigger() {
    return trigger;
  }

  long lag() {
    return lag;
  }

  /** Its thread has ended (stopped, or a failure it could not go on from: it is started again). */
  boolean ended() {
    return ended;
  }

  void stop() {
    stop = true;
    consumer.wakeup();
  }

  @Override
  public void run() {
    TriggerSpec s = trigger.spec();
    try {
      consumer.subscribe(List.of(s.topic()));
      while (!stop) {
        ConsumerRecords<String, byte[]> records = consumer.poll(POLL);
        measureLag();
        if (records.isEmpty()) {
          continue;
        }
        Optional<AppDirectory.Target> app = directory.find(trigger.appName());
        if (app.isEmpty() || !app.get().deployed()) {
          // not deployed (yet, or any more): nothing is committed; read the batch again in a while
          rewind(records);
          sleep(2000);
          continue;
        }
        runBatch(app.get(), records);
      }
    } catch (WakeupException e) {
      // stopping
    } catch (RuntimeException e) {
      LOG.warn(
          "[app {}] queue trigger {} on {} stopped: {}",
          trigger.appName(),
          s.name(),
          s.topic(),
          e.toString());
    } finally {
      ended = true;
      try {
        consumer.close(
            org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
      } catch (RuntimeException e) {
        // closing anyway
      }
    }
  }

  private void runBatch(AppDirectory.Target app, ConsumerRecords<String, byte[]> records) {
    TriggerSpec s = trigger.spec();
    String source = "queue:" + s.name();
    List<CompletableFuture<Deliveries.Result>> pending = new ArrayList<>();
    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
    List<ConsumerRecord<String, byte[]>> all = new ArrayList<>();
    records.forEach(all::add);
    if (s.perBatch()) {
      ArrayNode list = Json.MAPPER.createArrayNode();
      all.forEach(r -> list.add(event(r)));
      ConsumerRecord<String, byte[]> first = all.get(0);
      ConsumerRecord<String, byte[]> last = all.get(all.size() - 1);
      String key = "kafka:" + first.topic() + ":" + first.partition() + ":" + first.offset() + "-"
          + last.offset() + "x" + all.size();
      JsonNode value =
          Json.object().put("trigger", s.name()).put("idempotency_key", key).set("records", list);
      pending.add(deliver(app, value, source, key));
    } else {
      for (ConsumerRecord<String, byte[]> r : all) {
        // the key in the event too: a record run twice (its consumer died) shows the same key both
        // times
        ObjectNode value = event(r).put("trigger", s.name()).put("idempotency_key", key(r));
        pending.add(deliver(app, value, source, key(r)));
      }
    }
    for (ConsumerRecord<String, byte[]> r : all) {
      commit.merge(
          new TopicPartition(r.topic(), r.partition()),
          new OffsetAndMetadata(r.offset() + 1),
          (a, b) -> a.offset() >= b.offset() ? a : b);
    }
    // keep the group's membership while the batch runs: poll with every partition paused
    consumer.pause(consumer.assignment());
    CompletableFuture<Void> batch =
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
    while (!batch.isDone() && !stop) {
      try {
        batch.get(
            200,
            TimeUnit
                .MILLISECONDS); // the batch's end, not a poll's timeout, decides when it goes on
      } catch (Exception e) {
        // not yet, or one failed (reported below)
      }
      if (batch.isDone()) {
        break;
      }
      ConsumerRecords<String, byte[]> more =
          consumer.poll(Duration.ZERO); // rebalances happen in poll
      if (!more
          .isEmpty()) { // partitions given to us meanwhile (a rebalance): not read yet, read them
        // next
        rewind(more);
        consumer.pause(more.partitions());
      }
    }
    consumer.resume(consumer.paused());
    if (stop) {
      return; // nothing committed: the next owner runs the batch again, under the same keys
    }
    if (batch.isCompletedExceptionally()) {
      // a delivery could not even start (Cassandra away for its key): nothing committed, read it
      // again
      LOG.warn(
          "[app {}] queue trigger {}: a batch could not be delivered; reading it again",
          trigger.appName(),
          s.name());
      rewind(records);
      sleep(1000);
      return;
    }
    try {
      commit.keySet().retainAll(consumer.assignment());
      consumer.commitSync(commit);
    } catch (RuntimeException e) {
      // the partitions moved to another frontend meanwhile: it reads them from the last commit
      LOG.info(
          "[app {}] queue trigger {}: commit after the batch failed ({}); its next owner "
              + "reads it again (the records' keys keep them from running twice)",
          trigger.appName(),
          s.name(),
          e.toString());
    }
  }

  private CompletableFuture<Deliveries.Result> deliver(
      AppDirectory.Target app, JsonNode value, String source, String key) {
    String grain = trigger.spec().grain();
    Optional<AppDirectory.Target> target = app.startingAt(grain);
    if (target.isEmpty()) {
      return CompletableFuture.failedFuture(new IllegalStateException(
          "the workflow has no grain '" + grain + "' any more; change the trigger's grain"));
    }
    Optional<Deliveries.Delivery> d = deliveries.deliver(
        target.get(), value, source, key, Ids.newId(), Deliveries.Unsent.CALLER_RETRIES);
    return d.map(x -> x.done()
            .thenCompose(r -> Deliveries.UNSENT.equals(r.status())
                // nothing ran (its host went away as it was sent): not committed, the batch is read
                // again
                ? CompletableFuture.<Deliveries.Result>failedFuture(
                    new IllegalStateException("record " + key + " could not be sent"))
                : CompletableFuture.completedFuture(r)))
        .orElseGet(() -> CompletableFuture.failedFuture(
            new IllegalStateException("this frontend holds as many deliveries as it may")));
  }

  static String key(ConsumerRecord<String, byte[]> r) {
    return "kafka:" + r.topic() + ":" + r.partition() + ":" + r.offset();
  }

  /** The event an execution gets for a record: the value as JSON when it parses, else as text. */
  static ObjectNode event(ConsumerRecord<String, byte[]> r) {
    ObjectNode o = Json.object()
        .put("topic", r.topic())
        .put("partition", r.partition())
        .put("offset", r.offset())
        .put("timestamp", r.timestamp());
    o.put("key", r.key());
    byte[] v = r.value();
    if (v == null) {
      o.putNull("value");
    } else {
      try {
        o.set("value", Json.MAPPER.readTree(v));
      } catch (java.io.IOException e) {
        o.put("value", new String(v, StandardCharsets.UTF_8));
      }
    }
    return o;
  }

  private void rewind(ConsumerRecords<String, byte[]> records) {
    for (TopicPartition tp : records.partitions()) {
      consumer.seek(tp, records.records(tp).get(0).offset());
    }
  }

  private void measureLag() {
    try {
      var assigned = consumer.assignment();
      if (assigned.isEmpty()) {
        lag = 0;
        return;
      }
      long total = 0;
      for (TopicPartition tp : assigned) {
        var l = consumer.currentLag(tp);
        total += l.isPresent() ? l.getAsLong() : 0;
      }
      lag = total;
    } catch (RuntimeException e) {
      // no lag known yet
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
