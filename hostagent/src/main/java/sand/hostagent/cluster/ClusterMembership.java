package sand.hostagent.cluster;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables;
import sand.cluster.HostLoads;

/**
 * This host's membership in the cluster: registers the host, then heartbeats. A host whose heartbeat is
 * older than {@code failAfter} is considered failed (its Kafka partitions move to the others through the
 * consumer group; this table is what frontends and operators see). A heartbeat that cannot be written
 * (Cassandra down) is retried at the next beat; the agent keeps running.
 */
public final class ClusterMembership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterMembership.class);

  private final HostAgentTables store;
  private final HostAgentTables.HostInfo self;
  private final Clock clock;
  private final Duration failAfter;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "heartbeat");
    t.setDaemon(true);
    return t;
  });
  private volatile boolean registered;
  private volatile Supplier<String> load;
  /** The live hosts as last read (at each beat); null while unknown (not read yet, or the read failed). */
  private volatile Set<String> lastLive;

  public ClusterMembership(
      HostAgentTables store, HostAgentTables.HostInfo self, Clock clock, Duration failAfter) {
    this.store = store;
    this.self = self;
    this.clock = clock;
    this.failAfter = failAfter;
  }

  /** Report this host's load (a JSON object) with each heartbeat ({@link sand.cluster.HostLoads}). */
  public ClusterMembership reportingLoad(Supplier<String> load) {
    this.load = load;
    return this;
  }

  /** Register now and heartbeat every {@code period}. */
  public ClusterMembership start(Duration period) {
    beat();
    timer.scheduleAtFixedRate(
        this::beat, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  void beat() {
    Instant now = clock.instant();
    try {
      if (!registered) {
        store.upsertHost(new HostAgentTables.HostInfo(
            self.hostId(),
            self.busAddress(),
            self.dataAddress(),
            self.gateAddress(),
            self.capacity(),
            self.memoryMb(),
            self.started(),
            now));
        registered = true;
        LOG.info("[host {}] joined the cluster", self.hostId());
      } else {
        store.heartbeat(self.hostId(), now);
      }
    } catch (RuntimeException e) {
      LOG.warn(
          "[host {}] heartbeat failed, retrying at the next beat: {}", self.hostId(), e.toString());
    }
    refreshLive();
    reportLoad(now);
  }

  private void reportLoad(Instant now) {
    Supplier<String> l = load;
    if (l == null) {
      return;
    }
    try {
      store.hostLoads().report(new HostLoads.HostLoad(self.hostId(), l.get(), now));
    } catch (RuntimeException e) {
      LOG.debug("[host {}] load not reported: {}", self.hostId(), e.toString());
    }
  }

  private void refreshLive() {
    try {
      Set<String> live = liveHostIds();
      lastLive = live.contains(self.hostId())
          ? Set.copyOf(live)
          : null; // without this host: not a view to trust
    } catch (RuntimeException e) {
      lastLive = null;
      LOG.debug("[host {}] cannot read the live hosts: {}", self.hostId(), e.toString());
    }
  }

  /**
   * True when {@code hostId} is known to have failed: the live hosts as read at the last beat (this host
   * among them) do not include it. False when that cannot be told (no successful read yet, the cluster
   * state unreadable). Cheap: no read of the cluster state.
   */
  public boolean knownFailed(String hostId) {
    Set<String> live = lastLive;
    return live != null && !live.contains(hostId);
  }

  /** The ids of the hosts alive now (this one included once registered). */
  public Set<String> liveHostIds() {
    return liveHosts().stream().map(HostAgentTables.HostInfo::hostId).collect(Collectors.toSet());
  }

  /** The hosts alive now (this one included once registered). */
  public List<HostAgentTables.HostInfo> liveHosts() {
    return store.liveHosts(clock.instant(), failAfter);
  }

  /** Leave the cluster: stop beating and remove this host's row (a clean stop is not a failure). */
  @Override
  public void close() {
    timer.shutdownNow();
    try {
      store.removeHost(self.hostId());
      LOG.info("[host {}] left the cluster", self.hostId());
    } catch (RuntimeException e) {
      LOG.warn(
          "[host {}] could not remove its row; it will look failed after {}",
          self.hostId(),
          failAfter);
    }
  }
}
