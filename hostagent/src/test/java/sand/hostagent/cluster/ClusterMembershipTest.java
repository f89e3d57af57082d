package sand.hostagent.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.InMemoryClusterStore;

class ClusterMembershipTest {
  private final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-01-01T00:00:00Z"));
  private final Clock clock = new Clock() {
    @Override
    public Instant instant() {
      return now.get();
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  };

  private ClusterMembership member(ClusterStore store, String id) {
    return new ClusterMembership(store, new HostAgentTables.HostInfo(id, "bus", "data", "gate", 4, now.get(), now.get()),
        clock, Duration.ofSeconds(10));
  }

  @Test
  void aHostWithoutHeartbeatIsConsideredFailed() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    ClusterMembership a = member(store, "a");
    ClusterMembership b = member(store, "b");
    a.beat();
    b.beat();
    assertEquals(2, a.liveHosts().size());
    now.set(now.get().plusSeconds(8));
    a.beat();                                  // b stops beating
    assertEquals(2, a.liveHosts().size());
    now.set(now.get().plusSeconds(3));         // 11 s after b's last beat
    assertEquals("a", a.liveHosts().get(0).hostId());
    assertEquals(1, a.liveHosts().size());
  }

  @Test
  void aCleanStopRemovesTheHost() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    ClusterMembership a = member(store, "a");
    a.beat();
    a.close();
    assertTrue(store.liveHosts(now.get(), Duration.ofSeconds(10)).isEmpty());
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
    a.beat();                                   // logged, not thrown
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
    now.set(now.get().plusSeconds(11));         // b stops beating
    a.beat();
    assertTrue(a.knownFailed("b"));
    assertTrue(a.knownFailed("never-seen"));
    assertFalse(a.knownFailed("a"));
  }

  @Test
  void noHostIsKnownFailedWhileTheClusterStateIsUnreadable() {
    InMemoryClusterStore broken = new InMemoryClusterStore() {
      @Override
      public java.util.List<HostInfo> liveHosts(Instant at, Duration maxAge) {
        throw new IllegalStateException("Cassandra is down");
      }
    };
    ClusterMembership a = member(broken, "a");
    a.beat();
    assertFalse(a.knownFailed("b"));
  }
}
