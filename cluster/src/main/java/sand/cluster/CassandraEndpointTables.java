package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@link EndpointTables} in Cassandra: a row per application, and a partition of keys per application. */
final class CassandraEndpointTables implements EndpointTables {
  private final CqlSession session;
  private final PreparedStatement putMode;
  private final PreparedStatement putSecret;
  private final PreparedStatement get;
  private final PreparedStatement putKey;
  private final PreparedStatement keys;
  private final PreparedStatement deleteKey;
  private final PreparedStatement deleteKeys;
  private final PreparedStatement deleteAuth;

  static void createSchema(CqlSession s, String ks) {
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".app_endpoint (app_id text PRIMARY KEY, mode text, sealed_secret blob)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks + ".app_invoke_keys (app_id text, id text, "
        + "name text, sha256 text, prefix text, created timestamp, PRIMARY KEY (app_id, id))");
  }

  CassandraEndpointTables(CqlSession session, String ks) {
    this.session = session;
    putMode =
        Statements.prepare(session, "UPDATE " + ks + ".app_endpoint SET mode = ? WHERE app_id = ?");
    putSecret = Statements.prepare(
        session, "UPDATE " + ks + ".app_endpoint SET sealed_secret = ? WHERE app_id = ?");
    get = Statements.prepare(
        session,
        "SELECT app_id, mode, sealed_secret FROM " + ks + ".app_endpoint WHERE app_id = ?");
    putKey = Statements.prepare(
        session,
        "INSERT INTO " + ks
            + ".app_invoke_keys (app_id, id, name, sha256, prefix, created) VALUES (?, ?, ?, ?, ?, ?)");
    keys = Statements.prepare(
        session,
        "SELECT app_id, id, name, sha256, prefix, created FROM " + ks
            + ".app_invoke_keys WHERE app_id = ?");
    deleteKey = Statements.prepare(
        session, "DELETE FROM " + ks + ".app_invoke_keys WHERE app_id = ? AND id = ? IF EXISTS");
    deleteKeys =
        Statements.prepare(session, "DELETE FROM " + ks + ".app_invoke_keys WHERE app_id = ?");
    deleteAuth =
        Statements.prepare(session, "DELETE FROM " + ks + ".app_endpoint WHERE app_id = ?");
  }

  @Override
  public void putEndpointMode(String appId, String mode) {
    session.execute(putMode.bind(mode, appId));
  }

  @Override
  public void putSigningSecret(String appId, byte[] sealed) {
    session.execute(putSecret.bind(ByteBuffer.wrap(sealed), appId));
  }

  @Override
  public Optional<EndpointAuth> endpointAuth(String appId) {
    Row r = session.execute(get.bind(appId)).one();
    if (r == null) {
      return Optional.empty();
    }
    ByteBuffer b = r.getByteBuffer("sealed_secret");
    byte[] sealed = null;
    if (b != null) {
      sealed = new byte[b.remaining()];
      b.get(sealed);
    }
    String mode = r.getString("mode");
    return Optional.of(new EndpointAuth(appId, mode == null ? "public" : mode, sealed));
  }

  @Override
  public void putInvokeKey(InvokeKey k) {
    session.execute(putKey.bind(k.appId(), k.id(), k.name(), k.sha256(), k.prefix(), k.created()));
  }

  @Override
  public List<InvokeKey> invokeKeys(String appId) {
    List<InvokeKey> out = new ArrayList<>();
    for (Row r : session.execute(keys.bind(appId))) {
      out.add(new InvokeKey(
          r.getString("app_id"),
          r.getString("id"),
          r.getString("name"),
          r.getString("sha256"),
          r.getString("prefix"),
          r.getInstant("created")));
    }
    return out;
  }

  @Override
  public boolean deleteInvokeKey(String appId, String id) {
    return session.execute(deleteKey.bind(appId, id)).wasApplied();
  }

  @Override
  public void deleteEndpoint(String appId) {
    session.execute(deleteKeys.bind(appId));
    session.execute(deleteAuth.bind(appId));
  }
}
