package sand.hostagent.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import sand.contracts.ElasticPlacement;
import sand.contracts.LoadReport;

/**
 * The scheduler's decision for one application (docs/operations.md "Elastic placement"): on which hosts it should
 * run now, and why, from where it runs, the hosts' load reports and what the scheduler remembers of it. No I/O: the
 * {@link Scheduler} reads, decides with this, and writes.
 *
 * <p>In order: a placed host that failed or drains is dropped; below {@code min_hosts} the best free host is added;
 * when its events queue ({@code scale.out.queued} per host at two looks in a row, or queued on a saturated host) one
 * host is added, up to {@code max_hosts}, not sooner than {@code settle} after its last change; when it has been idle
 * ({@link LoadReport.AppLoad#busy()} zero and no new event on any of its hosts) for {@code scale_in_after_s}, the host
 * added last is taken away, down to {@code min_hosts}. The best free host is a live, schedulable one whose memory
 * available holds the application's sandbox (its {@code sandbox_memory_mb}, the limit it may grow to), least busy
 * first: lowest CPU, fewest sandboxes, most memory available (a host without a report last).
 */
public final class Placement {
  /** What the scheduler remembers of one application between looks (lost on failover: the next one starts anew). */
  static final class Memory {
    int queueingLooks;
    long events = -1;
    Instant idleSince;
    Instant changedAt = Instant.MIN;
  }

  /** The cluster as the scheduler sees it at one look. */
  record Cluster(
      Set<String> live,
      Set<String> schedulable,
      Set<String> draining,
      Map<String, LoadReport> loads) {}

  /** A new placement and its reason; {@code direction} is "out", "in" or "replace" (the metrics' label). */
  record Decision(List<String> hosts, String reason, String direction) {}

  private Placement() {}

  /**
   * @param sandboxMb the application's {@code sandbox_memory_mb}: a host with less memory available gets no sandbox
   *                  of it
   */
  static Optional<Decision> decide(
      String appId,
      ElasticPlacement want,
      long sandboxMb,
      List<String> placed,
      Cluster cluster,
      Memory memory,
      SchedulerSettings settings,
      Instant now) {
    List<String> hosts = new ArrayList<>();
    List<String> gone = new ArrayList<>();
    for (String h : placed.isEmpty()
        ? sorted(cluster.live())
        : placed) { // none yet: every live host, as before
      if (cluster.live().contains(h) && !cluster.draining().contains(h)) {
        hosts.add(h);
      } else {
        gone.add(h);
      }
    }
    List<String> reasons = new ArrayList<>();
    if (!gone.isEmpty()) {
      reasons.add(gone + " failed or drain");
    }
    while (hosts.size() < want.minHosts()) {
      Optional<String> next = best(hosts, cluster, sandboxMb);
      if (next.isEmpty()) {
        break;
      }
      hosts.add(next.get());
      reasons.add("below min_hosts=" + want.minHosts() + ": " + next.get() + " added");
    }
    int queued = 0;
    int busy = 0;
    long events = 0;
    boolean saturated = false;
    for (String h : hosts) {
      LoadReport r = cluster.loads().get(h);
      if (r == null) {
        continue;
      }
      LoadReport.AppLoad a = r.app(appId);
      queued += a.queued();
      busy += a.busy();
      events += a.events();
      saturated |= a.queued() > 0 && r.cpuPercent() >= settings.saturatedCpu();
    }
    boolean queueing = queued >= settings.scaleOutQueued() * Math.max(1, hosts.size()) || saturated;
    memory.queueingLooks = queueing ? memory.queueingLooks + 1 : 0;
    boolean idle = busy == 0 && events == memory.events;
    if (!idle || memory.idleSince == null) {
      memory.idleSince = now;
    }
    memory.events = events;
    String direction = reasons.isEmpty() ? null : "replace";
    if (reasons.isEmpty()
        && memory.queueingLooks >= 2
        && hosts.size() < want.maxHosts()
        && !now.isBefore(memory.changedAt.plus(settings.settle()))) {
      Optional<String> next = best(hosts, cluster, sandboxMb);
      if (next.isPresent()) {
        hosts.add(next.get());
        reasons.add(queued + " events queued on " + (hosts.size() - 1) + " host(s)"
            + (saturated ? ", one saturated" : "") + " (scale.out.queued="
            + settings.scaleOutQueued() + " per host): " + next.get() + " added");
        direction = "out";
        memory.queueingLooks = 0;
      }
    }
    Duration idleFor = Duration.between(memory.idleSince, now);
    if (reasons.isEmpty()
        && hosts.size() > want.minHosts()
        && idleFor.compareTo(want.scaleInAfter()) >= 0
        && !now.isBefore(memory.changedAt.plus(want.scaleInAfter()))) {
      String last = hosts.remove(hosts.size() - 1);
      reasons.add("idle for " + idleFor.toSeconds() + " s (scale_in_after_s="
          + want.scaleInAfter().toSeconds() + "): " + last + " removed");
      direction = "in";
      memory.idleSince = now;
    }
    if (reasons.isEmpty() || hosts.equals(placed)) {
      return Optional.empty();
    }
    memory.changedAt = now;
    return Optional.of(new Decision(List.copyOf(hosts), String.join("; ", reasons), direction));
  }

  /**
   * The best host not yet in {@code hosts}: live, schedulable, with {@code sandboxMb} available (or no report of it),
   * least busy; empty when there is none.
   */
  static Optional<String> best(List<String> hosts, Cluster cluster, long sandboxMb) {
    Comparator<String> reported = Comparator.comparing(h -> !cluster.loads().containsKey(h));
    Comparator<String> order = reported
        .thenComparingDouble(
            (String h) -> load(cluster, h).map(LoadReport::cpuPercent).orElse(0.0))
        .thenComparingInt(h -> load(cluster, h).map(LoadReport::sandboxes).orElse(0))
        .thenComparingLong(
            h -> -load(cluster, h).map(LoadReport::memoryAvailableMb).orElse(0L))
        .thenComparing(h -> h);
    return cluster.schedulable().stream()
        .filter(h -> cluster.live().contains(h) && !hosts.contains(h))
        .filter(h -> load(cluster, h)
            .map(r -> r.memoryAvailableMb() <= 0 || r.memoryAvailableMb() >= sandboxMb)
            .orElse(true)) // not reported (yet): taken last, as before
        .min(order);
  }

  private static Optional<LoadReport> load(Cluster cluster, String host) {
    return Optional.ofNullable(cluster.loads().get(host));
  }

  private static List<String> sorted(Set<String> hosts) {
    return hosts.stream().sorted().toList();
  }
}
