package sand.frontend;

import static sand.common.ConfigDef.SECRET;
import static sand.common.ConfigDef.Type.BOOLEAN;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.LONG;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.emptyOr;
import static sand.common.ConfigDef.matches;
import static sand.common.ConfigDef.nonBlank;

import java.time.Duration;
import java.util.Map;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;
import sand.contracts.TopicNames;
import sand.frontend.knix.KnixStorage;

/**
 * The frontend's settings, declared once ({@link #DEF}; {@code SAND_FRONTEND_<KEY>}, docs/config.md) and read
 * typed ({@link #from}); where Kafka and Cassandra are is {@link sand.cluster.ClusterSettings}'. The keys' meaning
 * is their doc in {@link #DEF}.
 */
public record FrontendSettings(
    String id,
    String host,
    int port,
    String adminKey,
    String adminKeyPrevious,
    boolean openSignup,
    long maxBodyBytes,
    long bodyBudgetBytes,
    int signUpsPerAddressPerMinute,
    int loginPerAddressPerMinute,
    int loginPerEmailPerMinute,
    int loginHashSlots,
    long knixStorageBytesPerAccount,
    int quotaAppsPerAccount,
    int quotaGrains,
    int quotaRequestsPerSecond,
    int maxConcurrentPerAccount,
    int requestTimeoutS,
    int hostMaxAgeMs,
    int heartbeatMs,
    int frontendMaxAgeMs,
    int appCacheMs,
    int executionTtlHours,
    boolean gate,
    int readyResultsSilenceMs,
    String consoleDir) {
  public static final String COMPONENT = "frontend";
  public static final String ID = "id";
  public static final String HOST = "host";
  public static final String PORT = "port";
  public static final String ADMIN_KEY = "admin.key";
  public static final String ADMIN_KEY_PREVIOUS = "admin.key.previous";
  public static final String OPEN_SIGNUP = "open.signup";
  public static final String MAX_BODY_BYTES = "max.body.bytes";
  public static final String BODY_BUDGET_BYTES = "body.budget.bytes";
  public static final String SIGNUP_PER_ADDRESS_PER_MINUTE = "signup.per.address.per.minute";
  public static final String LOGIN_PER_ADDRESS_PER_MINUTE = "login.per.address.per.minute";
  public static final String LOGIN_PER_EMAIL_PER_MINUTE = "login.per.email.per.minute";
  public static final String LOGIN_HASH_SLOTS = "login.hash.slots";
  public static final String KNIX_STORAGE_BYTES_PER_ACCOUNT = "knix.storage.bytes.per.account";
  public static final String QUOTA_APPS_PER_ACCOUNT = "quota.apps.per.account";
  public static final String QUOTA_GRAINS = "quota.grains";
  public static final String QUOTA_REQUESTS_PER_SECOND = "quota.requests.per.second";
  public static final String MAX_CONCURRENT_PER_ACCOUNT = "max.concurrent.per.account";
  public static final String REQUEST_TIMEOUT_S = "request.timeout.s";
  public static final String HOST_MAX_AGE_MS = "host.max.age.ms";
  public static final String HEARTBEAT_MS = "heartbeat.ms";
  public static final String FRONTEND_MAX_AGE_MS = "frontend.max.age.ms";
  public static final String APP_CACHE_MS = "app.cache.ms";
  public static final String EXECUTION_TTL_HOURS = "execution.ttl.hours";
  public static final String GATE = "gate";
  public static final String READY_RESULTS_SILENCE_MS = "ready.results.silence.ms";
  public static final String CONSOLE_DIR = "console.dir";

  /** Every setting: name, type, default, check and one line of doc (docs/config.md is generated from it). */
  public static final ConfigDef DEF = new ConfigDef(COMPONENT)
      .define(
          ID,
          STRING,
          "",
          emptyOr("fe-<port>", matches(TopicNames.FRONTEND_FORM, TopicNames.FRONTEND_FORM)),
          "this frontend's id: its response topic is sand.response.<id>, so it must be unique in the cluster")
      .define(
          HOST,
          STRING,
          "127.0.0.1",
          nonBlank("a host name or IP address"),
          "address the HTTP server binds")
      .define(PORT, INT, 8081, ConfigDef.PORT, "HTTP port; 0 picks a free port")
      .define(
          ADMIN_KEY,
          STRING,
          "",
          emptyOr("no admin", SECRET),
          "the operator's key: the admin API (/api/v1/admin/...), and creating accounts when open.signup is false; "
              + "make up writes one to $SAND_HOME/admin-key")
      .define(
          ADMIN_KEY_PREVIOUS,
          STRING,
          "",
          emptyOr("none", SECRET),
          "a second admin key, accepted as well while the operator rotates it: the old one, until its clients have "
              + "the new admin.key (deploy/cluster.sh rotate-admin-key; docs/operations.md \"Rotating the admin key\")")
      .define(OPEN_SIGNUP, BOOLEAN, true, "anyone may create an account with POST /api/v1/accounts")
      .define(
          MAX_BODY_BYTES,
          LONG,
          10_485_760L,
          between(1024, 1L << 30),
          "largest request body (grain upload, workflow, invocation); larger answers 413; some routes take less "
              + "(docs/api.md \"Request bodies\")")
      .define(
          BODY_BUDGET_BYTES,
          LONG,
          64L << 20,
          between(1024, 1L << 34),
          "most bytes of request bodies this frontend holds at once, over all requests (keep it well under the "
              + "heap); a body that does not fit answers 503 busy with Retry-After at once")
      .define(
          SIGNUP_PER_ADDRESS_PER_MINUTE,
          INT,
          60,
          between(0, 1_000_000),
          "sign-ups (POST /api/v1/accounts and the KNIX door's signUp) per client address per minute, a burst of as "
              + "many; more answer 429 with Retry-After; 0: no limit (the admin key is never limited)")
      .define(
          LOGIN_PER_ADDRESS_PER_MINUTE,
          INT,
          30,
          between(0, 1_000_000),
          "KNIX logins per client address per minute (a burst of as many); more answer 429 with Retry-After; 0: no "
              + "limit")
      .define(
          LOGIN_PER_EMAIL_PER_MINUTE,
          INT,
          10,
          between(0, 1_000_000),
          "KNIX logins per e-mail per minute, whoever tries (a burst of as many): a password is guessed at most this "
              + "fast; more answer 429 with Retry-After; 0: no limit")
      .define(
          LOGIN_HASH_SLOTS,
          INT,
          2,
          between(1, 64),
          "KNIX password derivations (PBKDF2, a fraction of a second of a core each) run at once; up to 8 per slot "
              + "more wait up to 5 s, the rest answer 503 busy at once")
      .define(
          KNIX_STORAGE_BYTES_PER_ACCOUNT,
          LONG,
          KnixStorage.DEFAULT_QUOTA_BYTES,
          between(0, Long.MAX_VALUE),
          "most bytes one account stores through the KNIX door's storage actions (its own space and its workflows'; "
              + "keys and values); a write past it fails with QUOTA_EXCEEDED")
      .define(
          QUOTA_APPS_PER_ACCOUNT,
          INT,
          Quotas.DEFAULTS.appsPerAccount(),
          between(1, 1_000_000),
          "most applications one account may have; one more answers 403 quota_exceeded")
      .define(
          QUOTA_GRAINS,
          INT,
          Quotas.DEFAULTS.grainsPerScope(),
          between(1, 1_000_000),
          "most grains an account may share, and most grains of its own an application may have; one more answers "
              + "403 quota_exceeded")
      .define(
          QUOTA_REQUESTS_PER_SECOND,
          INT,
          0,
          between(0, 1_000_000),
          "most requests per second to one account's applications in the cluster (each live frontend admits its "
              + "share); more answer 429; 0: no limit")
      .define(
          MAX_CONCURRENT_PER_ACCOUNT,
          INT,
          64,
          between(1, 1_000_000),
          "most requests of one account's applications in flight in the cluster (each live frontend admits its "
              + "share); more answers 429")
      .define(
          REQUEST_TIMEOUT_S,
          INT,
          30,
          between(1, 300),
          "how long a synchronous request waits for its result unless the application sets request_timeout_s")
      .define(
          HOST_MAX_AGE_MS,
          INT,
          10_000,
          between(1000, 600_000),
          "a host agent whose heartbeat is older than this is not live (not a deploy target)")
      .define(
          HEARTBEAT_MS,
          INT,
          2000,
          between(100, 60_000),
          "how often this frontend writes its heartbeat to Cassandra and looks for dead frontends (less than "
              + "frontend.max.age.ms)")
      .define(
          FRONTEND_MAX_AGE_MS,
          INT,
          10_000,
          between(1000, 600_000),
          "a frontend whose heartbeat is older than this is dead: a live frontend reads its response topic for it "
              + "until it is back")
      .define(
          APP_CACHE_MS,
          INT,
          1000,
          between(0, 600_000),
          "how long an invocation may use what it read of an application (deployed? entry grain? owner?) before "
              + "it is read again, in the background (requests meanwhile use what was read; 0: every request reads); "
              + "changes made through this frontend apply at once")
      .define(
          EXECUTION_TTL_HOURS,
          INT,
          168,
          between(1, 24 * 365),
          "how long executions' records (status, result, timings) are kept in Cassandra")
      .define(
          GATE,
          BOOLEAN,
          true,
          "hand requests to the host agents' gates and take results from them "
              + "(Kafka still gets both); false = every request and result through Kafka only")
      .define(
          READY_RESULTS_SILENCE_MS,
          INT,
          10_000,
          between(1000, 600_000),
          "not ready (GET /readyz 503; invocations declined, so nginx sends them to another frontend) once Kafka "
              + "has not answered this frontend's response topic for this long and no host agent's gate is "
              + "connected: results could not reach it")
      .define(
          CONSOLE_DIR,
          STRING,
          "",
          "the built web console (console/dist; docs/console.md), served at /console/; "
              + "empty = no console (deploy/frontend.sh sets it)");

  public FrontendSettings {
    // a frontend that beats less often than others judge it dead by is taken for dead between its
    // beats
    if (heartbeatMs >= frontendMaxAgeMs) {
      throw new ConfigDef.ConfigException(
          COMPONENT + ": " + HEARTBEAT_MS + "=" + heartbeatMs + " must be less than "
              + FRONTEND_MAX_AGE_MS + "=" + frontendMaxAgeMs
              + " (a live frontend would be taken for dead between its "
              + "heartbeats); lower SAND_FRONTEND_HEARTBEAT_MS or raise SAND_FRONTEND_FRONTEND_MAX_AGE_MS");
    }
  }

  /** The settings of a parsed config. */
  public static FrontendSettings from(Config c) {
    return new FrontendSettings(
        c.getString(ID),
        c.getString(HOST),
        c.getInt(PORT),
        c.getString(ADMIN_KEY),
        c.getString(ADMIN_KEY_PREVIOUS),
        c.getBoolean(OPEN_SIGNUP),
        c.getLong(MAX_BODY_BYTES),
        c.getLong(BODY_BUDGET_BYTES),
        c.getInt(SIGNUP_PER_ADDRESS_PER_MINUTE),
        c.getInt(LOGIN_PER_ADDRESS_PER_MINUTE),
        c.getInt(LOGIN_PER_EMAIL_PER_MINUTE),
        c.getInt(LOGIN_HASH_SLOTS),
        c.getLong(KNIX_STORAGE_BYTES_PER_ACCOUNT),
        c.getInt(QUOTA_APPS_PER_ACCOUNT),
        c.getInt(QUOTA_GRAINS),
        c.getInt(QUOTA_REQUESTS_PER_SECOND),
        c.getInt(MAX_CONCURRENT_PER_ACCOUNT),
        c.getInt(REQUEST_TIMEOUT_S),
        c.getInt(HOST_MAX_AGE_MS),
        c.getInt(HEARTBEAT_MS),
        c.getInt(FRONTEND_MAX_AGE_MS),
        c.getInt(APP_CACHE_MS),
        c.getInt(EXECUTION_TTL_HOURS),
        c.getBoolean(GATE),
        c.getInt(READY_RESULTS_SILENCE_MS),
        c.getString(CONSOLE_DIR));
  }

  /** Every setting at its default, but those in {@code overrides} (tests). */
  public static FrontendSettings of(Map<String, String> overrides) {
    return from(DEF.parse(Map.of(), overrides));
  }

  /** This frontend's id: the setting, or fe-&lt;port&gt;. */
  public String frontendId() {
    return id.isEmpty() ? "fe-" + port : id;
  }

  public Duration hostMaxAge() {
    return Duration.ofMillis(hostMaxAgeMs);
  }

  public Duration heartbeat() {
    return Duration.ofMillis(heartbeatMs);
  }

  public Duration frontendMaxAge() {
    return Duration.ofMillis(frontendMaxAgeMs);
  }

  public Duration readyResultsSilence() {
    return Duration.ofMillis(readyResultsSilenceMs);
  }

  public Duration appCache() {
    return Duration.ofMillis(appCacheMs);
  }

  public Duration executionTtl() {
    return Duration.ofHours(executionTtlHours);
  }
}
