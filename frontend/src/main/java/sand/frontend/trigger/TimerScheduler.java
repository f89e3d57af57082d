package sand.frontend.trigger;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.frontend.FrontendMetrics;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.invoke.AppDirectory;

/**
 * Runs every application's timers from every frontend: at each tick each frontend tries to claim it in the cluster
 * store (a lightweight transaction) and only the one that wins fires it, so a tick fires once while any frontend
 * lives, whichever died. Missed ticks (every frontend down): a tick is fired only within {@link #GRACE_MS} of its
 * time, so after an outage at most the latest missed tick runs, the others are counted as missed (as a Kubernetes
 * CronJob with startingDeadlineSeconds=60). A new trigger's first tick is the first one after it was made.
 */
public final class TimerScheduler extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(TimerScheduler.class);
  public static final long GRACE_MS = 60_000;
  /** The most ticks of one timer a pass fires (the rest at the next pass): a 1 s timer's grace. */
  private static final int CATCH_UP_MAX = 60;
  /** Ticks of one timer still running on this frontend beyond which a tick is skipped (the app is too slow). */
  public static final int MAX_RUNNING_PER_TIMER = 16;

  private static final long MAX_SLEEP_MS = 1000;
  /** How long before its time a tick is claimed (a lightweight transaction takes a few round trips). */
  static final long LEAD_MS = 500;

  private final TriggerSet triggers;
  private final ClusterStore store;
  private final AppDirectory directory;
  private final Deliveries deliveries;
  private final FrontendMetrics metrics;
  private final Clock clock;
  private final String frontendId;
  /** Trigger -> the latest tick this frontend considered (claimed, lost or missed). */
  private final Map<String, Long> considered = new HashMap<>();

  private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
  private final ScheduledExecutorService firing = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "timer-firing");
    t.setDaemon(true);
    return t;
  });
  private Thread thread;
  private volatile boolean stop;

  public TimerScheduler(
      TriggerSet triggers,
      ClusterStore store,
      AppDirectory directory,
      Deliveries deliveries,
      FrontendMetrics metrics,
      Clock clock,
      String frontendId) {
    this.triggers = triggers;
    this.store = store;
    this.directory = directory;
    this.deliveries = deliveries;
    this.metrics = metrics;
    this.clock = clock;
    this.frontendId = frontendId;
  }

  @Override
  protected void doStart() {
    stop = false;
    thread = new Thread(this::loop, "timer-scheduler");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  protected void doStop() throws InterruptedException {
    stop = true;
    thread.interrupt();
    thread.join(5000);
    firing.shutdownNow();
  }

  private void loop() {
    while (!stop) {
      long next;
      try {
        next = tick(clock.millis());
      } catch (RuntimeException e) {
        LOG.warn("timer pass failed: {}", e.toString());
        next = clock.millis() + MAX_SLEEP_MS;
      }
      long sleep = Math.max(1, Math.min(MAX_SLEEP_MS, next - clock.millis()));
      try {
        Thread.sleep(sleep);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** One pass at {@code now}: fire what is due; returns when the next tick of any timer is due. */
  long tick(long now) {
    List<TriggerSet.Armed> all = triggers.all(now, false);
    long next = Long.MAX_VALUE;
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (TriggerSet.Armed a : all) {
      if (!TriggerSpec.TIMER.equals(a.spec().kind())) {
        continue;
      }
      String key = a.key();
      seen.add(key);
      Schedule s = a.spec().schedule();
      // a tick is claimed up to LEAD_MS before it is due, so the claim's round trips are not in its
      // latency
      long due = s.atOrBefore(now + LEAD_MS);
      next = Math.min(next, s.after(now + LEAD_MS) - LEAD_MS);
      Long last = considered.get(key);
      if (last != null && due <= last) {
        continue;
      }
      // Every tick since the last one considered here, not only the newest: a pass held up
      // (a Cassandra read that timed out as a replica died: 11 s in one run, 4 ticks of 2 s
      // lost) fires the ticks it slept through late, within the grace, rather than never.
      long t = last == null ? due : s.after(last);
      for (int i = 0; t <= due && i < CATCH_UP_MAX; i++, t = s.after(t)) {
        if (t < a.createdEpochMs()) {
          considered.put(key, t); // a tick from before the trigger existed is not a missed one
          continue;
        }
        if (now - t > GRACE_MS) {
          considered.put(key, t);
          if (last != null) {
            metrics.trigger(a.appName(), source(a), "missed");
          }
          continue;
        }
        try {
          considered.put(key, t);
          claimAndFire(a, t);
        } catch (RuntimeException e) {
          // the claim's result is unknown (a Cassandra replica that just died is still asked
          // for a few seconds): asked again at the next pass, within the grace; a claim this
          // frontend made answers it again
          if (last == null) {
            considered.remove(key);
          } else {
            considered.put(key, s.atOrBefore(t - 1));
          }
          next = Math.min(next, now + 200);
          LOG.warn(
              "[app {}] timer {}: tick {} not claimed yet, trying again: {}",
              a.appName(),
              a.spec().name(),
              Instant.ofEpochMilli(t),
              e.toString());
          break;
        }
      }
    }
    considered.keySet().retainAll(seen);
    return next;
  }

  private void claimAndFire(TriggerSet.Armed a, long due) {
    Optional<AppDirectory.Target> app = directory.find(a.appName());
    if (app.isEmpty() || !app.get().deployed()) {
      return; // an undeployed application's timers wait for its next deploy
    }
    AtomicInteger n = running.computeIfAbsent(a.key(), k -> new AtomicInteger());
    if (n.get() >= MAX_RUNNING_PER_TIMER) {
      metrics.trigger(a.appName(), source(a), "skipped");
      LOG.warn(
          "[app {}] timer {}: tick {} skipped: {} ticks still running here",
          a.appName(),
          a.spec().name(),
          Instant.ofEpochMilli(due),
          n.get());
      return;
    }
    if (!store.triggers().claimTick(a.appId(), a.spec().name(), due, frontendId)) {
      return; // another frontend fired it
    }
    if (!stillThere(a)) {
      return; // deleted or changed since this frontend last read the triggers: it fires no more
    }
    long wait = due - clock.millis();
    if (wait > 0) {
      firing.schedule(() -> fire(a, due, app.get(), n), wait, TimeUnit.MILLISECONDS);
    } else {
      fire(a, due, app.get(), n);
    }
  }

  private void fire(TriggerSet.Armed a, long due, AppDirectory.Target app, AtomicInteger n) {
    JsonNode input = a.spec().input() != null
        ? a.spec().input()
        : Json.object()
            .put("trigger", a.spec().name())
            .put("time", Instant.ofEpochMilli(due).toString());
    var target = app.startingAt(a.spec().grain());
    if (target.isEmpty()) {
      metrics.trigger(a.appName(), source(a), "failed");
      LOG.warn(
          "[app {}] timer {}: tick {} not fired: the workflow has no grain '{}' any more",
          a.appName(),
          a.spec().name(),
          Instant.ofEpochMilli(due),
          a.spec().grain());
      return;
    }
    n.incrementAndGet();
    // no idempotency key: the tick's claim already makes it fire once
    var d = deliveries.deliver(
        target.get(), input, source(a), null, Ids.newId(), Deliveries.Unsent.RETRIED_HERE);
    if (d.isEmpty()) {
      n.decrementAndGet();
      return;
    }
    LOG.info(
        "[app {}] timer {} fired tick {} as execution {}",
        a.appName(),
        a.spec().name(),
        Instant.ofEpochMilli(due),
        d.get().firstExecutionId());
    d.get().done().whenComplete((r, e) -> n.decrementAndGet());
  }

  /** The tick's winner reads the trigger once more (one read per tick in the cluster), so a delete stops it at once. */
  private boolean stillThere(TriggerSet.Armed a) {
    try {
      return store.triggers().triggers(a.appId()).stream()
          .anyMatch(t -> t.name().equals(a.spec().name())
              && TriggerSpec.stored(a.appId(), t.name(), t.spec())
                  .json()
                  .equals(a.spec().json()));
    } catch (RuntimeException e) {
      return true; // Cassandra slow for this read: the claim above answered, fire as read before
    }
  }

  private static String source(TriggerSet.Armed a) {
    return "timer:" + a.spec().name();
  }
}
