package sand.hostagent;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

/**
 * How long each application has had no event on this host, from the local queues' counters (a grain queue is named
 * {@code app/grain}): an application is idle while none of its queues holds an event and none was published or
 * polled since the last look. Read by one timer thread; cheap (one pass over the queues' snapshot).
 */
final class IdleSandboxes {
  private record Seen(long published, long polled, long sinceNanos) {}

  private static final Logger LOG = LoggerFactory.getLogger(IdleSandboxes.class);
  private final Map<String, Seen> seen = new HashMap<>();

  /**
   * Scale to zero on this host: every second the applications idle past their setting go to their lane ({@code
   * lane}), which stops their sandbox; an event put in a queue of one scaled to zero sends it there to start one.
   */
  static void watch(
      LocalMessageBus bus,
      ApplicationDeployer deployer,
      Consumer<String> lane,
      ScheduledExecutorService timer) {
    bus.onArrival(app -> {
      if (deployer.arrived(app)) {
        lane.accept(app);
      }
    });
    IdleSandboxes idle = new IdleSandboxes();
    timer.scheduleWithFixedDelay(
        () -> {
          try {
            deployer.idleFor(idle.observe(bus.queueStats(), System.nanoTime()), lane);
          } catch (RuntimeException e) {
            LOG.warn(
                "scale to zero: the idle watch failed, looking again in 1 s: {}", e.toString(), e);
          }
        },
        1,
        1,
        TimeUnit.SECONDS);
  }

  /** Look at {@code stats} taken at {@code nowNanos}: each application with queues, and how long it has been idle. */
  synchronized Map<String, Duration> observe(List<QueueStats> stats, long nowNanos) {
    Map<String, long[]> sums = new HashMap<>(); // app -> published, polled, length
    for (QueueStats s : stats) {
      String app = s.application();
      if (app == null) {
        continue; // LQ_HA
      }
      long[] sum = sums.computeIfAbsent(app, a -> new long[3]);
      sum[0] += s.published();
      sum[1] += s.polled();
      sum[2] += s.length();
    }
    seen.keySet().retainAll(sums.keySet());
    Map<String, Duration> idle = new HashMap<>();
    sums.forEach((app, sum) -> {
      Seen before = seen.get(app);
      Seen now =
          before != null && before.published() == sum[0] && before.polled() == sum[1] && sum[2] == 0
              ? before
              : new Seen(sum[0], sum[1], nowNanos);
      seen.put(app, now);
      idle.put(app, sum[2] == 0 ? Duration.ofNanos(nowNanos - now.sinceNanos()) : Duration.ZERO);
    });
    return idle;
  }
}
