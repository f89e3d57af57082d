package sand.cluster;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A {@link ClusterStore} in memory, for unit tests (log TTLs are not enforced). It passes the same contract test
 * as {@link CassandraClusterStore} (docs/testing.md); like Cassandra, it stores and hands out copies of bytes.
 * Longer than 600 lines because it is that store's fake, method for method.
 */
public class InMemoryClusterStore implements ClusterStore {
  private final Map<String, HostInfo> hosts = new ConcurrentHashMap<>();
  private final Map<String, ApplicationRecord> apps = new ConcurrentHashMap<>();
  private final Map<String, Map<String, GrainCode>> code = new ConcurrentHashMap<>();
  private final Map<String, AppHostState> states = new ConcurrentHashMap<>();
  private final InMemoryHostSchedules schedules = new InMemoryHostSchedules();
  private final InMemoryHostLoads loads = new InMemoryHostLoads();
  private final List<LogLine> logs = new ArrayList<>();

  private final Map<String, FrontendInfo> frontends = new ConcurrentHashMap<>();

  private final InMemoryClusterSecrets clusterSecrets =
      new InMemoryClusterSecrets(new SecureRandom().generateSeed(32), java.time.Clock.systemUTC());

  @Override
  public byte[] clusterSecret() {
    return clusterSecrets.current();
  }

  @Override
  public ClusterSecrets clusterSecrets() {
    return clusterSecrets;
  }

  /** Tests: as if the cluster secret's rows had been written {@code d} earlier (rotation steps wait on them). */
  public void ageClusterSecrets(java.time.Duration d) {
    clusterSecrets.age(d);
  }

  @Override
  public void upsertHost(HostInfo h) {
    hosts.put(
        h.hostId(),
        new HostInfo(
            h.hostId(),
            h.busAddress(),
            h.dataAddress(),
            h.gateAddress(),
            h.capacity(),
            h.memoryMb(),
            ms(h.started()),
            ms(h.heartbeat())));
  }

  /** Cassandra's timestamps are whole milliseconds; so are the fake's, lest a test pass only on the fake. */
  private static Instant ms(Instant t) {
    return t == null ? null : t.truncatedTo(ChronoUnit.MILLIS);
  }

  @Override
  public void heartbeat(String hostId, Instant now) {
    hosts.computeIfPresent(
        hostId,
        (k, h) -> new HostInfo(
            h.hostId(),
            h.busAddress(),
            h.dataAddress(),
            h.gateAddress(),
            h.capacity(),
            h.memoryMb(),
            h.started(),
            ms(now)));
  }

  @Override
  public List<HostInfo> liveHosts(Instant now, Duration maxAge) {
    return hosts.values().stream()
        .filter(h -> h.heartbeat().isAfter(now.minus(maxAge)))
        .sorted(Comparator.comparing(HostInfo::hostId))
        .toList();
  }

  @Override
  public void removeHost(String hostId) {
    hosts.remove(hostId);
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
    states.remove(appId + "\0" + hostId);
  }

  @Override
  public void putApplication(ApplicationRecord app, Map<String, GrainCode> grainCode) {
    apps.put(app.appId(), app);
    // Like Cassandra: the given code rows are upserted, others stay.
    code.merge(app.appId(), copy(grainCode), (a, b) -> {
      Map<String, GrainCode> m = new HashMap<>(a);
      m.putAll(b);
      return Map.copyOf(m);
    });
  }

  @Override
  public Optional<ApplicationRecord> application(String appId) {
    return Optional.ofNullable(apps.get(appId));
  }

  @Override
  public List<ApplicationRecord> applications() {
    return apps.values().stream()
        .sorted(Comparator.comparing(ApplicationRecord::appId))
        .toList();
  }

  @Override
  public void setPlacement(String appId, List<String> hosts) {
    setDesired(appId, null, hosts);
  }

  /** {@code desired} null: the one stored stays (a placement changes only the hosts). */
  @Override
  public void setDesired(String appId, String desired, List<String> hosts) {
    apps.computeIfPresent(
        appId,
        (k, a) -> new ApplicationRecord(
            a.appId(),
            a.name(),
            a.owner(),
            a.workflow(),
            a.requirements(),
            a.settings(),
            a.version(),
            desired == null ? a.desired() : desired,
            List.copyOf(hosts)));
  }

  @Override
  public Map<String, GrainCode> applicationCode(String appId) {
    return copy(code.getOrDefault(appId, Map.of()));
  }

