package sand.cluster;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.internal.core.retry.DefaultRetryPolicy;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ClusterStore} on Cassandra: the tables of docs/host-agent.md in the SAND keyspace. Longer than 600 lines
 * because it implements the host agents' and the frontends' tables of the interface in one place (the tables with an
 * interface of their own, triggers, endpoints, buckets, secrets, schedules and loads, are split out).
 */
public final class CassandraClusterStore implements ClusterStore {
  /** The execution profile of reads that must not be answered below their consistency ({@link DegradedReads}). */
  static final String AT_QUORUM = "at-quorum";

  private static final Logger LOG = LoggerFactory.getLogger(CassandraClusterStore.class);

  private final CqlSession session;
  private final PreparedStatement upsertHost;
  private final PreparedStatement heartbeat;
  private final PreparedStatement allHosts;
  private final PreparedStatement deleteHost;
  private final PreparedStatement putApp;
  private final PreparedStatement putCode;
  private final PreparedStatement getApp;
  private final PreparedStatement allApps;
  private final PreparedStatement putDesired;
  private final PreparedStatement putPlacement;
  private final PreparedStatement getCode;
  private final PreparedStatement putState;
  private final PreparedStatement getStates;
  private final PreparedStatement putLog;
  private final PreparedStatement getLogs;
  private final PreparedStatement getLogsPage;
  private final CassandraFrontendTables frontend;
  private final CassandraApplicationRecords records;
  private final CassandraSecretTables secretTables;
  private final CassandraHostSchedules schedules;
  private final CassandraHostLoads loads;
  private final String keyspace;

  private static final String APP_COLUMNS =
      "app_id, name, owner, workflow, requirements, settings, version, " + "desired, hosts";

