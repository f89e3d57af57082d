package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.nio.ByteBuffer;
import java.security.SecureRandom;

/** The cluster secret's row in Cassandra ({@link HostAgentTables#clusterSecret()}). */
final class CassandraClusterSecret {
  private CassandraClusterSecret() {}

  static byte[] readOrMake(CqlSession session, String keyspace) {
    // Read first: once made (the first start of the cluster), no Paxos round per process start.
    // Made by the first
    // writer (a lightweight transaction), everyone reading back the winner; a round whose result is
    // unknown (Paxos
    // contention as every process starts at once, a replica that just died) is simply tried again,
    // since the loop
    // reads back whatever won.
    DriverException last = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        byte[] known = read(session, keyspace, DefaultConsistencyLevel.QUORUM);
        if (known != null) {
          return known;
        }
        session.execute(SimpleStatement.newInstance(
                "INSERT INTO " + keyspace
                    + ".cluster_secrets (name, value) VALUES ('execution_tag', ?) IF NOT EXISTS",
                ByteBuffer.wrap(new SecureRandom().generateSeed(32)))
            .setConsistencyLevel(DefaultConsistencyLevel.QUORUM));
        byte[] won = read(session, keyspace, DefaultConsistencyLevel.SERIAL);
        if (won != null) {
          return won;
        }
      } catch (DriverException e) {
        last = e;
      }
      try {
        Thread.sleep(200L << attempt);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    throw new IllegalStateException(
        "cannot read or make the cluster secret; is Cassandra healthy? " + last, last);
  }

  private static byte[] read(CqlSession session, String keyspace, DefaultConsistencyLevel cl) {
    Row r = session
        .execute(SimpleStatement.newInstance(
                "SELECT value FROM " + keyspace + ".cluster_secrets WHERE name = 'execution_tag'")
            .setConsistencyLevel(cl))
        .one();
    if (r == null) {
      return null;
    }
    ByteBuffer b = r.getByteBuffer("value");
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }
}
