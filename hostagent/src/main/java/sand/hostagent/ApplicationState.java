package sand.hostagent;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What {@link ApplicationDeployer} knows of one application on this host, in one place. Only the application's
 * reconcile lane ({@link ReconcileLanes}) changes it, except {@link #unhealthy}, which supervisors' reports change
 * too; readers on other threads (the LQ_HA processor, metrics) see the volatile fields.
 */
final class ApplicationState {
  /**
   * What runs here: with {@code code} (resource → kind:sha256), {@code workflow}, {@code settings} and
   * {@code requirements}, enough to tell an update (only .py grains' code changed) from a change that needs a new
   * sandbox.
   */
  record Deployed(
      int version,
      AppSockets sockets,
      Set<String> grains,
      String workflow,
      String settings,
      String requirements,
      Map<String, String> code) {
    Deployed withVersion(int v, Map<String, String> newCode) {
      return new Deployed(v, sockets, grains, workflow, settings, requirements, newCode);
    }
  }

  /** A deploy of {@code version} that failed {@code attempts} times; not tried again before {@code notBefore}. */
  record Failure(int version, int attempts, Instant notBefore) {}

  /** What runs here (its sandbox may be draining), or null. */
  volatile Deployed deployed;
  /** Being undeployed: still {@link #deployed} while its sandbox drains, but not given events. */
  volatile boolean stopping;
  /** While its sandbox starts, its grains: their workers' reports are heard; else null. */
  volatile Set<String> starting;
  /** The last failed deploy, while its back-off lasts; else null. */
  volatile Failure failure;
  /** The digest of the environment the sandbox was deployed with ({@link AppEnvironment#digest}). */
  volatile String envDigest = "";
  /**
   * Its sandbox was stopped after {@code scale_to_zero_after_s} without an event; {@link #deployed} stays (its
   * queues, partitions and version), and the next event starts a sandbox again.
   */
  volatile boolean scaledToZero;
  /** Its {@code scale_to_zero_after_s} as deployed here (zero: never), read once per deploy. */
  volatile Duration scaleToZeroAfter = Duration.ZERO;
  /** An event arrived while {@link #scaledToZero}: its lane starts the sandbox. */
  volatile boolean wakeWanted;
  /** The idle watch found it idle past its setting: its lane stops the sandbox if it still is. */
  volatile boolean scaleToZeroWanted;
  /** When its sandbox was last stopped for being idle (System.nanoTime), for the log and the cold start's metric. */
  volatile long scaledToZeroAt;
  /** What its supervisor last said of each grain worker that is not well (grain → message). */
  final Map<String, String> unhealthy = new ConcurrentHashMap<>();

  /** Nothing is known of it here any more: it can be forgotten. */
  boolean idle() {
    return deployed == null && starting == null && failure == null && unhealthy.isEmpty();
  }
}