  private static Map<String, GrainCode> copy(Map<String, GrainCode> grainCode) {
    Map<String, GrainCode> out = new HashMap<>();
    grainCode.forEach(
        (k, c) -> out.put(k, new GrainCode(c.resource(), c.code().clone(), c.kind(), c.sha256())));
    return Map.copyOf(out);
  }

  private static GrainVersion copy(GrainVersion g) {
    return new GrainVersion(
        g.owner(),
        g.name(),
        g.version(),
        g.code().clone(),
        g.kind(),
        g.sha256(),
        g.size(),
        ms(g.created()));
  }

  @Override
  public void setAppHostState(
      String appId, String hostId, String status, String error, Instant now) {
    states.put(appId + "\0" + hostId, new AppHostState(appId, hostId, status, error, ms(now)));
  }

  @Override
  public List<AppHostState> appHostStates(String appId) {
    return states.values().stream()
        .filter(s -> s.appId().equals(appId))
        .sorted(Comparator.comparing(AppHostState::hostId))
        .toList();
  }

  @Override
  public synchronized void appendLogs(List<LogLine> lines, Duration ttl) {
    logs.addAll(lines);
  }

  @Override
  public synchronized List<LogLine> logs(String executionId) {
    return logs.stream()
        .filter(l -> l.executionId().equals(executionId))
        .sorted(Comparator.comparingLong(LogLine::tsNanos).thenComparingInt(LogLine::seq))
        .toList();
  }

  private final Map<String, Account> accounts = new ConcurrentHashMap<>();
  private final Map<String, String> disabledAccounts = new ConcurrentHashMap<>();
  private final Map<String, String> keys = new ConcurrentHashMap<>();
  /** Deleted accounts' names still held, and until when (Cassandra: the accounts row with a TTL). */
  private final Map<String, Instant> heldNames = new ConcurrentHashMap<>();

  private final Map<String, NavigableMap<Integer, GrainVersion>> grainVersions =
      new ConcurrentHashMap<>();
  private final Map<String, AppName> names = new ConcurrentHashMap<>();
  private final Map<String, ExecutionRecord> executions = new ConcurrentHashMap<>();

  @Override
  public synchronized boolean createAccount(Account account) {
    if (accountNameHeldUntil(account.name()).isPresent()) {
      return false;
    }
    heldNames.remove(account.name());
    if (accounts.putIfAbsent(
            account.name(),
            new Account(account.name(), account.apiKeySha256(), ms(account.created())))
        != null) {
      return false;
    }
    keys.put(account.apiKeySha256(), account.name());
    return true;
  }

  @Override
  public Optional<String> accountByKey(String apiKeySha256) {
    return Optional.ofNullable(keys.get(apiKeySha256));
  }

  @Override
  public Optional<Account> account(String name) {
    return Optional.ofNullable(accounts.get(name));
  }

  @Override
  public synchronized void deleteAccount(Account account, Duration nameHeld) {
    keys.remove(account.apiKeySha256());
    disabledAccounts.remove(account.name());
    accounts.remove(account.name());
    if (!nameHeld.isZero() && !nameHeld.isNegative()) {
      // whole seconds, rounded up, as Cassandra's TTL
      long s = Math.max(1, (nameHeld.toMillis() + 999) / 1000);
      heldNames.put(account.name(), ms(Instant.now().plusSeconds(s)));
    }
  }

  /** Tests: as if deleted accounts' names had been held {@code d} longer (the hold ends {@code d} sooner). */
  public void ageAccountNameHolds(Duration d) {
    heldNames.replaceAll((name, until) -> until.minus(d));
  }

  @Override
  public Optional<Instant> accountNameHeldUntil(String name) {
    Instant until = heldNames.get(name);
    return until != null && Instant.now().isBefore(until) ? Optional.of(until) : Optional.empty();
  }

  @Override
  public void setAccountDisabled(String name, String why) {
    if (why == null) {
      disabledAccounts.remove(name);
    } else {
      disabledAccounts.put(name, why);
    }
  }

  @Override
  public Optional<String> accountDisabled(String name) {
    return Optional.ofNullable(disabledAccounts.get(name));
  }

  @Override
  public synchronized boolean putGrainVersion(GrainVersion g) {
    return grainVersions
            .computeIfAbsent(g.owner() + "\0" + g.name(), k -> new TreeMap<>())
            .putIfAbsent(g.version(), copy(g))
        == null;
  }

  @Override
  public synchronized Optional<GrainVersion> latestGrain(String owner, String name) {
    var versions = grainVersions.get(owner + "\0" + name);
    return versions == null || versions.isEmpty()
        ? Optional.empty()
        : Optional.of(copy(versions.lastEntry().getValue()));
  }

