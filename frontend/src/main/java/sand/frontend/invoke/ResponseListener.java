package sand.frontend.invoke;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.log.LogThrottle;

/**
 * Reads a response topic {@code sand.response.<id>} (one partition) on one thread and hands every record to
 * {@link Results}. It resumes where the last reader of that topic left off: the offset up to which every result's
 * record is written in the executions table is committed to Kafka, in the consumer group {@code sand.frontend.<id>}.
 * Kafka's own committed offsets (not a column in Cassandra) because they are kept beside the records they point
 * into and a restarted consumer reads them with one call; the consumer is assigned its partition (no group
 * membership, no rebalances), so the group is only the name the offsets are kept under. A topic with no committed
 * offset (a brand-new frontend) is read from its end (nothing in it can be for this frontend's requests) and that
 * position committed at once, so a frontend that takes this topic over later has a start.
 */
public final class ResponseListener extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(ResponseListener.class);

  /** Creates the response topic (Kafka Admin in production, nothing in tests). */
  @FunctionalInterface
  public interface TopicCreator {
    void ensureResponseTopic(String topic);
  }

  /** The consumer group a response topic's offsets are committed under (one per frontend id). */
  public static String groupId(String frontendId) {
    return "sand.frontend." + frontendId;
  }

  /** The offset after a record, and when the results it brought are recorded. */
  private record Pending(long next, CompletableFuture<Void> recorded) {}

  private final String topic;
  private final TopicPartition partition;
  private final Consumer<String, byte[]> consumer;
  private final TopicCreator topics;
  private final Results results;
  private final boolean fromBeginningWhenNew;
  /** Records handed to {@link Results} whose offsets are not committed yet, in offset order (poll thread only). */
  private final Deque<Pending> pending = new ArrayDeque<>();

  private long committed = -1;
  /** When the last commit was made (System.nanoTime; poll thread only). */
  private long committedAtNanos;

  private final long commitIntervalNanos;
  /** The offset before which every result read is recorded (poll thread only). */
  private long recordedUpTo = -1;

  private Thread thread;
  private volatile boolean running;
  /**
   * When Kafka last answered this consumer (System.nanoTime): records, or the topic's end offset, asked for every
   * {@link #ASK_KAFKA_EVERY} (an empty poll returns whether or not Kafka is there).
   */
  private volatile long kafkaAnsweredNanos = System.nanoTime();

  private static final Duration ASK_KAFKA_EVERY = Duration.ofSeconds(2);
  /** How long the question may hold up the loop: polls go on between questions while Kafka is away. */
  private static final Duration ASK_KAFKA_WAIT = Duration.ofMillis(500);

  private long kafkaAskedNanos = System.nanoTime();
  private final LogThrottle failureLogged = new LogThrottle(Duration.ofMinutes(1));

  /** A frontend's own response topic, read from its end when it has no committed offset. */
  public ResponseListener(
      String topic, Consumer<String, byte[]> consumer, TopicCreator topics, Results results) {
    this(topic, consumer, topics, results, false);
  }

  /**
   * The recorded offset is committed at most this often (and at stop): a commit is a round trip to Kafka and a write
   * to its offsets topic, once per request when it followed every poll (issue 27). A reader that starts after a
   * crash reads at most this much again; a result read again is recorded again with a later arrival, which ranks
   * lower ({@code FrontendTables.resultRank}), so the first result stays the one recorded.
   */
  private static final Duration COMMIT_INTERVAL = Duration.ofSeconds(1);

  /**
   * @param fromBeginningWhenNew read a topic with no committed offset from its beginning (another frontend's topic
   *     taken over: whatever is in it was never recorded)
   */
  public ResponseListener(
      String topic,
      Consumer<String, byte[]> consumer,
      TopicCreator topics,
      Results results,
      boolean fromBeginningWhenNew) {
    this(topic, consumer, topics, results, fromBeginningWhenNew, COMMIT_INTERVAL);
  }

  public ResponseListener(
      String topic,
      Consumer<String, byte[]> consumer,
      TopicCreator topics,
      Results results,
      boolean fromBeginningWhenNew,
      Duration commitInterval) {
    this.commitIntervalNanos = commitInterval.toNanos();
    this.topic = topic;
    this.partition = new TopicPartition(topic, 0);
    this.consumer = consumer;
    this.topics = topics;
    this.results = results;
    this.fromBeginningWhenNew = fromBeginningWhenNew;
  }

  public boolean running() {
    return running && thread != null && thread.isAlive();
  }

  /** Running, and Kafka answered within {@code d}: results put into Kafka reach this frontend. */
  public boolean kafkaAnsweredWithin(Duration d) {
    return running() && System.nanoTime() - kafkaAnsweredNanos < d.toNanos();
  }

  @Override
  protected void doStart() {
    topics.ensureResponseTopic(topic);
    consumer.assign(List.of(partition));
    OffsetAndMetadata last = consumer.committed(Set.of(partition)).get(partition);
    if (last != null) {
      consumer.seek(partition, last.offset());
      committed = last.offset();
    } else if (fromBeginningWhenNew) {
      consumer.seekToBeginning(List.of(partition));
    } else {
      consumer.seekToEnd(List.of(partition));
      commit(consumer.position(partition)); // resolve "the end" now, before any request is sent
    }
    running = true;
    thread = new Thread(this::loop, "response-listener-" + topic);
    thread.setDaemon(true);
    thread.start();
    LOG.info(
        "[topic {}] listening for results from offset {}",
        topic,
        last != null
            ? last.offset()
            : fromBeginningWhenNew
                ? "0 (none committed)"
                : committed + " (its end: none committed)");
  }

  private void loop() {
    while (running) {
      try {
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(200));
        for (ConsumerRecord<String, byte[]> r : records) {
          pending.add(new Pending(r.offset() + 1, results.arrived(r.key(), r.value())));
        }
        long now = System.nanoTime();
        if (!records.isEmpty()) {
          kafkaAnsweredNanos = now;
        } else if (now - kafkaAskedNanos > ASK_KAFKA_EVERY.toNanos()) {
          askKafka(now);
        }
        commitRecorded(false);
      } catch (WakeupException e) {
        // stop() woke us up
      } catch (RuntimeException e) {
        if (running) {
          if (failureLogged.allow()) { // Kafka away: once a minute, not every second
            LOG.warn("[topic {}] polling failed, retrying in 1 s: {}", topic, e.toString());
          }
          try {
            Thread.sleep(1000);
          } catch (InterruptedException ie) {
            return;
          }
        }
      }
    }
  }

  /** Ask Kafka for the topic's end: an answer is Kafka answering; none leaves the silence for readiness to see. */
  private void askKafka(long now) {
    kafkaAskedNanos = now;
    try {
      consumer.endOffsets(List.of(partition), ASK_KAFKA_WAIT);
      kafkaAnsweredNanos = System.nanoTime();
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      // not answered in time: not an error of the loop (no pause, no log line)
    }
  }

  /**
   * Commit the offset up to which every result read is recorded (results are recorded out of order), if
   * {@link #COMMIT_INTERVAL} has passed since the last commit or {@code now}.
   */
  private void commitRecorded(boolean now) {
    while (!pending.isEmpty() && pending.peek().recorded().isDone()) {
      recordedUpTo = pending.poll().next();
    }
    if (recordedUpTo > committed
        && (now || System.nanoTime() - committedAtNanos >= commitIntervalNanos)) {
      commit(recordedUpTo); // a failed commit is tried again after the next poll
    }
  }

  private void commit(long offset) {
    consumer.commitSync(Map.of(partition, new OffsetAndMetadata(offset)));
    committed = offset;
    committedAtNanos = System.nanoTime();
  }

  @Override
  protected void doStop() throws InterruptedException {
    running = false;
    consumer.wakeup();
    if (thread != null) {
      thread.join(5000);
    }
    // The records of what was read are being written: wait for them (bounded), so the next reader
    // starts after them.
    if (!pending.isEmpty()) {
      try {
        CompletableFuture.allOf(
                pending.stream().map(Pending::recorded).toArray(CompletableFuture[]::new))
            .get(10, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        LOG.warn(
            "[topic {}] {} results not recorded at stop: the next reader reads them again",
            topic,
            pending.stream().filter(p -> !p.recorded().isDone()).count());
      }
    }
    try {
      commitRecorded(true);
    } catch (RuntimeException e) {
      LOG.warn("[topic {}] could not commit its offset at stop: {}", topic, e.toString());
    }
    consumer.close();
    LOG.info("[topic {}] stopped listening", topic);
  }
}
