package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The cluster store contract against the real Cassandra started by `make up` (runs with -Dsand.it=true), in a
 * throwaway keyspace dropped at the end; {@link InMemoryClusterStoreTest} runs the same tests against the fake.
 */
class CassandraClusterStoreTest implements HostAgentTablesContract, FrontendTablesContract {
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
        // a schema change on a busy single node can take longer than the session's 10 s
        s.execute(SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS " + KS).setTimeout(Duration.ofSeconds(60)));
      }
    }
  }

  @Override
  public ClusterStore store() {
    return store;
  }

  @Test
  void anotherProcessReadsTheSameClusterSecret() {
    byte[] mine = store.clusterSecret();
    try (CassandraClusterStore other = CassandraClusterStore.connect(CASSANDRA, "datacenter1", KS, 1)) {
      assertArrayEquals(mine, other.clusterSecret());
    }
  }
}