  @Override
  public synchronized List<GrainVersion> grains(String owner) {
    return grainVersions.values().stream()
        .filter(v -> !v.isEmpty() && v.lastEntry().getValue().owner().equals(owner))
        .map(v -> copy(v.lastEntry().getValue()))
        .sorted(Comparator.comparing(GrainVersion::name))
        .toList();
  }

  @Override
  public synchronized void deleteGrain(String owner, String name) {
    grainVersions.remove(owner + "\0" + name);
  }

  @Override
  public AppName claimAppName(AppName claim) {
    AppName existing = names.putIfAbsent(claim.name(), claim);
    return existing == null ? claim : existing;
  }

  @Override
  public Optional<AppName> appName(String name) {
    return Optional.ofNullable(names.get(name));
  }

  @Override
  public void releaseAppName(String name) {
    names.remove(name);
  }

  @Override
  public void setRequestTimeout(String name, int seconds) {
    names.computeIfPresent(name, (k, n) -> new AppName(n.name(), n.appId(), n.owner(), seconds));
  }

  @Override
  public void replaceApplicationCode(String appId, Map<String, GrainCode> grainCode) {
    code.put(appId, copy(grainCode));
  }

  @Override
  public void deleteApplication(String appId) {
    apps.remove(appId);
    code.remove(appId);
    clearAppHostStates(appId);
    deleteSecrets(appId);
    endpoints.deleteEndpoint(appId);
    triggers.deleteTriggers(appId);
  }

  private final Map<String, Map<String, StoredSecret>> secrets = new ConcurrentHashMap<>();

  @Override
  public void putSecret(StoredSecret s) {
    secrets
        .computeIfAbsent(s.appId(), a -> new ConcurrentSkipListMap<>())
        .put(s.name(), new StoredSecret(s.appId(), s.name(), s.sealed().clone(), ms(s.updated())));
  }

  @Override
  public List<StoredSecret> secrets(String appId) {
    return secrets.getOrDefault(appId, Map.of()).values().stream()
        .map(s -> new StoredSecret(s.appId(), s.name(), s.sealed().clone(), s.updated()))
        .toList();
  }

  @Override
  public boolean deleteSecret(String appId, String name) {
    Map<String, StoredSecret> m = secrets.get(appId);
    return m != null && m.remove(name) != null;
  }

  @Override
  public void deleteSecrets(String appId) {
    secrets.remove(appId);
  }

  @Override
  public void clearAppHostStates(String appId) {
    states.values().removeIf(s -> s.appId().equals(appId));
  }

  private final Map<String, Long> ranks = new HashMap<>();

  @Override
  public synchronized List<String> recentExecutions(String appId, Instant since, int limit) {
    return executions.values().stream()
        .filter(
            e -> appId.equals(e.appId()) && e.started() != null && !e.started().isBefore(ms(since)))
        // Cassandra's clustering order: newest first, then by id
        .sorted(Comparator.comparing(ExecutionRecord::started)
            .reversed()
            .thenComparing(ExecutionRecord::executionId))
        .limit(limit)
        .map(ExecutionRecord::executionId)
        .toList();
  }

  @Override
  public synchronized List<ExecutionRef> executionsBetween(
      String appId, Instant since, Instant until, int limit) {
    return executions.values().stream()
        .filter(e -> appId.equals(e.appId())
            && e.started() != null
            && !e.started().isBefore(ms(since))
            && !e.started().isAfter(ms(until)))
        .sorted(Comparator.comparing(ExecutionRecord::started)
            .reversed()
            .thenComparing(ExecutionRecord::executionId))
        .limit(limit)
        .map(e -> new ExecutionRef(e.executionId(), e.started()))
        .toList();
  }

  @Override
  public synchronized void startExecution(ExecutionRecord start, Duration ttl) {
    ExecutionRecord e = new ExecutionRecord(
        start.executionId(),
        start.appId(),
        start.owner(),
        start.status(),
        start.result(),
        start.error(),
        ms(start.started()),
        ms(start.finished()),
        start.frontend(),
        start.timings());
    ExecutionRecord ended = executions.get(e.executionId());
    if (ended == null || ranks.getOrDefault(e.executionId(), 0L) <= RANK_STARTED) {
      executions.put(e.executionId(), e);
      ranks.put(e.executionId(), RANK_STARTED);
    } else { // the end was written first: keep it, fill in what only the start knows
      executions.put(
          e.executionId(),
          new ExecutionRecord(
              e.executionId(),
              e.appId(),
              e.owner(),
              ended.status(),
              ended.result(),
              ended.error(),
              e.started(),
              ended.finished(),
              e.frontend(),
              ended.timings()));
    }
  }