  private CassandraClusterStore(CqlSession session, String ks) {
    this.session = session;
    upsertHost = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".hosts (host_id, bus_address, data_address, gate_address, "
            + "capacity, memory_mb, started, heartbeat) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    heartbeat =
        Statements.prepare(session, "UPDATE " + ks + ".hosts SET heartbeat = ? WHERE host_id = ?");
    allHosts = Statements.prepare(
        session,
        "SELECT host_id, bus_address, data_address, gate_address, capacity, memory_mb, started, "
            + "heartbeat FROM " + ks + ".hosts");
    deleteHost = Statements.prepare(session, "DELETE FROM " + ks + ".hosts WHERE host_id = ?");
    putApp = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".applications (app_id, name, owner, workflow, requirements, "
            + "settings, version, desired, hosts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    putDesired = Statements.prepare(
        session, "UPDATE " + ks + ".applications SET desired = ?, hosts = ? WHERE app_id = ?");
    putPlacement = Statements.prepare(
        session, "UPDATE " + ks + ".applications SET hosts = ? WHERE app_id = ?");
    putCode = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".application_code (app_id, resource, code, kind, sha256) "
            + "VALUES (?, ?, ?, ?, ?)");
    getApp = Statements.prepare(
        session, "SELECT " + APP_COLUMNS + " FROM " + ks + ".applications WHERE app_id = ?");
    allApps =
        Statements.prepare(session, "SELECT " + APP_COLUMNS + " FROM " + ks + ".applications");
    getCode = Statements.prepare(
        session,
        "SELECT resource, code, kind, sha256 FROM " + ks + ".application_code WHERE app_id = ?");
    putState = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".app_hosts (app_id, host_id, status, error, updated) "
            + "VALUES (?, ?, ?, ?, ?)");
    getStates = Statements.prepare(
        session,
        "SELECT app_id, host_id, status, error, updated FROM " + ks
            + ".app_hosts WHERE app_id = ?");
    putLog = Statements.prepare(
        session,
        "INSERT INTO " + ks + ".execution_logs (execution_id, ts, seq, grain, level, text) "
            + "VALUES (?, ?, ?, ?, ?, ?) USING TTL ?");
    getLogs = Statements.prepare(
        session,
        "SELECT execution_id, ts, seq, grain, level, text FROM " + ks
            + ".execution_logs WHERE execution_id = ?");
    getLogsPage = Statements.prepare(
        session,
        "SELECT execution_id, ts, seq, grain, level, text FROM " + ks
            + ".execution_logs WHERE execution_id = ? AND (ts, seq) > (?, ?) LIMIT ?");
    frontend = new CassandraFrontendTables(session, ks);
    records = new CassandraApplicationRecords(session, ks);
    secretTables = new CassandraSecretTables(session, ks);
    schedules = new CassandraHostSchedules(session, ks);
    loads = new CassandraHostLoads(session, ks);
    keyspace = ks;
  }

  /** Connect, create the keyspace and tables if missing. */
  public static CassandraClusterStore connect(
      InetSocketAddress contact, String datacenter, String keyspace, int replication) {
    return connect(List.of(contact), datacenter, keyspace, replication, Optional.empty());
  }

  /** As {@link #connect(InetSocketAddress, String, String, int)}, logged in as {@code login} when given. */
  public static CassandraClusterStore connect(
      List<InetSocketAddress> contacts,
      String datacenter,
      String keyspace,
      int replication,
      Optional<ClusterSettings.Login> login) {
    CqlSession session = session(contacts, datacenter, login);
    try {
      CassandraSchema.create(session, keyspace, replication);
      return new CassandraClusterStore(session, keyspace);
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
  }

  /** A session whose requests may take a while: schema changes on a busy single node take seconds. */
  public static CqlSession session(InetSocketAddress contact, String datacenter) {
    return session(List.of(contact), datacenter, Optional.empty());
  }

  /** As {@link #session(InetSocketAddress, String)}; a cluster's Cassandra (PasswordAuthenticator) needs a login. */
  public static CqlSession session(
      List<InetSocketAddress> contacts, String datacenter, Optional<ClusterSettings.Login> login) {
    var b = CqlSession.builder()
        .addContactPoints(CassandraContacts.resolved(contacts))
        .withLocalDatacenter(datacenter)
        .withConfigLoader(DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
            .withDuration(
                DefaultDriverOption.RECONNECTION_MAX_DELAY, CassandraContacts.RECONNECT_MAX_DELAY)
            // Read-your-writes at any replication factor: a quorum written, a quorum read (the
            // driver's default,
            // LOCAL_ONE, let a frontend miss the application it had just written once there were
            // three replicas).
            .withString(
                DefaultDriverOption.REQUEST_CONSISTENCY,
                DefaultConsistencyLevel.LOCAL_QUORUM.name())
            // ... and while a node dies, a read the quorum could not answer in time is answered by
            // the replicas that could (DegradedReads), not failed.
            .withClass(DefaultDriverOption.RETRY_POLICY_CLASS, DegradedReads.class)
            .withDuration(
                DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(30))
            // ... except where a stale answer would do harm: the driver's own policy, never a
            // weaker consistency
            .startProfile(AT_QUORUM)
            .withClass(DefaultDriverOption.RETRY_POLICY_CLASS, DefaultRetryPolicy.class)
            .endProfile()
            .build());
    login.ifPresent(l -> b.withAuthCredentials(l.user(), l.password()));
    return b.build();
  }

  @Override
  public byte[] clusterSecret() {
    return CassandraClusterSecret.readOrMake(session, keyspace);
  }

  @Override
  public ClusterSecrets clusterSecrets() {
    return new CassandraClusterSecrets(session, keyspace);
  }

  @Override
  public void upsertHost(HostInfo h) {
    session.execute(upsertHost.bind(
        h.hostId(),
        h.busAddress(),
        h.dataAddress(),
        h.gateAddress(),
        h.capacity(),
        h.memoryMb(),
        h.started(),
        h.heartbeat()));
  }

  @Override
  public void heartbeat(String hostId, Instant now) {
    session.execute(heartbeat.bind(now, hostId));
  }

  @Override
  public List<HostInfo> liveHosts(Instant now, Duration maxAge) {
    return hosts(allHosts.bind(), now, maxAge);
  }

  @Override
  public List<HostInfo> liveHostsAtQuorum(Instant now, Duration maxAge) {
    return hosts(allHosts.bind().setExecutionProfileName(AT_QUORUM), now, maxAge);
  }

  private List<HostInfo> hosts(BoundStatement read, Instant now, Duration maxAge) {
    List<HostInfo> out = new ArrayList<>();
    for (Row r : session.execute(read)) {
      Instant beat = r.getInstant("heartbeat");
      // No bus address: only a heartbeat wrote the row (one that landed after removeHost), not a
      // host.
      if (beat != null && beat.isAfter(now.minus(maxAge)) && r.getString("bus_address") != null) {
        out.add(new HostInfo(
            r.getString("host_id"),
            r.getString("bus_address"),
            r.getString("data_address"),
            r.getString("gate_address") == null ? "" : r.getString("gate_address"),
            r.getInt("capacity"),
            r.getInt("memory_mb"), // 0 when null: a row of an older agent
            r.getInstant("started"),
            beat));
      }
    }
    out.sort((a, b) -> a.hostId().compareTo(b.hostId()));
    return out;
  }

  @Override
  public void removeHost(String hostId) {
    session.execute(deleteHost.bind(hostId));
  }

  @Override
  public HostSchedules hostSchedules() {
    return schedules;
  }

  @Override
  public HostLoads hostLoads() {
    return loads;
  }

  @Override
  public void deleteAppHostState(String appId, String hostId) {
    schedules.deleteAppHostState(appId, hostId);
  }

  @Override
  public void putApplication(ApplicationRecord a, Map<String, GrainCode> code) {
    BatchStatementBuilder batch = BatchStatement.builder(DefaultBatchType.LOGGED);
    batch.addStatement(putApp.bind(
        a.appId(),
        a.name(),
        a.owner(),
        a.workflow(),
        a.requirements(),
        a.settings(),
        a.version(),
        a.desired(),
        a.hosts()));
    for (GrainCode c : code.values()) {
      batch.addStatement(
          putCode.bind(a.appId(), c.resource(), ByteBuffer.wrap(c.code()), c.kind(), c.sha256()));
    }
    session.execute(batch.build());
  }

  @Override
  public Optional<ApplicationRecord> application(String appId) {
    Row r = session.execute(getApp.bind(appId)).one();
    return r == null || halfWritten(r) ? Optional.empty() : Optional.of(app(r));
  }

  @Override
  public List<ApplicationRecord> applications() {
    List<ApplicationRecord> out = new ArrayList<>();
    for (Row r : session.execute(allApps.bind())) {
      if (!halfWritten(r)) {
        out.add(app(r));
      }
    }
    return out;
  }

  @Override
  public void setDesired(String appId, String desired, List<String> hosts) {
    session.execute(putDesired.bind(desired, hosts, appId));
  }

  @Override
  public void setPlacement(String appId, List<String> hosts) {
    session.execute(
        putPlacement.bind(hosts, appId)); // on a deleted application: a half-written row, skipped
  }

  /**
   * A row only setDesired wrote: an undeploy that landed after the application's deletion. It is skipped on read,
   * not prevented with IF EXISTS, since a lightweight transaction's timestamp comes from Cassandra's clock while
   * putApplication's comes from the frontend's, and with skew the later write could lose.
   */
  private static boolean halfWritten(Row r) {
    return r.isNull("version");
  }

  private static ApplicationRecord app(Row r) {
    List<String> hosts = r.getList("hosts", String.class);
    return new ApplicationRecord(
        r.getString("app_id"),
        r.getString("name"),
        r.getString("owner"),
        r.getString("workflow"),
        r.getString("requirements"),
        r.getString("settings"),
        r.getInt("version"),
        r.getString("desired"),
        hosts == null ? List.of() : List.copyOf(hosts));
  }

  @Override
  public Map<String, GrainCode> applicationCode(String appId) {
    Map<String, GrainCode> out = new LinkedHashMap<>();
    for (Row r : session.execute(getCode.bind(appId))) {
      ByteBuffer b = r.getByteBuffer("code");
      byte[] bytes = new byte[b == null ? 0 : b.remaining()];
      if (b != null) {
        b.duplicate().get(bytes);
      }
      out.put(
          r.getString("resource"),
          new GrainCode(
              r.getString("resource"), bytes, r.getString("kind"), r.getString("sha256")));
    }
    return out;
  }

  @Override
  public void setAppHostState(
      String appId, String hostId, String status, String error, Instant now) {
    session.execute(putState.bind(appId, hostId, status, error, now));
  }

  @Override
  public List<AppHostState> appHostStates(String appId) {
    List<AppHostState> out = new ArrayList<>();
    for (Row r : session.execute(getStates.bind(appId))) {
      out.add(new AppHostState(
          r.getString("app_id"),
          r.getString("host_id"),
          r.getString("status"),
          r.getString("error"),
          r.getInstant("updated")));
    }
    return out;
  }

  @Override
  public void appendLogs(List<LogLine> lines, Duration ttl) {
    int seconds = (int) Math.max(1, ttl.toSeconds());
    for (LogLine l : lines) {
      session.executeAsync(putLog.bind(
          l.executionId(), l.tsNanos(), l.seq(), l.grain(), l.level(), l.text(), seconds));
    }
  }

  @Override
  public List<LogLine> logs(String executionId) {
    return logLines(session.execute(getLogs.bind(executionId)));
  }

  @Override
  public List<LogLine> logs(String executionId, long afterTsNanos, int afterSeq, int limit) {
    return logLines(session.execute(getLogsPage.bind(executionId, afterTsNanos, afterSeq, limit)));
  }

  private static List<LogLine> logLines(Iterable<Row> rows) {
    List<LogLine> out = new ArrayList<>();
    for (Row r : rows) {
      out.add(new LogLine(
          r.getString("execution_id"),
          r.getLong("ts"),
          r.getInt("seq"),
          r.getString("grain"),
          r.getString("level"),
          r.getString("text")));
    }
    return out;
  }

  @Override
  public boolean createAccount(Account account) {
    return frontend.createAccount(account);
  }

  @Override
  public Optional<String> accountByKey(String apiKeySha256) {
    return frontend.accountByKey(apiKeySha256);
  }

  @Override
  public Optional<Account> account(String name) {
    return frontend.account(name);
  }

  @Override
  public void deleteAccount(Account account, Duration nameHeld) {
    frontend.deleteAccount(account, nameHeld);
  }

  @Override
  public Optional<Instant> accountNameHeldUntil(String name) {
    return frontend.accountNameHeldUntil(name);
  }

  @Override
  public void setAccountDisabled(String name, String why) {
    frontend.setAccountDisabled(name, why);
  }

  @Override
  public Optional<String> accountDisabled(String name) {
    return frontend.accountDisabled(name);
  }

  @Override
  public boolean putGrainVersion(GrainVersion grain) {
    return frontend.putGrainVersion(grain);
  }

  @Override
  public Optional<GrainVersion> latestGrain(String owner, String name) {
    return frontend.latestGrain(owner, name);
  }

  @Override
  public List<GrainVersion> grains(String owner) {
    return frontend.grains(owner);
  }

  @Override
  public void deleteGrain(String owner, String name) {
    frontend.deleteGrain(owner, name);
  }

  @Override
  public AppName claimAppName(AppName claim) {
    return frontend.claimAppName(claim);
  }

  @Override
  public Optional<AppName> appName(String name) {
    return frontend.appName(name);
  }

  @Override
  public void releaseAppName(String name) {
    frontend.releaseAppName(name);
  }

  @Override
  public void setRequestTimeout(String name, int seconds) {
    frontend.setRequestTimeout(name, seconds);
  }

  @Override
  public void replaceApplicationCode(String appId, Map<String, GrainCode> code) {
    frontend.removeCodeExcept(appId, code, applicationCode(appId).keySet());
    for (GrainCode c : code.values()) {
      session.execute(
          putCode.bind(appId, c.resource(), ByteBuffer.wrap(c.code()), c.kind(), c.sha256()));
    }
  }

  @Override
  public void deleteApplication(String appId) {
    frontend.deleteApplication(appId);
    secretTables.deleteSecrets(appId);
  }

  @Override
  public void putSecret(StoredSecret secret) {
    secretTables.putSecret(secret);
  }

  @Override
  public List<StoredSecret> secrets(String appId) {
    return secretTables.secrets(appId);
  }

  @Override
  public boolean deleteSecret(String appId, String name) {
    return secretTables.deleteSecret(appId, name);
  }

  @Override
  public void clearAppHostStates(String appId) {
    frontend.clearAppHostStates(appId);
  }

  @Override
  public void startExecution(ExecutionRecord execution, Duration ttl) {
    frontend.startExecution(execution, ttl);
  }

  @Override
  public Optional<ExecutionRecord> execution(String executionId) {
    return frontend.execution(executionId);
  }

  @Override
  public void endExecution(
      String executionId,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank,
      Duration ttl) {
    frontend.endExecution(executionId, status, result, error, finished, timings, rank, ttl);
  }

  @Override
  public List<ExecutionRef> executionsBetween(
      String appId, Instant since, Instant until, int limit) {
    return frontend.executionsBetween(appId, since, until, limit);
  }

  @Override
  public List<String> recentExecutions(String appId, Instant since, int limit) {
    return frontend.recentExecutions(appId, since, limit);
  }

  @Override
  public void recordExecution(
      ExecutionRecord started,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank,
      Duration ttl) {
    frontend.recordExecution(started, status, result, error, finished, timings, rank, ttl);
  }

  @Override
  public void frontendHeartbeat(String frontendId, Instant now) {
    frontend.frontendHeartbeat(frontendId, now);
  }

  @Override
  public List<FrontendInfo> frontends() {
    return frontend.frontends();
  }

  @Override
  public void close() {
    session.close();
  }

  @Override
  public boolean claimKnixRecord(KnixRecord record) {
    return frontend.claimKnixRecord(record);
  }

  @Override
  public void putKnixRecord(KnixRecord record) {
    frontend.putKnixRecord(record);
  }

  @Override
  public Optional<KnixRecord> knixRecord(String scope, String kind, String id) {
    return frontend.knixRecord(scope, kind, id);
  }

  @Override
  public List<KnixRecord> knixRecords(String scope, String kind) {
    return frontend.knixRecords(scope, kind);
  }

  @Override
  public void deleteKnixRecord(String scope, String kind, String id) {
    frontend.deleteKnixRecord(scope, kind, id);
  }

  @Override
  public void deleteKnixRecords(String scope, String kind) {
    frontend.deleteKnixRecords(scope, kind);
  }

  @Override
  public void putAppRecord(AppRecord record) {
    records.put(record);
  }

  @Override
  public Optional<AppRecord> appRecord(String appId, String kind, String id) {
    return records.get(appId, kind, id);
  }

  @Override
  public List<AppRecord> appRecords(String appId, String kind) {
    return records.list(appId, kind);
  }

  @Override
  public void deleteAppRecord(String appId, String kind, String id) {
    records.delete(appId, kind, id);
  }

  @Override
  public void deleteAppRecords(String appId, String kind) {
    records.deleteAll(appId, kind);
  }

  public EndpointTables endpoints() { // (no @Override: the file stays within 600 lines)
    return frontend.endpoints;
  }

  public TriggerTables triggers() {
    return frontend.triggers;
  }

  public BucketTables buckets() {
    return frontend.buckets;
  }
}
