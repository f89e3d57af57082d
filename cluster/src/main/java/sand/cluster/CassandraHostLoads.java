package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.util.Map;
import java.util.TreeMap;

/** {@link HostLoads} in Cassandra: a row per host, rewritten at each heartbeat with a TTL (one table scan: few rows). */
final class CassandraHostLoads implements HostLoads {
  private final CqlSession session;
  private final PreparedStatement put;
  private final PreparedStatement all;

  static void createSchema(CqlSession s, String ks) {
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".host_loads (host_id text PRIMARY KEY, load text, at timestamp)");
  }

  CassandraHostLoads(CqlSession session, String ks) {
    this.session = session;
    put = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".host_loads (host_id, load, at) VALUES (?, ?, ?) USING TTL "
            + TTL.toSeconds());
    all = Statements.prepare(session, "SELECT host_id, load, at FROM " + ks + ".host_loads");
  }

  @Override
  public void report(HostLoad l) {
    session.execute(put.bind(l.hostId(), l.load(), l.at()));
  }

  @Override
  public Map<String, HostLoad> all() {
    Map<String, HostLoad> out = new TreeMap<>();
    for (Row r : session.execute(all.bind())) {
      out.put(
          r.getString("host_id"),
          new HostLoad(r.getString("host_id"), r.getString("load"), r.getInstant("at")));
    }
    return out;
  }
}
