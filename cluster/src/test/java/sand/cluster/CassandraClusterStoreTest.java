package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.datastax.oss.driver.api.core.CqlSession;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Integration test against the real Cassandra started by `make up` (runs with -Dsand.it=true). */
class CassandraClusterStoreTest {
  private static final InetSocketAddress CASSANDRA = new InetSocketAddress("127.0.0.1",
      Integer.parseInt(System.getenv().getOrDefault("SAND_CASSANDRA_PORT", "9042")));
  private static final String KS = "sand_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  private static CassandraClusterStore store;

  @BeforeAll
  static void connect() {
    Assumptions.assumeTrue(Boolean.getBoolean("sand.it"), "integration test: needs make up (-Dsand.it=true)");
    store = CassandraClusterStore.connect(CASSANDRA, "datacenter1", KS, 1);
  }

  @AfterAll
  static void drop() {
    if (store != null) {
      store.close();
      try (CqlSession s = CassandraClusterStore.session(CASSANDRA, "datacenter1")) {
        s.execute("DROP KEYSPACE IF EXISTS " + KS);
      }
    }
  }

  @Test
  void frontendsHeartbeatsRoundTrip() {
    Instant beat = Instant.parse("2026-11-23T10:00:00Z");
    store.frontendHeartbeat("fe-it-1", beat);
    store.frontendHeartbeat("fe-it-1", beat.plusSeconds(2));
    assertEquals(List.of(new FrontendTables.FrontendInfo("fe-it-1", beat.plusSeconds(2))), store.frontends().stream()
        .filter(f -> f.frontendId().equals("fe-it-1")).toList());
  }

