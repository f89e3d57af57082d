package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@link TriggerTables} in Cassandra; the tick and key claims are lightweight transactions (Paxos). */
final class CassandraTriggerTables implements TriggerTables {
  private static final int TICK_KEPT_S = 86_400;

  private final CqlSession session;
  private final PreparedStatement put;
  private final PreparedStatement list;
  private final PreparedStatement all;
  private final PreparedStatement delete;
  private final PreparedStatement deleteAll;
  private final PreparedStatement tick;
  private final PreparedStatement key;
  private final PreparedStatement readKey;
  private final PreparedStatement release;
  private final PreparedStatement putDead;
  private final PreparedStatement dead;
  private final PreparedStatement deadBefore;
  private final PreparedStatement deadOne;
  private final PreparedStatement deleteDead;
  private final PreparedStatement moveKey;
  private final PreparedStatement deleteAllDead;

  static void createSchema(CqlSession s, String ks) {
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".app_triggers (app_id text, name text, kind text, "
            + "spec text, created timestamp, PRIMARY KEY (app_id, name))");
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".trigger_ticks (app_id text, name text, tick bigint, "
            + "claimed_by text, PRIMARY KEY ((app_id, name), tick))");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks + ".idempotency_keys (app_id text, key text, "
        + "execution_id text, body_sha256 text, attempt int, PRIMARY KEY ((app_id, key)))");
    try { // tables created before a claim followed its delivery's attempts
      s.execute("ALTER TABLE " + ks + ".idempotency_keys ADD attempt int");
    } catch (InvalidQueryException e) {
      // the column exists
    }
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks + ".dead_letters (app_id text, id text, source text, "
            + "event text, error text, attempts int, executions text, at timestamp, PRIMARY KEY (app_id, id)) "
            + "WITH CLUSTERING ORDER BY (id DESC)");
  }

  CassandraTriggerTables(CqlSession session, String ks) {
    this.session = session;
    String cols = "app_id, name, kind, spec, created";
    put = Statements.prepare(
        session, "INSERT INTO " + ks + ".app_triggers (" + cols + ") VALUES (?, ?, ?, ?, ?)");
    list = Statements.prepare(
        session, "SELECT " + cols + " FROM " + ks + ".app_triggers WHERE app_id = ?");
    all = Statements.prepare(session, "SELECT " + cols + " FROM " + ks + ".app_triggers LIMIT ?");
    delete = Statements.prepare(
        session, "DELETE FROM " + ks + ".app_triggers WHERE app_id = ? AND name = ? IF EXISTS");
    deleteAll = Statements.prepare(session, "DELETE FROM " + ks + ".app_triggers WHERE app_id = ?");
    tick = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".trigger_ticks (app_id, name, tick, claimed_by) "
            + "VALUES (?, ?, ?, ?) IF NOT EXISTS USING TTL " + TICK_KEPT_S);
    key = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".idempotency_keys (app_id, key, execution_id, "
            + "body_sha256, attempt) VALUES (?, ?, ?, ?, ?) IF NOT EXISTS USING TTL ?");
    readKey = Statements.prepare(
        session,
        "SELECT execution_id, body_sha256, attempt FROM " + ks
            + ".idempotency_keys WHERE app_id = ? AND key = ?");
    moveKey = Statements.prepare(
        session,
        "UPDATE " + ks + ".idempotency_keys USING TTL ? SET execution_id = ?, "
            + "body_sha256 = ?, attempt = ? WHERE app_id = ? AND key = ? IF execution_id = ?");
    release = Statements.prepare(
        session,
        "DELETE FROM " + ks + ".idempotency_keys WHERE app_id = ? AND key = ? IF execution_id = ?");
    String dcols = "app_id, id, source, event, error, attempts, executions, at";
    putDead = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".dead_letters (" + dcols
            + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?");
    dead = Statements.prepare(
        session, "SELECT " + dcols + " FROM " + ks + ".dead_letters WHERE app_id = ? LIMIT ?");
    deadBefore = Statements.prepare(
        session,
        "SELECT " + dcols + " FROM " + ks + ".dead_letters WHERE app_id = ? AND id < ? LIMIT ?");
    deadOne = Statements.prepare(
        session, "SELECT " + dcols + " FROM " + ks + ".dead_letters WHERE app_id = ? AND id = ?");
    deleteDead = Statements.prepare(
        session, "DELETE FROM " + ks + ".dead_letters WHERE app_id = ? AND id = ? IF EXISTS");
    deleteAllDead =
        Statements.prepare(session, "DELETE FROM " + ks + ".dead_letters WHERE app_id = ?");
  }

  @Override
  public void putTrigger(Trigger t) {
    session.execute(put.bind(t.appId(), t.name(), t.kind(), t.spec(), t.created()));
  }

  @Override
  public List<Trigger> triggers(String appId) {
    return read(session.execute(list.bind(appId)));
  }

  @Override
  public List<Trigger> allTriggers(int limit) {
    return read(session.execute(all.bind(limit)));
  }

  private static List<Trigger> read(Iterable<Row> rows) {
    List<Trigger> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(new Trigger(
          r.getString("app_id"),
          r.getString("name"),
          r.getString("kind"),
          r.getString("spec"),
          r.getInstant("created")));
    }
    return out;
  }

  @Override
  public boolean deleteTrigger(String appId, String name) {
    return session.execute(delete.bind(appId, name)).wasApplied();
  }

  @Override
  public void deleteTriggers(String appId) {
    session.execute(deleteAll.bind(appId));
    session.execute(deleteAllDead.bind(appId));
  }

  @Override
  public boolean claimTick(String appId, String trigger, long tickEpochMs, String by) {
    ResultSet rs = session.execute(tick.bind(appId, trigger, tickEpochMs, by));
    if (rs.wasApplied()) {
      return true;
    }
    Row first = rs.one(); // not applied: the claim as it stands
    return first != null && by.equals(first.getString("claimed_by"));
  }

  @Override
  public Optional<KeyClaim> claimKey(String appId, String k, KeyClaim claim, Duration window) {
    var rs = session.execute(
        key.bind(appId, k, claim.executionId(), claim.bodySha256(), claim.attempt(), (int)
            window.toSeconds()));
    if (rs.wasApplied()) {
      return Optional.empty();
    }
    Row r = rs.one();
    if (r == null
        || r.getString("execution_id") == null) { // expired between the two: read it again
      r = session.execute(readKey.bind(appId, k)).one();
    }
    return r == null ? Optional.of(claim) : Optional.of(claimOf(r));
  }

  private static KeyClaim claimOf(Row r) {
    // a claim written before attempts were kept is its delivery's first
    int attempt = r.isNull("attempt") ? 1 : r.getInt("attempt");
    return new KeyClaim(r.getString("execution_id"), r.getString("body_sha256"), attempt);
  }

  @Override
  public boolean moveKey(
      String appId, String k, String fromExecutionId, KeyClaim next, Duration window) {
    return session
        .execute(moveKey.bind(
            (int) window.toSeconds(),
            next.executionId(),
            next.bodySha256(),
            next.attempt(),
            appId,
            k,
            fromExecutionId))
        .wasApplied();
  }

  @Override
  public Optional<KeyClaim> readKey(String appId, String k) {
    Row r = session.execute(readKey.bind(appId, k)).one();
    return r == null || r.getString("execution_id") == null
        ? Optional.empty()
        : Optional.of(claimOf(r));
  }

  @Override
  public void releaseKey(String appId, String k, String executionId) {
    session.execute(release.bind(appId, k, executionId));
  }

  @Override
  public void putDeadLetter(DeadLetter d, Duration keep) {
    session.execute(putDead.bind(
        d.appId(),
        d.id(),
        d.source(),
        d.event(),
        d.error(),
        d.attempts(),
        d.executions(),
        d.at(),
        (int) keep.toSeconds()));
  }

  @Override
  public List<DeadLetter> deadLetters(String appId, String before, int limit) {
    var rs = before == null
        ? session.execute(dead.bind(appId, limit))
        : session.execute(deadBefore.bind(appId, before, limit));
    List<DeadLetter> out = new ArrayList<>();
    for (Row r : rs) {
      out.add(deadLetter(r));
    }
    return out;
  }

  @Override
  public Optional<DeadLetter> deadLetter(String appId, String id) {
    Row r = session.execute(deadOne.bind(appId, id)).one();
    return r == null ? Optional.empty() : Optional.of(deadLetter(r));
  }

  private static DeadLetter deadLetter(Row r) {
    return new DeadLetter(
        r.getString("app_id"),
        r.getString("id"),
        r.getString("source"),
        r.getString("event"),
        r.getString("error"),
        r.getInt("attempts"),
        r.getString("executions"),
        r.getInstant("at"));
  }

  @Override
  public boolean deleteDeadLetter(String appId, String id) {
    return session.execute(deleteDead.bind(appId, id)).wasApplied();
  }
}
