package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import sand.cluster.FrontendTables.Account;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.FrontendTables.FrontendInfo;
import sand.cluster.FrontendTables.GrainVersion;
import sand.cluster.FrontendTables.KnixRecord;
import sand.cluster.HostAgentTables.GrainCode;

/**
 * The tables only the frontend writes (docs/api.md "Cluster state"): accounts and their key hashes, grain
 * versions, the global application names, executions. Claims (account and application names, grain
 * versions, the first result of an execution) are lightweight transactions, so two frontends racing
 * for the same thing cannot both win.
 */
final class CassandraFrontendTables {
  private final CqlSession session;
  private final PreparedStatement putAccount;
  private final PreparedStatement putKey;
  private final PreparedStatement getKey;
  private final PreparedStatement getAccount;
  private final PreparedStatement putAppExecution;
  private final PreparedStatement appExecutions;
  private final PreparedStatement appExecutionsBetween;
  private final PreparedStatement deleteAccount;
  private final PreparedStatement holdAccountName;
  private final PreparedStatement getAccountNameHold;
  private final PreparedStatement deleteKey;
  private final PreparedStatement disable;
  private final PreparedStatement enable;
  private final PreparedStatement getDisabled;
  private final PreparedStatement putGrain;
  private final PreparedStatement latestGrain;
  private final PreparedStatement allGrains;
  private final PreparedStatement deleteGrain;
  private final PreparedStatement claimName;
  private final PreparedStatement getName;
  private final PreparedStatement deleteName;
  private final PreparedStatement setTimeout;
  private final PreparedStatement deleteCode;
  private final PreparedStatement deleteAllCode;
  private final PreparedStatement deleteApp;
  private final PreparedStatement deleteStates;
  private final PreparedStatement putExecution;
  private final PreparedStatement getExecution;
  private final PreparedStatement finishExecution;
  private final PreparedStatement frontendHeartbeat;
  private final PreparedStatement allFrontends;
  private final PreparedStatement claimKnix;
  private final PreparedStatement putKnix;
  private final PreparedStatement getKnix;
  private final PreparedStatement listKnix;
  private final PreparedStatement deleteKnix;
  private final PreparedStatement deleteAllKnix;
  /** The end-user endpoints' protection: only frontends read and write it. */
  final CassandraEndpointTables endpoints;

  /** Triggers, tick claims, idempotency keys and dead letters: only frontends read and write them. */
  final CassandraTriggerTables triggers;

  /** Triggerable buckets (host agents read them too). */
  final CassandraBucketTables buckets;