  @Override
  public synchronized Optional<ExecutionRecord> execution(String executionId) {
    return Optional.ofNullable(executions.get(executionId));
  }

  @Override
  public synchronized void endExecution(
      String executionId,
      String status,
      String result,
      String error,
      Instant end,
      String timings,
      long rank,
      Duration ttl) {
    Instant finished = ms(end);
    if (ranks.getOrDefault(executionId, 0L) >= rank) {
      return;
    }
    ranks.put(executionId, rank);
    ExecutionRecord e = executions.get(executionId);
    executions.put(
        executionId,
        e == null
            ? new ExecutionRecord(
                executionId, null, null, status, result, error, null, finished, null, timings)
            : new ExecutionRecord(
                executionId,
                e.appId(),
                e.owner(),
                status,
                result,
                error,
                e.started(),
                finished,
                e.frontend(),
                timings));
  }

  @Override
  public void close() {}

  @Override
  public void frontendHeartbeat(String frontendId, Instant now) {
    frontends.put(frontendId, new FrontendInfo(frontendId, ms(now)));
  }

  @Override
  public List<FrontendInfo> frontends() {
    return List.copyOf(frontends.values());
  }

  private final Map<String, NavigableMap<String, byte[]>> knix = new ConcurrentHashMap<>();

  private NavigableMap<String, byte[]> knix(String scope, String kind) {
    return knix.computeIfAbsent(scope + "\0" + kind, k -> new ConcurrentSkipListMap<>());
  }

  @Override
  public boolean claimKnixRecord(KnixRecord r) {
    return knix(r.scope(), r.kind()).putIfAbsent(r.id(), r.value().clone()) == null;
  }

  @Override
  public void putKnixRecord(KnixRecord r) {
    knix(r.scope(), r.kind()).put(r.id(), r.value().clone());
  }

  @Override
  public Optional<KnixRecord> knixRecord(String scope, String kind, String id) {
    byte[] v = knix(scope, kind).get(id);
    return v == null ? Optional.empty() : Optional.of(new KnixRecord(scope, kind, id, v.clone()));
  }

  @Override
  public List<KnixRecord> knixRecords(String scope, String kind) {
    return knix(scope, kind).entrySet().stream()
        .map(e -> new KnixRecord(scope, kind, e.getKey(), e.getValue().clone()))
        .toList();
  }

  @Override
  public void deleteKnixRecord(String scope, String kind, String id) {
    knix(scope, kind).remove(id);
  }

  @Override
  public void deleteKnixRecords(String scope, String kind) {
    knix.remove(scope + "\0" + kind);
  }

  private final Map<String, NavigableMap<String, byte[]>> records = new ConcurrentHashMap<>();

  private NavigableMap<String, byte[]> records(String appId, String kind) {
    return records.computeIfAbsent(appId + "\0" + kind, k -> new ConcurrentSkipListMap<>());
  }

  @Override
  public void putAppRecord(AppRecord r) {
    records(r.appId(), r.kind()).put(r.id(), r.value().clone());
  }

  @Override
  public Optional<AppRecord> appRecord(String appId, String kind, String id) {
    byte[] v = records(appId, kind).get(id);
    return v == null ? Optional.empty() : Optional.of(new AppRecord(appId, kind, id, v.clone()));
  }

  @Override
  public List<AppRecord> appRecords(String appId, String kind) {
    return records(appId, kind).entrySet().stream()
        .map(e -> new AppRecord(appId, kind, e.getKey(), e.getValue().clone()))
        .toList();
  }

  @Override
  public void deleteAppRecord(String appId, String kind, String id) {
    records(appId, kind).remove(id);
  }

  @Override
  public void deleteAppRecords(String appId, String kind) {
    records.remove(appId + "\0" + kind);
  }

  private final InMemoryEndpointTables endpoints = new InMemoryEndpointTables();

  @Override
  public EndpointTables endpoints() {
    return endpoints;
  }

  private final InMemoryTriggerTables triggers = new InMemoryTriggerTables();

  @Override
  public TriggerTables triggers() {
    return triggers;
  }

  private final InMemoryBucketTables buckets = new InMemoryBucketTables();

  @Override
  public BucketTables buckets() {
    return buckets;
  }
}
