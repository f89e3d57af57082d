package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The cluster store contract against the real Cassandra started by `make up` (runs with -Dsand.it=true), in a
 * throwaway keyspace dropped at the end; {@link InMemoryClusterStoreTest} runs the same tests against the fake.
 */
class CassandraClusterStoreTest
    implements HostAgentTablesContract,
        FrontendTablesContract,
        ApplicationRecordsContract,
        SecretTablesContract,
        EndpointTablesContract,
        TriggerTablesContract {
  private static final InetSocketAddress CASSANDRA = new InetSocketAddress(
      "127.0.0.1", Integer.parseInt(System.getenv().getOrDefault("SAND_CASSANDRA_PORT", "9042")));
  private static final String KS =
      "sand_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  private static CassandraClusterStore store;

  @BeforeAll
  static void connect() {
    Assumptions.assumeTrue(
        Boolean.getBoolean("sand.it"), "integration test: needs make up (-Dsand.it=true)");
    store = CassandraClusterStore.connect(CASSANDRA, "datacenter1", KS, 1);
  }

  @AfterAll
  static void drop() {
    if (Boolean.getBoolean(
        "sand.it")) { // also when connect timed out half-way through creating the schema
      if (store != null) {
        store.close();
      }
      try (CqlSession s = CassandraClusterStore.session(CASSANDRA, "datacenter1")) {
        // a schema change on a busy single node can take longer than the session's 10 s
        s.execute(SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS " + KS)
            .setTimeout(Duration.ofSeconds(60)));
      }
    }
  }

  @Override
  public ClusterStore store() {
    return store;
  }

  /** Cassandra only: the fake keeps log lines and executions for ever (docs/testing.md). */
  @Test
  void logLinesAndExecutionsExpireAfterTheirTimeToLive() throws InterruptedException {
    String x = HostAgentTablesContract.uid("ttl");
    Instant now = HostAgentTablesContract.now();
    store.appendLogs(
        List.of(new HostAgentTables.LogLine(x, 1, 0, "g", "INFO", "short-lived")),
        Duration.ofSeconds(1));
    store.recordExecution(
        new FrontendTables.ExecutionRecord(
            x, x, "alice", "running", null, null, now, null, "fe", null),
        "succeeded",
        "{}",
        null,
        now,
        null,
        FrontendTables.resultRank(1),
        Duration.ofSeconds(1));
    long deadline = System.nanoTime() + 10_000_000_000L;
    while ((!store.logs(x).isEmpty()
            || store.execution(x).isPresent()
            || !store.recentExecutions(x, now, 1).isEmpty())
        && System.nanoTime() < deadline) {
      Thread.sleep(200);
    }
    assertEquals(List.of(), store.logs(x));
    assertTrue(store.execution(x).isEmpty());
    assertEquals(List.of(), store.recentExecutions(x, now, 1));
  }

  @Test
  void anotherProcessReadsTheSameClusterSecret() {
    byte[] mine = store.clusterSecret();
    try (CassandraClusterStore other =
        CassandraClusterStore.connect(CASSANDRA, "datacenter1", KS, 1)) {
      assertArrayEquals(mine, other.clusterSecret());
    }
  }
}