  static void createSchema(CqlSession s, String ks) {
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".frontends (frontend_id text PRIMARY KEY, heartbeat timestamp)");
    s.execute(
        "CREATE TABLE IF NOT EXISTS " + ks
            + ".accounts (name text PRIMARY KEY, api_key_sha256 text, created timestamp, free_at timestamp)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".api_keys (key_sha256 text PRIMARY KEY, account text)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".disabled_accounts (name text PRIMARY KEY, why text)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".grains (owner text, name text, version int, code blob, "
        + "kind text, sha256 text, size bigint, created timestamp, PRIMARY KEY ((owner, name), version)) "
        + "WITH CLUSTERING ORDER BY (version DESC)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".app_names (name text PRIMARY KEY, app_id text, owner text, "
        + "request_timeout_s int)");
    // an application's executions by start time, newest first: `sand logs <app>` (one partition per
    // application)
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".app_executions (app_id text, started timestamp, execution_id "
        + "text, PRIMARY KEY (app_id, started, execution_id)) WITH CLUSTERING ORDER BY (started DESC, execution_id "
        + "ASC)");
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".executions (execution_id text PRIMARY KEY, app_id text, "
        + "owner text, status text, result text, error text, started timestamp, finished timestamp, "
        + "frontend text, timings text)");
    // the KNIX door's records (FrontendTables.KnixRecord): one partition per (scope, kind)
    s.execute("CREATE TABLE IF NOT EXISTS " + ks
        + ".knix_records (scope text, kind text, id text, value blob, "
        + "PRIMARY KEY ((scope, kind), id))");
    try { // tables created before executions had timings
      s.execute("ALTER TABLE " + ks + ".executions ADD timings text");
    } catch (InvalidQueryException e) {
      // the column exists
    }
    try { // tables created before a deleted account's name was held (deleteAccount)
      s.execute("ALTER TABLE " + ks + ".accounts ADD free_at timestamp");
    } catch (InvalidQueryException e) {
      // the column exists
    }
    CassandraEndpointTables.createSchema(s, ks);
    CassandraBucketTables.createSchema(s, ks);
    CassandraTriggerTables.createSchema(s, ks);
  }

  CassandraFrontendTables(CqlSession session, String ks) {
    this.session = session;
    endpoints = new CassandraEndpointTables(session, ks);
    triggers = new CassandraTriggerTables(session, ks);
    buckets = new CassandraBucketTables(session, ks);
    frontendHeartbeat = Statements.prepare(
        session, "INSERT INTO " + ks + ".frontends (frontend_id, heartbeat) VALUES (?, ?)");
    claimKnix = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".knix_records (scope, kind, id, value) VALUES (?, ?, ?, ?) "
            + "IF NOT EXISTS");
    putKnix = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".knix_records (scope, kind, id, value) VALUES (?, ?, ?, ?)");
    getKnix = Statements.prepare(
        session,
        "SELECT id, value FROM " + ks + ".knix_records WHERE scope = ? AND kind = ? AND id = ?");
    listKnix = Statements.prepare(
        session, "SELECT id, value FROM " + ks + ".knix_records WHERE scope = ? AND kind = ?");
    deleteKnix = Statements.prepare(
        session, "DELETE FROM " + ks + ".knix_records WHERE scope = ? AND kind = ? AND id = ?");
    deleteAllKnix = Statements.prepare(
        session, "DELETE FROM " + ks + ".knix_records WHERE scope = ? AND kind = ?");
    allFrontends =
        Statements.prepare(session, "SELECT frontend_id, heartbeat FROM " + ks + ".frontends");
    putAccount = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".accounts (name, api_key_sha256, created) VALUES (?, ?, ?) "
            + "IF NOT EXISTS");
    putKey = Statements.prepare(
        session, "INSERT INTO " + ks + ".api_keys (key_sha256, account) VALUES (?, ?)");
    getKey =
        Statements.prepare(session, "SELECT account FROM " + ks + ".api_keys WHERE key_sha256 = ?");
    deleteAccount = Statements.prepare(session, "DELETE FROM " + ks + ".accounts WHERE name = ?");
    // A deleted account's row, kept until its TTL, holds the name. Every column is written (and
    // the row marker, by the INSERT), so nothing of the old row outlives the TTL; then
    // createAccount's IF NOT EXISTS succeeds again. The same row: no sign-up can slip in between
    // the delete and the hold.
    holdAccountName = Statements.prepare(
        session,
        "INSERT INTO " + ks
            + ".accounts (name, api_key_sha256, created, free_at) VALUES (?, null, ?, ?) USING TTL ?");
    getAccountNameHold =
        Statements.prepare(session, "SELECT free_at FROM " + ks + ".accounts WHERE name = ?");
    deleteKey = Statements.prepare(session, "DELETE FROM " + ks + ".api_keys WHERE key_sha256 = ?");
    putAppExecution = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".app_executions (app_id, started, execution_id) "
            + "VALUES (?, ?, ?) USING TTL ?");
    appExecutions = Statements.prepare(
        session,
        "SELECT execution_id FROM " + ks + ".app_executions WHERE app_id = ? AND "
            + "started >= ? LIMIT ?");
    appExecutionsBetween = Statements.prepare(
        session,
        "SELECT execution_id, started FROM " + ks
            + ".app_executions WHERE app_id = ? AND started >= ? AND started <= ? LIMIT ?");
    getAccount = Statements.prepare(
        session,
        "SELECT name, api_key_sha256, created, free_at FROM " + ks + ".accounts WHERE name = ?");
    disable = Statements.prepare(
        session, "INSERT INTO " + ks + ".disabled_accounts (name, why) VALUES (?, ?)");
    enable = Statements.prepare(session, "DELETE FROM " + ks + ".disabled_accounts WHERE name = ?");
    getDisabled =
        Statements.prepare(session, "SELECT why FROM " + ks + ".disabled_accounts WHERE name = ?");
    putGrain = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".grains (owner, name, version, code, kind, sha256, size, "
            + "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS");
    latestGrain = Statements.prepare(
        session, "SELECT * FROM " + ks + ".grains WHERE owner = ? AND name = ? LIMIT 1");
    // Few grains per cluster: a scan filtered by owner is fine at this scale.
    allGrains =
        Statements.prepare(session, "SELECT * FROM " + ks + ".grains PER PARTITION LIMIT 1");
    deleteGrain =
        Statements.prepare(session, "DELETE FROM " + ks + ".grains WHERE owner = ? AND name = ?");
    claimName = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".app_names (name, app_id, owner, request_timeout_s) "
            + "VALUES (?, ?, ?, ?) IF NOT EXISTS");
    getName = Statements.prepare(
        session,
        "SELECT name, app_id, owner, request_timeout_s FROM " + ks + ".app_names WHERE name = ?");
    // IF EXISTS: a timeout set as the name is released must not leave a claim that no one holds
    setTimeout = Statements.prepare(
        session, "UPDATE " + ks + ".app_names SET request_timeout_s = ? WHERE name = ? IF EXISTS");
    deleteName = Statements.prepare(session, "DELETE FROM " + ks + ".app_names WHERE name = ?");
    deleteCode = Statements.prepare(
        session, "DELETE FROM " + ks + ".application_code WHERE app_id = ? AND resource = ?");
    deleteAllCode =
        Statements.prepare(session, "DELETE FROM " + ks + ".application_code WHERE app_id = ?");
    deleteApp = Statements.prepare(session, "DELETE FROM " + ks + ".applications WHERE app_id = ?");
    deleteStates = Statements.prepare(session, "DELETE FROM " + ks + ".app_hosts WHERE app_id = ?");
    putExecution = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".executions (execution_id, app_id, owner, status, started, "
            + "frontend) VALUES (?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?");
    getExecution =
        Statements.prepare(session, "SELECT * FROM " + ks + ".executions WHERE execution_id = ?");
    finishExecution = Statements.prepare(
        session,
        "UPDATE " + ks + ".executions USING TTL ? AND TIMESTAMP ? SET status = ?, "
            + "result = ?, error = ?, finished = ?, timings = ? WHERE execution_id = ?");
  }

  boolean createAccount(Account a) {
    if (!session
        .execute(putAccount.bind(a.name(), a.apiKeySha256(), a.created()))
        .wasApplied()) {
      return false;
    }
    session.execute(putKey.bind(a.apiKeySha256(), a.name()));
    return true;
  }

  Optional<String> accountByKey(String sha) {
    Row r = session.execute(getKey.bind(sha)).one();
    return r == null ? Optional.empty() : Optional.ofNullable(r.getString("account"));
  }

  Optional<Account> account(String name) {
    Row r = session.execute(getAccount.bind(name)).one();
    return r == null || r.getInstant("free_at") != null // a deleted account's held name
        ? Optional.empty()
        : Optional.of(new Account(
            r.getString("name"), r.getString("api_key_sha256"), r.getInstant("created")));
  }

  void deleteAccount(Account a, Duration nameHeld) {
    session.execute(deleteKey.bind(a.apiKeySha256()));
    session.execute(enable.bind(a.name()));
    if (nameHeld.isZero() || nameHeld.isNegative()) {
      session.execute(deleteAccount.bind(a.name()));
      return;
    }
    // TTL in whole seconds, rounded up; free_at no earlier than the row's expiry
    int ttl = (int) Math.max(1, (nameHeld.toMillis() + 999) / 1000);
    Instant freeAt = Instant.now().plusSeconds(ttl).truncatedTo(ChronoUnit.MILLIS);
    session.execute(holdAccountName.bind(a.name(), a.created(), freeAt, ttl));
  }

  Optional<Instant> accountNameHeldUntil(String name) {
    Row r = session.execute(getAccountNameHold.bind(name)).one();
    return r == null ? Optional.empty() : Optional.ofNullable(r.getInstant("free_at"));
  }

  void setAccountDisabled(String name, String why) {
    session.execute(why == null ? enable.bind(name) : disable.bind(name, why));
  }

  Optional<String> accountDisabled(String name) {
    Row r = session.execute(getDisabled.bind(name)).one();
    return r == null ? Optional.empty() : Optional.ofNullable(r.getString("why"));
  }

  boolean putGrainVersion(GrainVersion g) {
    return session
        .execute(putGrain.bind(
            g.owner(),
            g.name(),
            g.version(),
            ByteBuffer.wrap(g.code()),
            g.kind(),
            g.sha256(),
            g.size(),
            g.created()))
        .wasApplied();
  }

  Optional<GrainVersion> latestGrain(String owner, String name) {
    Row r = session.execute(latestGrain.bind(owner, name)).one();
    return r == null ? Optional.empty() : Optional.of(grain(r));
  }

  List<GrainVersion> grains(String owner) {
    List<GrainVersion> out = new ArrayList<>();
    for (Row r : session.execute(allGrains.bind())) {
      if (owner.equals(r.getString("owner"))) {
        out.add(grain(r));
      }
    }
    out.sort((a, b) -> a.name().compareTo(b.name()));
    return out;
  }

  private static GrainVersion grain(Row r) {
    ByteBuffer b = r.getByteBuffer("code");
    byte[] bytes = new byte[b == null ? 0 : b.remaining()];
    if (b != null) {
      b.duplicate().get(bytes);
    }
    return new GrainVersion(
        r.getString("owner"),
        r.getString("name"),
        r.getInt("version"),
        bytes,
        r.getString("kind"),
        r.getString("sha256"),
        r.getLong("size"),
        r.getInstant("created"));
  }

  void deleteGrain(String owner, String name) {
    session.execute(deleteGrain.bind(owner, name));
  }

  AppName claimAppName(AppName claim) {
    ResultSet rs = session.execute(
        claimName.bind(claim.name(), claim.appId(), claim.owner(), claim.requestTimeoutS()));
    if (rs.wasApplied()) {
      return claim;
    }
    Row r = rs.one();
    return new AppName(
        claim.name(), r.getString("app_id"), r.getString("owner"), r.getInt("request_timeout_s"));
  }

  Optional<AppName> appName(String name) {
    Row r = session.execute(getName.bind(name)).one();
    return r == null
        ? Optional.empty()
        : Optional.of(new AppName(
            r.getString("name"),
            r.getString("app_id"),
            r.getString("owner"),
            r.getInt("request_timeout_s")));
  }

  void setRequestTimeout(String name, int seconds) {
    session.execute(setTimeout.bind(seconds, name));
  }

  void releaseAppName(String name) {
    session.execute(deleteName.bind(name));
  }

  /** Stale resources go first, in their own statements: a delete and an insert of one row in one batch share
   * a timestamp, and then the delete wins. */
  void removeCodeExcept(String appId, Map<String, GrainCode> current, Iterable<String> existing) {
    for (String resource : existing) {
      if (!current.containsKey(resource)) {
        session.execute(deleteCode.bind(appId, resource));
      }
    }
  }

  void deleteApplication(String appId) {
    session.execute(deleteApp.bind(appId));
    session.execute(deleteAllCode.bind(appId));
    clearAppHostStates(appId);
    endpoints.deleteEndpoint(appId);
    triggers.deleteTriggers(appId);
  }

  void clearAppHostStates(String appId) {
    session.execute(deleteStates.bind(appId));
  }

  void startExecution(ExecutionRecord e, Duration ttl) {
    // A status column the end writes too: with rank 1 as its timestamp, any end wins over it.
    session.execute(putExecution.bind(
        e.executionId(),
        e.appId(),
        e.owner(),
        e.status(),
        e.started(),
        e.frontend(),
        (int) ttl.toSeconds(),
        FrontendTables.RANK_STARTED));
    indexByApp(e, ttl);
  }

  private void indexByApp(ExecutionRecord e, Duration ttl) {
    if (e.appId() != null && e.started() != null) {
      session.execute(
          putAppExecution.bind(e.appId(), e.started(), e.executionId(), (int) ttl.toSeconds()));
    }
  }

  List<FrontendTables.ExecutionRef> executionsBetween(
      String appId, Instant since, Instant until, int limit) {
    List<FrontendTables.ExecutionRef> out = new ArrayList<>();
    for (Row r : session.execute(appExecutionsBetween.bind(appId, since, until, limit))) {
      out.add(
          new FrontendTables.ExecutionRef(r.getString("execution_id"), r.getInstant("started")));
    }
    return out;
  }

  List<String> recentExecutions(String appId, Instant since, int limit) {
    List<String> out = new ArrayList<>();
    for (Row r : session.execute(appExecutions.bind(appId, since, limit))) {
      out.add(r.getString("execution_id"));
    }
    return out;
  }

  Optional<ExecutionRecord> execution(String id) {
    Row r = session.execute(getExecution.bind(id)).one();
    return r == null
        ? Optional.empty()
        : Optional.of(new ExecutionRecord(
            r.getString("execution_id"),
            r.getString("app_id"),
            r.getString("owner"),
            r.getString("status"),
            r.getString("result"),
            r.getString("error"),
            r.getInstant("started"),
            r.getInstant("finished"),
            r.getString("frontend"),
            r.getString("timings")));
  }

  void endExecution(
      String id,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank,
      Duration ttl) {
    session.execute(finishExecution.bind(
        (int) ttl.toSeconds(), rank, status, result, error, finished, timings, id));
  }

  /** Start and end in one unlogged batch: one partition, so Cassandra applies it as a single mutation. */
  void recordExecution(
      ExecutionRecord e,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank,
      Duration ttl) {
    int seconds = (int) ttl.toSeconds();
    session.execute(BatchStatement.newInstance(
        DefaultBatchType.UNLOGGED,
        putExecution.bind(
            e.executionId(),
            e.appId(),
            e.owner(),
            e.status(),
            e.started(),
            e.frontend(),
            seconds,
            FrontendTables.RANK_STARTED),
        finishExecution.bind(
            seconds, rank, status, result, error, finished, timings, e.executionId())));
    indexByApp(e, ttl);
  }

  void frontendHeartbeat(String frontendId, Instant now) {
    session.execute(frontendHeartbeat.bind(frontendId, now));
  }

  List<FrontendInfo> frontends() {
    List<FrontendInfo> out = new ArrayList<>();
    for (Row r : session.execute(allFrontends.bind())) {
      out.add(new FrontendInfo(r.getString("frontend_id"), r.getInstant("heartbeat")));
    }
    return out;
  }

  boolean claimKnixRecord(KnixRecord r) {
    return session
        .execute(claimKnix.bind(r.scope(), r.kind(), r.id(), ByteBuffer.wrap(r.value())))
        .wasApplied();
  }

  void putKnixRecord(KnixRecord r) {
    session.execute(putKnix.bind(r.scope(), r.kind(), r.id(), ByteBuffer.wrap(r.value())));
  }

  Optional<KnixRecord> knixRecord(String scope, String kind, String id) {
    Row r = session.execute(getKnix.bind(scope, kind, id)).one();
    return r == null ? Optional.empty() : Optional.of(knix(scope, kind, r));
  }

  List<KnixRecord> knixRecords(String scope, String kind) {
    List<KnixRecord> out = new ArrayList<>();
    for (Row r : session.execute(listKnix.bind(scope, kind))) {
      out.add(knix(scope, kind, r));
    }
    return out;
  }

  void deleteKnixRecord(String scope, String kind, String id) {
    session.execute(deleteKnix.bind(scope, kind, id));
  }

  void deleteKnixRecords(String scope, String kind) {
    session.execute(deleteAllKnix.bind(scope, kind));
  }

  private static KnixRecord knix(String scope, String kind, Row r) {
    ByteBuffer b = r.getByteBuffer("value");
    byte[] value = new byte[b == null ? 0 : b.remaining()];
    if (b != null) {
      b.duplicate().get(value);
    }
    return new KnixRecord(scope, kind, r.getString("id"), value);
  }
}