  @Test
  void hostsApplicationsStatesAndLogsRoundTrip() {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    store.upsertHost(new HostAgentTables.HostInfo("h1", "127.0.0.1:9190", "127.0.0.1:9191", "127.0.0.1:9192", 8, now, now));
    store.upsertHost(new HostAgentTables.HostInfo("h2", "b", "d", "", 8, now, now.minusSeconds(60)));
    assertEquals(List.of("h1"), store.liveHosts(now, Duration.ofSeconds(10)).stream()
        .map(HostAgentTables.HostInfo::hostId).toList());

    byte[] code = "def handle(e, c):\n    return e\n".getBytes(StandardCharsets.UTF_8);
    store.putApplication(new HostAgentTables.ApplicationRecord("a1b2", "hello", "dev", "{\"name\":\"hello\"}", "",
        "{}", 1, "undeployed", List.of()), Map.of("greet", new HostAgentTables.GrainCode("greet", code, "py", "x")));
    store.setDesired("a1b2", "deployed", List.of("h1"));
    assertTrue(store.applications().get(0).wantedOn("h1"));
    assertEquals("hello", store.application("a1b2").orElseThrow().name());
    assertArrayEquals(code, store.applicationCode("a1b2").get("greet").code());
    assertTrue(store.application("nope").isEmpty());

    store.setAppHostState("a1b2", "h1", "failed", "pip: no matching distribution", now);
    assertEquals("pip: no matching distribution", store.appHostStates("a1b2").get(0).error());

    store.appendLogs(List.of(new HostAgentTables.LogLine("x1", 2, 0, "greet", "INFO", "second"),
        new HostAgentTables.LogLine("x1", 1, 0, "greet", "INFO", "first")), Duration.ofMinutes(5));
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (store.logs("x1").size() < 2 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertEquals(List.of("first", "second"), store.logs("x1").stream().map(HostAgentTables.LogLine::text).toList());
    // A page is read with LIMIT after its cursor (ts, seq), not by reading every line of the execution.
    assertEquals(List.of("first"), store.logs("x1", Long.MIN_VALUE, Integer.MIN_VALUE, 1).stream()
        .map(HostAgentTables.LogLine::text).toList());
    assertEquals(List.of("second"), store.logs("x1", 1, 0, 5).stream().map(HostAgentTables.LogLine::text).toList());
    assertEquals(List.of(), store.logs("x1", 2, 0, 5));
  }

  @Test
  void frontendTablesClaimOnceAndFinishOnce() {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    assertTrue(store.createAccount(new FrontendTables.Account("alice", "k1", now)));
    assertFalse(store.createAccount(new FrontendTables.Account("alice", "k2", now)), "a name is claimed once");
    assertEquals("alice", store.accountByKey("k1").orElseThrow());
    assertTrue(store.accountByKey("k2").isEmpty());

    byte[] v1 = "a".getBytes(StandardCharsets.UTF_8);
    assertTrue(store.putGrainVersion(new FrontendTables.GrainVersion("alice", "g", 1, v1, "py", "s1", 1, now)));
    assertFalse(store.putGrainVersion(new FrontendTables.GrainVersion("alice", "g", 1, v1, "py", "s1", 1, now)));
    assertTrue(store.putGrainVersion(new FrontendTables.GrainVersion("alice", "g", 2, v1, "zip", "s2", 1, now)));
    assertEquals(2, store.latestGrain("alice", "g").orElseThrow().version());
    assertEquals(List.of("g"), store.grains("alice").stream().map(FrontendTables.GrainVersion::name).toList());
    assertTrue(store.grains("bob").isEmpty());
    store.deleteGrain("alice", "g");
    assertTrue(store.latestGrain("alice", "g").isEmpty());

    var claim = new FrontendTables.AppName("shop", "a000000000001", "alice", 0);
    assertEquals(claim, store.claimAppName(claim));
    assertEquals("alice", store.claimAppName(new FrontendTables.AppName("shop", "a000000000002", "bob", 0)).owner());
    store.setRequestTimeout("shop", 7);
    assertEquals(7, store.appName("shop").orElseThrow().requestTimeoutS());
    store.releaseAppName("shop");
    assertTrue(store.appName("shop").isEmpty());

    byte[] code = "x".getBytes(StandardCharsets.UTF_8);
    store.putApplication(new HostAgentTables.ApplicationRecord("a000000000001", "shop", "alice", "{}", "", "{}", 1,
        "deployed", List.of()), Map.of("old", new HostAgentTables.GrainCode("old", code, "py", "o")));
    store.replaceApplicationCode("a000000000001", Map.of("new", new HostAgentTables.GrainCode("new", code, "py", "n")));
    assertEquals(java.util.Set.of("new"), store.applicationCode("a000000000001").keySet());
    store.setAppHostState("a000000000001", "h1", "deployed", null, now);
    store.deleteApplication("a000000000001");
    assertTrue(store.application("a000000000001").isEmpty());
    assertTrue(store.applicationCode("a000000000001").isEmpty());
    assertTrue(store.appHostStates("a000000000001").isEmpty());

    java.time.Duration ttl = java.time.Duration.ofHours(1);
    long arrived = now.toEpochMilli() * 1000;
    // Writes in the worst order: the second result first, then the first, a timeout, and the start last.
    store.endExecution("e1", "succeeded", "{\"ok\":2}", null, now, "[]", FrontendTables.resultRank(arrived + 5), ttl);
    store.endExecution("e1", "succeeded", "{\"ok\":1}", null, now, "[[\"frontend\",\"fe\",1]]",
        FrontendTables.resultRank(arrived), ttl);
    store.endExecution("e1", "timeout", null, "no result", now, null, FrontendTables.RANK_TIMEOUT, ttl);
    store.startExecution(new FrontendTables.ExecutionRecord("e1", "a1", "alice", "running", null, null, now, null, "fe",
        null), ttl);
    FrontendTables.ExecutionRecord e = store.execution("e1").orElseThrow();
    assertEquals("succeeded", e.status(), "the first result wins, whatever order the writes arrived in");
    assertEquals("{\"ok\":1}", e.result());
    assertEquals("[[\"frontend\",\"fe\",1]]", e.timings());
    assertEquals("alice", e.owner());

    // A synchronous request: start and end in one write; a later timeout does not replace its result.
    store.recordExecution(new FrontendTables.ExecutionRecord("e2", "a1", "bob", "running", null, null, now, null, "fe",
        null), "succeeded", "{\"ok\":3}", null, now, "[]", FrontendTables.resultRank(arrived), ttl);
    store.endExecution("e2", "timeout", null, "no result", now, null, FrontendTables.RANK_TIMEOUT, ttl);
    FrontendTables.ExecutionRecord e2 = store.execution("e2").orElseThrow();
    assertEquals("succeeded", e2.status());
    assertEquals("{\"ok\":3}", e2.result());
    assertEquals("bob", e2.owner());
    assertEquals("a1", e2.appId());
  }
}
