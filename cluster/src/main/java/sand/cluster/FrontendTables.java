package sand.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.GrainCode;

/**
 * The frontends' part of the cluster state (docs/api.md, "Cluster state"): developer accounts, grain versions,
 * the global application names, executions, and the writes that deploy and undeploy applications (the host
 * agents only read those). No host agent calls any of it.
 */
public interface FrontendTables {

  void putApplication(ApplicationRecord app, Map<String, GrainCode> code);

  /** Record the desired state of an application (frontend: deploy / undeploy). */
  void setDesired(String appId, String desired, List<String> hosts);

  /** A developer account; only the SHA-256 of its API key is stored. */
  record Account(String name, String apiKeySha256, Instant created) {}

  /** One uploaded version of a grain's code, owned by an account. */
  record GrainVersion(
      String owner,
      String name,
      int version,
      byte[] code,
      String kind,
      String sha256,
      long size,
      Instant created) {}

  /**
   * The global application name → app id map (names are global, like domain names), with the one setting
   * only the frontend reads: how long a synchronous request waits (0 = the frontend's default). It is
   * not in {@code applications.settings} because the agents refuse settings they do not know.
   */
  record AppName(String name, String appId, String owner, int requestTimeoutS) {}

  /**
   * One request to an application, as the frontend that took it recorded it.
   *
   * @param timings the execution's trace (JSON array, contracts Trace), or null
   */
  record ExecutionRecord(
      String executionId,
      String appId,
      String owner,
      String status,
      String result,
      String error,
      Instant started,
      Instant finished,
      String frontend,
      String timings) {}

  /** The rank of an execution's 'running' record: any end wins over it. */
  long RANK_STARTED = 1;
  /** The rank of a timeout (the frontend stopped waiting): a result that arrives later still wins. */
  long RANK_TIMEOUT = 2;
  /** The rank of a platform failure (the request never reached Kafka). */
  long RANK_FAILED = 3;

  /**
   * The rank of a result that arrived at {@code arrivalMicros} (epoch µs): earlier arrivals rank higher, so of two
   * results of one execution the first to arrive wins however the writes are ordered, and any result wins over
   * a timeout or a failure.
   */
  static long resultRank(long arrivalMicros) {
    return (1L << 62) - arrivalMicros;
  }

  /**
   * A frontend as the other frontends see it: its last heartbeat. One whose heartbeat is old is dead, and a live
   * frontend reads its response topic for it (the results of its asynchronous requests).
   */
  record FrontendInfo(String frontendId, Instant heartbeat) {}

  /** Register this frontend, or renew its heartbeat ({@code frontends} table). */
  void frontendHeartbeat(String frontendId, Instant now);

  /** Every frontend that ever registered, live or not (a cluster has few). */
  List<FrontendInfo> frontends();

  /** Create an account unless the name is taken (and its key); false when the name exists. */
  boolean createAccount(Account account);

  /** The account whose API key has this SHA-256. */
  Optional<String> accountByKey(String apiKeySha256);

  /** The account of this name. */
  Optional<Account> account(String name);

  /**
   * Delete an account and its API key (its applications and grains are the caller's to delete first), keeping its
   * name taken for {@code nameHeld}: until then {@link #createAccount} of that name is false, {@link #account} of it
   * empty and {@link #accountNameHeldUntil} says when it is free. A frontend that read the old key before the delete
   * may still serve it for a while from its cache; the hold outlasts that, so the old key can never act for a new
   * account of the same name (AuthHandler). Zero frees the name at once.
   */
  void deleteAccount(Account account, Duration nameHeld);

  /** When a deleted account's name ({@link #deleteAccount}) is free again; empty when it is not held. */
  Optional<Instant> accountNameHeldUntil(String name);

  /**
   * Disable an account (its keys are refused) with the operator's reason, or enable it again ({@code why} null).
   */
  void setAccountDisabled(String name, String why);

  /** Why the operator disabled this account; empty when it is enabled. */
  Optional<String> accountDisabled(String name);

  /** Store a new version unless that (owner, name, version) exists; false when someone got there first. */
  boolean putGrainVersion(GrainVersion grain);

  /** The newest version of a grain, with its code. */
  Optional<GrainVersion> latestGrain(String owner, String name);

  /** The newest version of every grain of an account (code included; grains are small). */
  List<GrainVersion> grains(String owner);

  /** Delete every version of a grain. */
  void deleteGrain(String owner, String name);

  /** Claim a global application name: returns the existing claim if someone holds it, else {@code claim}. */
  AppName claimAppName(AppName claim);

  Optional<AppName> appName(String name);

  void releaseAppName(String name);

  void setRequestTimeout(String name, int seconds);

  /** Replace the application's code with {@code code} (resources not in it are removed). */
  void replaceApplicationCode(String appId, Map<String, GrainCode> code);

  /** Remove an application: its row, code and per-host states. */
  void deleteApplication(String appId);

  /** Forget the per-host states of an application (a new deploy starts over). */
  void clearAppHostStates(String appId);

  /** Record a request (status 'running', rank {@link #RANK_STARTED}), kept for {@code ttl}. */
  void startExecution(ExecutionRecord execution, Duration ttl);

  Optional<ExecutionRecord> execution(String executionId);

  /**
   * The ids of an application's executions that started at or after {@code since}, newest first, at most
   * {@code limit} (kept as long as the executions are).
   */
  List<String> recentExecutions(String appId, Instant since, int limit);

  /** An execution in an application's list: its id and when it started. */
  record ExecutionRef(String executionId, Instant started) {}

  /**
   * An application's executions that started in {@code [since, until]}, newest first (ties by id), at most
   * {@code limit}: the pages of {@code GET /api/v1/apps/{app}/executions}.
   */
  List<ExecutionRef> executionsBetween(String appId, Instant since, Instant until, int limit);

  /**
   * Record how an execution ended (status, result or error, when, its timings). Of the ends recorded for one
   * execution the one with the highest {@code rank} wins, in whatever order the writes arrive (Cassandra: the
   * rank is the write timestamp): no read-before-write, no lightweight transaction.
   */
  void endExecution(
      String executionId,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank,
      Duration ttl);

  /**
   * Record a request's start and its end together (a synchronous request, whose id nobody knows before its
   * answer): the same as {@link #startExecution} then {@link #endExecution}, in one write where the store can.
   */
  default void recordExecution(
      ExecutionRecord started,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank,
      Duration ttl) {
    startExecution(started, ttl);
    endExecution(started.executionId(), status, result, error, finished, timings, rank, ttl);
  }

  /**
   * A record of the KNIX compatibility door (docs/knix.md): a KNIX login by e-mail, a function or workflow by its
   * KNIX id, a chunk of an uploaded zip. {@code scope} is "login" or the SAND account; {@code value} is the door's
   * own encoding (JSON, or a chunk's bytes).
   */
  record KnixRecord(String scope, String kind, String id, byte[] value) {}

  /** Store a record unless (scope, kind, id) exists; false when it does (a lightweight transaction). */
  boolean claimKnixRecord(KnixRecord record);

  void putKnixRecord(KnixRecord record);

  Optional<KnixRecord> knixRecord(String scope, String kind, String id);

  /** Every record of (scope, kind), by id. */
  List<KnixRecord> knixRecords(String scope, String kind);

  void deleteKnixRecord(String scope, String kind, String id);

  /** Delete every record of (scope, kind). */
  void deleteKnixRecords(String scope, String kind);
}
