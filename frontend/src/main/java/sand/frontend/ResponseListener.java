package sand.frontend;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads this frontend's response topic {@code sand.response.<id>} (one partition, created at start) from
 * its end, on one thread, and hands every record to {@link Results}. Results written while no frontend
 * with this id ran are not read: their requests timed out with it (their executions stay 'running').
 */
public final class ResponseListener extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(ResponseListener.class);

  /** Creates the response topic (Kafka Admin in production, nothing in tests). */
  @FunctionalInterface
  public interface TopicCreator {
    void ensureResponseTopic(String topic);
  }

  private final String topic;
  private final Consumer<String, byte[]> consumer;
  private final TopicCreator topics;
  private final Results results;
  private Thread thread;
  private volatile boolean running;

  public ResponseListener(String topic, Consumer<String, byte[]> consumer, TopicCreator topics, Results results) {
    this.topic = topic;
    this.consumer = consumer;
    this.topics = topics;
    this.results = results;
  }

  public boolean running() {
    return running && thread != null && thread.isAlive();
  }

  @Override
  protected void doStart() {
    topics.ensureResponseTopic(topic);
    TopicPartition p = new TopicPartition(topic, 0);
    consumer.assign(List.of(p));
    consumer.seekToEnd(List.of(p));
    consumer.position(p); // resolve "the end" now, before any request is sent
    running = true;
    thread = new Thread(this::loop, "response-listener-" + topic);
    thread.setDaemon(true);
    thread.start();
    LOG.info("[topic {}] listening for results", topic);
  }

  private void loop() {
    while (running) {
      try {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          results.arrived(r.key(), r.value());
        }
      } catch (WakeupException e) {
        // stop() woke us up
      } catch (RuntimeException e) {
        if (running) {
          LOG.warn("[topic {}] polling failed, retrying in 1 s: {}", topic, e.toString());
          try {
            Thread.sleep(1000);
          } catch (InterruptedException ie) {
            return;
          }
        }
      }
    }
  }

  @Override
  protected void doStop() throws InterruptedException {
    running = false;
    consumer.wakeup();
    if (thread != null) {
      thread.join(5000);
    }
    consumer.close();
    LOG.info("[topic {}] stopped listening", topic);
  }
}
