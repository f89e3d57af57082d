package sand.hostagent.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.InMemoryClusterStore;
import sand.common.testing.ManualClock;

class ClusterMembershipTest {
  private final ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"));

  private ClusterMembership member(ClusterStore store, String id) {
    return new ClusterMembership(
        store,
        new HostAgentTables.HostInfo(
            id, "bus", "data", "gate", 4, 2048, clock.instant(), clock.instant()),
        clock,
        Duration.ofSeconds(10));
  }

  @Test
  void aHostWithoutHeartbeatIsConsideredFailed() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    ClusterMembership a = member(store, "a");
    ClusterMembership b = member(store, "b");
    a.beat();
    b.beat();
    assertEquals(2, a.liveHosts().size());
    assertEquals(2048, a.liveHosts().get(0).memoryMb(), "the host's memory is registered with it");
    clock.advance(Duration.ofSeconds(8));
    a.beat(); // b stops beating
    assertEquals(2, a.liveHosts().size());
    clock.advance(Duration.ofSeconds(3)); // 11 s after b's last beat
    assertEquals("a", a.liveHosts().get(0).hostId());
    assertEquals(1, a.liveHosts().size());
  }

  @Test
  void aCleanStopRemovesTheHost() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    ClusterMembership a = member(store, "a");
    a.beat();
    a.close();
    assertTrue(store.liveHosts(clock.instant(), Duration.ofSeconds(10)).isEmpty());
  }

  @Test
  void aFailedHeartbeatDoesNotStopTheAgent() {
    InMemoryClusterStore broken = new InMemoryClusterStore() {
      @Override
      public void upsertHost(HostInfo host) {
        throw new IllegalStateException("Cassandra is down");
      }
    };
    ClusterMembership a = member(broken, "a");
    a.beat(); // logged, not thrown
    assertTrue(a.liveHosts().isEmpty());
  }

  @Test
  void aHostIsKnownFailedOnlyWhenTheLastReadOfTheLiveHostsSaysSo() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    ClusterMembership a = member(store, "a");
    ClusterMembership b = member(store, "b");
    assertFalse(a.knownFailed("b"), "nothing read yet: cannot tell");
    b.beat();
    a.beat();
    assertFalse(a.knownFailed("b"));
    assertFalse(a.knownFailed("a"));
    clock.advance(Duration.ofSeconds(11)); // b stops beating
    a.beat();
    assertTrue(a.knownFailed("b"));
    assertTrue(a.knownFailed("never-seen"));
    assertFalse(a.knownFailed("a"));
  }

  @Test
  void noHostIsKnownFailedWhileTheClusterStateIsUnreadable() {
    InMemoryClusterStore broken = new InMemoryClusterStore() {
      @Override
      public List<HostInfo> liveHosts(Instant at, Duration maxAge) {
        throw new IllegalStateException("Cassandra is down");
      }
    };
    ClusterMembership a = member(broken, "a");
    a.beat();
    assertFalse(a.knownFailed("b"));
  }

  /** Issue 33: each heartbeat carries the host's load, what placement by load reads. */
  @Test
  void eachBeatReportsTheHostsLoad() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    int[] asked = {0};
    ClusterMembership a =
        member(store, "a").reportingLoad(() -> "{\"sandboxes\": " + ++asked[0] + "}");
    a.beat();
    clock.advance(Duration.ofSeconds(2));
    a.beat();
    var load = store.hostLoads().all().get("a");
    assertEquals("{\"sandboxes\": 2}", load.load());
    assertEquals(clock.instant(), load.at());
  }
}
