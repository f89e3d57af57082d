package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import sand.cluster.ApplicationRecords.AppRecord;

/** {@link ApplicationRecords} in the table {@code app_records}: partition (app_id, kind), clustered by id. */
final class CassandraApplicationRecords {
  private final CqlSession session;
  private final PreparedStatement put;
  private final PreparedStatement get;
  private final PreparedStatement list;
  private final PreparedStatement delete;
  private final PreparedStatement deleteAll;

  static void createSchema(CqlSession s, String ks) {
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks
            + ".app_records (app_id text, kind text, id text, value blob, PRIMARY KEY ((app_id, kind), id))");
  }

  CassandraApplicationRecords(CqlSession session, String ks) {
    this.session = session;
    put = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".app_records (app_id, kind, id, value) VALUES (?, ?, ?, ?)");
    get = Statements.prepare(
        session,
        "SELECT id, value FROM " + ks + ".app_records WHERE app_id = ? AND kind = ? AND id = ?");
    list = Statements.prepare(
        session, "SELECT id, value FROM " + ks + ".app_records WHERE app_id = ? AND kind = ?");
    delete = Statements.prepare(
        session, "DELETE FROM " + ks + ".app_records WHERE app_id = ? AND kind = ? AND id = ?");
    deleteAll = Statements.prepare(
        session, "DELETE FROM " + ks + ".app_records WHERE app_id = ? AND kind = ?");
  }

  void put(AppRecord r) {
    session.execute(put.bind(r.appId(), r.kind(), r.id(), ByteBuffer.wrap(r.value())));
  }

  Optional<AppRecord> get(String appId, String kind, String id) {
    Row r = session.execute(get.bind(appId, kind, id)).one();
    return r == null ? Optional.empty() : Optional.of(record(appId, kind, r));
  }

  List<AppRecord> list(String appId, String kind) {
    List<AppRecord> out = new ArrayList<>();
    for (Row r : session.execute(list.bind(appId, kind))) {
      out.add(record(appId, kind, r));
    }
    return out;
  }

  void delete(String appId, String kind, String id) {
    session.execute(delete.bind(appId, kind, id));
  }

  void deleteAll(String appId, String kind) {
    session.execute(deleteAll.bind(appId, kind));
  }

  private static AppRecord record(String appId, String kind, Row r) {
    ByteBuffer b = r.getByteBuffer("value");
    byte[] v = new byte[b == null ? 0 : b.remaining()];
    if (b != null) {
      b.get(v);
    }
    return new AppRecord(appId, kind, r.getString("id"), v);
  }
}
