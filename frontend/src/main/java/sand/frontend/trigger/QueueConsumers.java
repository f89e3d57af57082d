package sand.frontend.trigger;

import java.time.Clock;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.frontend.FrontendMetrics;
import sand.frontend.invoke.AppDirectory;

/**
 * The queue triggers this frontend runs: a {@link QueueConsumer} thread per queue trigger in the cluster (every
 * frontend joins each trigger's group; Kafka gives each partition to one of them), started and stopped as triggers
 * are added and deleted ({@link TriggerSet}, read every few seconds).
 */
public final class QueueConsumers extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(QueueConsumers.class);

  private final TriggerSet triggers;
  private final TopicSource topics;
  private final AppDirectory directory;
  private final Deliveries deliveries;
  private final FrontendMetrics metrics;
  private final Clock clock;
  private final String frontendId;
  private final Map<String, QueueConsumer> running = new ConcurrentHashMap<>();
  private Thread thread;
  private volatile boolean stop;

  public QueueConsumers(
      TriggerSet triggers,
      TopicSource topics,
      AppDirectory directory,
      Deliveries deliveries,
      FrontendMetrics metrics,
      Clock clock,
      String frontendId) {
    this.triggers = triggers;
    this.topics = topics;
    this.directory = directory;
    this.deliveries = deliveries;
    this.metrics = metrics;
    this.clock = clock;
    this.frontendId = frontendId;
  }

  @Override
  protected void doStart() {
    stop = false;
    thread = new Thread(this::loop, "queue-triggers");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  protected void doStop() throws InterruptedException {
    stop = true;
    thread.interrupt();
    thread.join(5000);
    running.values().forEach(QueueConsumer::stop);
    running.clear();
  }

  /** How many queue triggers run here (tests, metrics). */
  public int running() {
    return running.size();
  }

  private void loop() {
    while (!stop) {
      try {
        sync(true);
      } catch (RuntimeException e) {
        LOG.warn("queue triggers: {}", e.toString());
      }
      try {
        Thread.sleep(TriggerSet.REFRESH_MS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Start a consumer for each queue trigger that has none here; stop those whose trigger is gone or changed. */
  void sync(boolean startThreads) {
    Set<String> wanted = new HashSet<>();
    for (TriggerSet.Armed a : triggers.all(clock.millis(), false)) {
      if (!TriggerSpec.QUEUE.equals(a.spec().kind())) {
        continue;
      }
      String key = a.key() + "\0" + a.spec().json();
      wanted.add(key);
      QueueConsumer old = running.get(key);
      if (old != null && !old.ended()) {
        continue;
      }
      TriggerSpec s = a.spec();
      QueueConsumer c = new QueueConsumer(
          a,
          topics.consumer(
              s.group(),
              s.start(),
              s.batchSize(),
              "sand-frontend-" + frontendId + "-trigger-" + s.name()),
          directory,
          deliveries,
          metrics);
      running.put(key, c);
      metrics.triggerLag(a.appName(), s.name(), c::lag);
      if (startThreads) {
        Thread t = new Thread(c, "queue-trigger-" + a.appName() + "-" + s.name());
        t.setDaemon(true);
        t.start();
      }
      LOG.info(
          "[app {}] queue trigger {} consumes {} in group {}",
          a.appName(),
          s.name(),
          s.topic(),
          s.group());
    }
    running.entrySet().removeIf(e -> {
      if (wanted.contains(e.getKey())) {
        return false;
      }
      QueueConsumer c = e.getValue();
      c.stop();
      metrics.removeTriggerLag(c.trigger().appName(), c.trigger().spec().name());
      return true;
    });
  }

  /** The lag of a queue trigger's partitions read by this frontend (-1: not running here). */
  public long lag(String appId, String name) {
    return running.values().stream()
        .filter(
            c -> c.trigger().appId().equals(appId) && c.trigger().spec().name().equals(name))
        .mapToLong(QueueConsumer::lag)
        .findFirst()
        .orElse(-1);
  }
}
