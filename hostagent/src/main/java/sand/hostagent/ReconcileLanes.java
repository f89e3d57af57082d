package sand.hostagent;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the host agent's deploy work per application: one application's reconciliations one at a time and in
 * order, different applications' side by side on a bounded pool, so one tenant's slow or broken deploy (a
 * long pip install, a sandbox that crash-loops until its deadline) never waits in front of another's.
 *
 * <p>Requests for an application whose reconciliation is queued or running are coalesced into one more run
 * after it: a reconciliation reads the wanted state afresh, so one run answers every request made before
 * it started.
 */
final class ReconcileLanes {
  private static final Logger LOG = LoggerFactory.getLogger(ReconcileLanes.class);

  private static final class Lane {
    boolean busy; // guarded by this: queued or running
    boolean again; // guarded by this: a request came while busy
  }

  private final Executor pool;
  private final Consumer<String> reconcile;
  private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

  /**
   * @param pool      runs the reconciliations (its size bounds how many applications deploy at once)
   * @param reconcile what to run for one application id
   */
  ReconcileLanes(Executor pool, Consumer<String> reconcile) {
    this.pool = pool;
    this.reconcile = reconcile;
  }

  /** Reconcile {@code appId} soon: now if its lane is free, else once more after the run in progress. */
  void request(String appId) {
    Lane lane = lanes.computeIfAbsent(appId, a -> new Lane());
    synchronized (lane) {
      if (lane.busy) {
        lane.again = true;
        return;
      }
      lane.busy = true;
    }
    pool.execute(() -> run(appId, lane));
  }

  /** Whether a reconciliation of {@code appId} is queued or running (tests, status). */
  boolean busy(String appId) {
    Lane lane = lanes.get(appId);
    if (lane == null) {
      return false;
    }
    synchronized (lane) {
      return lane.busy;
    }
  }

  private void run(String appId, Lane lane) {
    while (true) {
      try {
        reconcile.accept(appId);
      } catch (RuntimeException e) {
        LOG.error("[app {}] reconcile failed: {}", appId, e.toString(), e);
      }
      synchronized (lane) {
        if (!lane.again) {
          lane.busy = false;
          return;
        }
        lane.again = false;
      }
    }
  }
}
