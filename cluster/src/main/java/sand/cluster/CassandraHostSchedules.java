package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.util.Map;
import java.util.TreeMap;

/** {@link HostSchedules} in Cassandra: a row per cordoned or draining host (few: one table scan is fine). */
final class CassandraHostSchedules implements HostSchedules {
  private final CqlSession session;
  private final PreparedStatement put;
  private final PreparedStatement all;
  private final PreparedStatement delete;
  private final PreparedStatement deleteAppHost;

  static void createSchema(CqlSession s, String ks) {
    s.execute("CREATE TABLE IF NOT EXISTS " + ks + ".host_schedules (host_id text PRIMARY KEY, "
        + "state text, reason text, since timestamp)");
  }

  CassandraHostSchedules(CqlSession session, String ks) {
    this.session = session;
    put = Statements.prepare(
        session,
        "INSERT INTO " + ks
            + ".host_schedules (host_id, state, reason, since) VALUES (?, ?, ?, ?)");
    all = Statements.prepare(
        session, "SELECT host_id, state, reason, since FROM " + ks + ".host_schedules");
    delete = Statements.prepare(session, "DELETE FROM " + ks + ".host_schedules WHERE host_id = ?");
    deleteAppHost = Statements.prepare(
        session, "DELETE FROM " + ks + ".app_hosts WHERE app_id = ? AND host_id = ?");
  }

  @Override
  public Map<String, HostSchedule> all() {
    Map<String, HostSchedule> out = new TreeMap<>();
    for (Row r : session.execute(all.bind())) {
      String state = r.getString("state");
      if (CORDONED.equals(state)
          || DRAINING.equals(state)) { // a row from a later version: not ours
        out.put(
            r.getString("host_id"),
            new HostSchedule(
                r.getString("host_id"), state, r.getString("reason"), r.getInstant("since")));
      }
    }
    return out;
  }

  @Override
  public void set(HostSchedule s) {
    session.execute(put.bind(s.hostId(), s.state(), s.reason(), s.since()));
  }

  @Override
  public void clear(String hostId) {
    session.execute(delete.bind(hostId));
  }

  /** The row of one application on one host (a host removed from the cluster). */
  void deleteAppHostState(String appId, String hostId) {
    session.execute(deleteAppHost.bind(appId, hostId));
  }
}
