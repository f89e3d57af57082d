package sand.hostagent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.TopicNames;

/**
 * Reads the control topic ({@code sand.control}) from its end: every deploy / undeploy / update event
 * makes the deployer reconcile the application it names (the cluster state in Cassandra says what is
 * wanted; the event only says "look again"), in the application's own {@link ReconcileLanes lane}.
 */
final class ControlListener implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlListener.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Consumer<String, byte[]> consumer;
  private final java.util.function.Consumer<String> reconcile;
  private final java.util.function.Consumer<String> bucketsChanged;
  private final java.util.function.Consumer<String> hostChanged;
  private final Thread thread;
  private volatile boolean running = true;

  /**
   * @param bucketsChanged told the account of a {@code buckets} event (its triggerable buckets changed)
   * @param hostChanged told the host of a {@code host} event (operators cordoned, drained or uncordoned it)
   */
  ControlListener(
      Consumer<String, byte[]> consumer,
      java.util.function.Consumer<String> reconcile,
      java.util.function.Consumer<String> bucketsChanged,
      java.util.function.Consumer<String> hostChanged) {
    this.consumer = consumer;
    this.reconcile = reconcile;
    this.bucketsChanged = bucketsChanged;
    this.hostChanged = hostChanged;
    this.thread = new Thread(this::run, "control-listener");
    this.thread.setDaemon(true);
  }

  ControlListener start() {
    TopicPartition tp = new TopicPartition(TopicNames.CONTROL, 0);
    consumer.assign(List.of(tp));
    consumer.seekToEnd(List.of(tp));
    consumer.position(tp); // resolve "end" now: events after this point are seen
    thread.start();
    return this;
  }

  private void run() {
    while (running) {
      try {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofSeconds(1))) {
          handle(r);
        }
      } catch (WakeupException e) {
        return;
      } catch (RuntimeException e) {
        LOG.warn("control topic: {}; retrying", e.toString());
      }
    }
  }

  void handle(ConsumerRecord<String, byte[]> r) {
    String appId;
    String type;
    String owner;
    String host;
    try {
      JsonNode ev = JSON.readTree(r.value());
      appId = ev.path("app").asText("");
      type = ev.path("type").asText("");
      owner = ev.path("owner").asText("");
      host = ev.path("host").asText("");
    } catch (IOException e) {
      LOG.warn("control topic: ignoring a record that is not JSON at offset {}", r.offset());
      return;
    }
    if ("buckets".equals(type) && !owner.isEmpty()) {
      LOG.info("control: the triggerable buckets of account {} changed", owner);
      bucketsChanged.accept(owner); // docs/data-triggers.md: read the account's buckets again
      return;
    }
    if ("host".equals(type) && !host.isEmpty()) {
      LOG.info("control: the schedule of host {} changed", host);
      hostChanged.accept(host);
      return;
    }
    if ("alias".equals(type)) {
      return; // for the frontends (their application cache): nothing to deploy
    }
    if (appId.isEmpty() || !List.of("deploy", "undeploy", "update").contains(type)) {
      LOG.warn(
          "control topic: ignoring {} event for app '{}' at offset {}", type, appId, r.offset());
      return;
    }
    LOG.info("control: {} {}", type, appId);
    reconcile.accept(appId);
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    try {
      thread.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    consumer.close();
  }
}
