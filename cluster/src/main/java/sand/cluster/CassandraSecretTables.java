package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** {@link SecretTables} in Cassandra: one partition per application, a row per secret, the value sealed. */
final class CassandraSecretTables implements SecretTables {
  private final CqlSession session;
  private final PreparedStatement put;
  private final PreparedStatement all;
  private final PreparedStatement deleteOne;
  private final PreparedStatement deleteAll;

  static void createSchema(CqlSession s, String ks) {
    s.execute("CREATE TABLE IF NOT EXISTS " + ks + ".app_secrets (app_id text, name text, "
        + "sealed blob, updated timestamp, PRIMARY KEY (app_id, name))");
  }

  CassandraSecretTables(CqlSession session, String ks) {
    this.session = session;
    put = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".app_secrets (app_id, name, sealed, updated) VALUES (?, ?, ?, ?)");
    all = Statements.prepare(
        session,
        "SELECT app_id, name, sealed, updated FROM " + ks + ".app_secrets WHERE app_id = ?");
    deleteOne = Statements.prepare(
        session, "DELETE FROM " + ks + ".app_secrets WHERE app_id = ? AND name = ? IF EXISTS");
    deleteAll = Statements.prepare(session, "DELETE FROM " + ks + ".app_secrets WHERE app_id = ?");
  }

  @Override
  public void putSecret(StoredSecret s) {
    session.execute(put.bind(s.appId(), s.name(), ByteBuffer.wrap(s.sealed()), s.updated()));
  }

  @Override
  public List<StoredSecret> secrets(String appId) {
    List<StoredSecret> out = new ArrayList<>();
    for (Row r : session.execute(all.bind(appId))) {
      ByteBuffer b = r.getByteBuffer("sealed");
      byte[] sealed = new byte[b == null ? 0 : b.remaining()];
      if (b != null) {
        b.get(sealed);
      }
      out.add(new StoredSecret(
          r.getString("app_id"), r.getString("name"), sealed, r.getInstant("updated")));
    }
    return out;
  }

  @Override
  public boolean deleteSecret(String appId, String name) {
    return session.execute(deleteOne.bind(appId, name)).wasApplied();
  }

  @Override
  public void deleteSecrets(String appId) {
    session.execute(deleteAll.bind(appId));
  }
}
