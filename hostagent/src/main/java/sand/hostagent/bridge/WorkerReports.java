package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.hostagent.bridge.HostAgentQueueProcessor.Refusal;
import sand.localbus.HostAgentMessage;

/**
 * Supervisors' reports on their grain workers, taken from LQ_HA by {@link HostAgentQueueProcessor}: a worker that
 * exited has what it had taken delivered again ({@link LocalRecovery}); any other state goes to the health listener
 * (the deployer) on a bounded queue of its own, never on a thread serving reports (it may write Cassandra).
 */
final class WorkerReports {
  // the processor's logger: operators filter these lines by the name they have always had
  private static final Logger LOG = LoggerFactory.getLogger(HostAgentQueueProcessor.class);
  /** Room for a legitimate burst (every grain of a sandbox, grains.max 128 by default, changing state twice). */
  static final int HEALTH_TASKS_PER_APP = 256;

  private final String host;
  private final LocalRecovery recovery;
  private final BiPredicate<String, String> knownGrain;
  private final HostAgentQueueProcessor.WorkerHealth health;
  private final Refusals refusals;
  /** Health reports waiting per application: a supervisor writes one per state change, a flood is a forgery. */
  private final Map<String, AtomicInteger> healthTasks = new ConcurrentHashMap<>();

  private final ThreadPoolExecutor healthPool;

  /** @param health gets the reports; null ignores them */
  WorkerReports(
      String host,
      LocalRecovery recovery,
      BiPredicate<String, String> knownGrain,
      HostAgentQueueProcessor.WorkerHealth health,
      Refusals refusals) {
    this.host = host;
    this.recovery = recovery;
    this.knownGrain = knownGrain;
    this.health = health;
    this.refusals = refusals;
    this.healthPool = HostAgentQueueProcessor.boundedPool("sand-worker-health-" + host, 1, 4096);
  }

  /** No more health reports are handed on (those queued still are). */
  void close() {
    healthPool.shutdown();
  }

  /**
   * A supervisor's report on a grain worker, for the application the bus stamped: a worker that died has
   * what it had taken delivered again; its health goes to {@code health}.
   */
  void report(HostAgentMessage m, JsonNode r) {
    HostAgentQueueProcessor.WorkerHealth h = health;
    String grain = r.path("grain").asText("");
    if ("exited".equals(r.path("state").asText()) && knownGrain.test(m.application(), grain)) {
      recovery.workerExited(m.application(), grain);
      return;
    }
    if (h != null) { // it checks the grain itself: a sandbox still starting is not known here yet
      String app = m.application();
      String g = cap(grain, 256);
      String state = cap(r.path("state").asText(""), 64);
      String message = cap(r.path("message").asText(""), 2048);
      AtomicInteger tasks = healthTasks.computeIfAbsent(app, a -> new AtomicInteger());
      if (tasks.incrementAndGet()
          > HEALTH_TASKS_PER_APP) { // one application cannot fill the queue for the others
        tasks.decrementAndGet();
        refusals.refuse(app, Refusal.BUSY);
        return;
      }
      try { // it may write Cassandra: never on a thread serving reports
        healthPool.execute(() -> {
          try {
            h.report(app, g, state, message);
          } catch (RuntimeException e) {
            LOG.warn("[host {}] [app {}] worker health report failed: {}", host, app, e.toString());
          } finally {
            tasks.decrementAndGet();
          }
        });
      } catch (RejectedExecutionException e) {
        tasks.decrementAndGet();
        refusals.refuse(app, Refusal.BUSY);
      }
    }
  }

  private static String cap(String s, int chars) {
    return s.length() > chars ? s.substring(0, chars) : s;
  }
}
