package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/** {@link ClusterSecrets} in Cassandra's {@code cluster_secrets} (name, value). */
final class CassandraClusterSecrets implements ClusterSecrets {
  private final CqlSession session;
  private final String table;

  CassandraClusterSecrets(CqlSession session, String keyspace) {
    this.session = session;
    this.table = keyspace + ".cluster_secrets";
  }

  @Override
  public Map<String, Row> rows() {
    Map<String, Row> out = new HashMap<>();
    for (com.datastax.oss.driver.api.core.cql.Row r : session.execute(
        SimpleStatement.newInstance("SELECT name, value, writetime(value) AS written FROM " + table)
            .setConsistencyLevel(DefaultConsistencyLevel.QUORUM))) {
      ByteBuffer b = r.getByteBuffer("value");
      if (b == null) {
        continue;
      }
      byte[] value = new byte[b.remaining()];
      b.get(value);
      long us = r.getLong("written");
      out.put(
          r.getString("name"),
          new Row(value, Instant.ofEpochSecond(us / 1_000_000, (us % 1_000_000) * 1000)));
    }
    return out;
  }

  @Override
  public boolean putIfAbsent(String name, byte[] value) {
    return session
        .execute(SimpleStatement.newInstance(
                "INSERT INTO " + table + " (name, value) VALUES (?, ?) IF NOT EXISTS",
                name,
                ByteBuffer.wrap(value))
            .setConsistencyLevel(DefaultConsistencyLevel.QUORUM))
        .wasApplied();
  }

  @Override
  public void promote(byte[] current, byte[] next) {
    session.execute(BatchStatement.newInstance(
            DefaultBatchType.LOGGED,
            SimpleStatement.newInstance(
                "INSERT INTO " + table + " (name, value) VALUES (?, ?)",
                PREVIOUS,
                ByteBuffer.wrap(current)),
            SimpleStatement.newInstance(
                "INSERT INTO " + table + " (name, value) VALUES (?, ?)",
                CURRENT,
                ByteBuffer.wrap(next)),
            SimpleStatement.newInstance("DELETE FROM " + table + " WHERE name = ?", NEXT))
        .setConsistencyLevel(DefaultConsistencyLevel.QUORUM));
  }

  @Override
  public void delete(String name) {
    session.execute(SimpleStatement.newInstance("DELETE FROM " + table + " WHERE name = ?", name)
        .setConsistencyLevel(DefaultConsistencyLevel.QUORUM));
  }
}
