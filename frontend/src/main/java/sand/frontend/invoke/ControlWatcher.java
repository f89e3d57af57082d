package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.TopicNames;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;

/**
 * Reads {@code sand.control} (the deploy and undeploy events every host agent reads) so that a deploy or an
 * undeploy made through another frontend is seen here at once, not after the {@link AppDirectory}'s cache
 * lifetime: the application is read again on its next request, so a request after an undeploy is answered
 * 409 at once instead of being sent to hosts that no longer run it (and timing out 504).
 *
 * <p>Synchronous requests of the application still waiting {@link #GRACE} after its undeploy are answered 409:
 * the instances running at the undeploy finish in the sandbox's stop grace and answer before that; events
 * still queued were handed back to Kafka and will not run unless the application is deployed again.
 */
public final class ControlWatcher extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(ControlWatcher.class);
  /** How long after an undeploy a waiting request may still get its result (a running instance finishing). */
  public static final Duration GRACE = Duration.ofSeconds(5);

  private final Consumer<String, byte[]> consumer;
  private final AppDirectory directory;
  private final Results results;
  private final ScheduledExecutorService later;
  private volatile boolean running;
  private Thread thread;

  public ControlWatcher(
      Consumer<String, byte[]> consumer, AppDirectory directory, Results results) {
    this.consumer = consumer;
    this.directory = directory;
    this.results = results;
    this.later = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "control-watcher-grace");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  protected void doStart() {
    TopicPartition p = new TopicPartition(TopicNames.CONTROL, 0);
    consumer.assign(List.of(p));
    // Resolved lazily by the first poll, on the watcher thread: a broker that will not let this
    // frontend read
    // sand.control (an ACL) never stops it from serving; it then sees changes when its cache
    // entries expire.
    consumer.seekToEnd(
        List.of(p)); // only what happens from now on matters: older states are read anyway
    running = true;
    thread = new Thread(this::loop, "control-watcher");
    thread.setDaemon(true);
    thread.start();
  }

  private void loop() {
    while (running) {
      try {
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofSeconds(5))) {
          handle(r.value());
        }
      } catch (WakeupException e) {
        // stop() woke us up
      } catch (RuntimeException e) {
        if (running) {
          LOG.warn("reading {} failed, retrying in 1 s: {}", TopicNames.CONTROL, e.toString());
          try {
            Thread.sleep(1000);
          } catch (InterruptedException ie) {
            return;
          }
        }
      }
    }
  }

  /** One control event: {@code {"type": "deploy"|"undeploy", "app": "<id>", ...}}; anything else is skipped. */
  void handle(byte[] value) {
    JsonNode n;
    try {
      n = Json.MAPPER.readTree(value);
    } catch (java.io.IOException | RuntimeException e) {
      return;
    }
    if (n == null || !n.path("app").isTextual()) {
      return;
    }
    String appId = n.path("app").asText();
    directory.forgetId(appId);
    if ("undeploy".equals(n.path("type").asText())) {
      later.schedule(() -> abandon(appId), GRACE.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  void abandon(String appId) {
    int n = results.abandon(
        appId,
        ApiException.conflict(
            "the application was undeployed while this request waited; it did not "
                + "run (its event was handed back to Kafka and runs only if the application is deployed again)"));
    if (n > 0) {
      LOG.info("[app id {}] undeployed: {} waiting requests answered 409", appId, n);
    }
  }

  @Override
  protected void doStop() throws InterruptedException {
    running = false;
    consumer.wakeup();
    if (thread != null) {
      thread.join(5000);
    }
    later.shutdownNow();
    consumer.close();
  }
}
