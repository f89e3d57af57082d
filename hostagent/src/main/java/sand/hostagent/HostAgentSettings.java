package sand.hostagent;

import static sand.common.ConfigDef.PORT;
import static sand.common.ConfigDef.SECRET;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.emptyOr;
import static sand.common.ConfigDef.matches;
import static sand.common.ConfigDef.or;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import sand.cluster.ClusterSettings;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Check;
import sand.common.ConfigDef.Config;
import sand.hostagent.bridge.BridgeSettings;
import sand.hostagent.cluster.SchedulerSettings;
import sand.hostagent.sandbox.SandboxSettings;
import sand.localbus.LocalBusSettings;

/**
 * The host agent's settings, declared once ({@link #DEF}: SAND_HOSTAGENT_&lt;KEY&gt;) and read back typed with
 * {@link #from}: its own, then those of the embedded bus ({@code bus.}), bridge ({@code bridge.}) and sandboxes
 * ({@code sandbox.}). The data layer's are SAND_DATALAYER_&lt;KEY&gt;, the cluster's Kafka and Cassandra
 * {@link ClusterSettings} (SAND_CLUSTER_&lt;KEY&gt;).
 *
 * @param hostId               this host's id in the cluster ({@code host.id}, or the host name)
 * @param credential           the agent's own credential, or "" for a random one
 * @param gatePort             the gate's TCP port; 0 picks one, -1 turns the gate off
 * @param metricsPort          the Prometheus endpoint's port; 0 picks one
 * @param heartbeat            how often this host writes its heartbeat
 * @param failAfter            a heartbeat older than this is a failed host
 * @param topicPartitions      partitions of each grain topic
 * @param socketsDir           where the applications' sockets go (the sandbox state folder's sockets/ when unset)
 * @param reconcile            how often every application is reconciled as a safety net
 * @param controlThreads       applications deployed at once
 * @param deploy               how deploys are bounded and retried, and how long a new application waits for the
 *                             bridge's partitions of its grains
 * @param logTtl               how long instances' log lines are kept
 * @param poisonDeaths         agent deaths an event in flight may cause before it goes to the dead letters
 */
public record HostAgentSettings(
    String hostId,
    String credential,
    int gatePort,
    int metricsPort,
    Duration heartbeat,
    Duration failAfter,
    int topicPartitions,
    Path socketsDir,
    Duration reconcile,
    int controlThreads,
    ApplicationDeployer.DeployPolicy deploy,
    Duration logTtl,
    int poisonDeaths,
    LocalBusSettings bus,
    BridgeSettings bridge,
    SandboxSettings sandbox,
    SchedulerSettings scheduler) {

  public static final String COMPONENT = "hostagent";
  public static final String HOST_ID = "host.id";
  public static final String CREDENTIAL = "credential";
  public static final String GATE_PORT = "gate.port";
  public static final String METRICS_PORT = "metrics.port";
  public static final String HEARTBEAT_MS = "heartbeat.ms";
  public static final String FAIL_AFTER_MS = "fail.after.ms";
  public static final String TOPIC_PARTITIONS = "topic.partitions";
  public static final String SOCKETS_DIR = "sockets.dir";
  public static final String RECONCILE_MS = "reconcile.ms";
  public static final String CONTROL_THREADS = "control.threads";
  public static final String DEPLOY_PARTITIONS_WAIT_S = "deploy.partitions.wait.s";
  public static final String DEPLOY_WORKERS_TIMEOUT_S = "deploy.workers.timeout.s";
  public static final String DEPLOY_RETRY_INITIAL_S = "deploy.retry.initial.s";
  public static final String DEPLOY_RETRY_MAX_S = "deploy.retry.max.s";
  public static final String LOG_TTL_HOURS = "log.ttl.hours";
  public static final String POISON_DEATHS = "poison.deaths";
  /** Prefixes of the embedded parts' settings. */
  public static final String BUS = "bus.";

  public static final String BRIDGE = "bridge.";
  public static final String SANDBOX = "sandbox.";
  public static final String SCHEDULER = "scheduler.";

  /** A folder name: it parses as a path and is not an existing file (the folder is created when missing). */
  static final Check FOLDER = Check.of(
      v -> {
        try {
          return !Files.exists(Path.of((String) v)) || Files.isDirectory(Path.of((String) v));
        } catch (InvalidPathException e) {
          return false;
        }
      },
      "a folder, or empty for <sandbox.state.dir>/sockets");

  public static final ConfigDef DEF = SchedulerSettings.declare(
      SandboxSettings.declare(
          BridgeSettings.declare(
              LocalBusSettings.declare(
                  new ConfigDef(COMPONENT)
                      .define(
                          HOST_ID,
                          STRING,
                          "",
                          emptyOr(
                              "the host name",
                              matches("[A-Za-z0-9_.-]{1,64}", "1-64 letters, digits, _ . -")),
                          "this host's id in the cluster")
                      .define(
                          CREDENTIAL,
                          STRING,
                          "",
                          emptyOr("random", SECRET),
                          "the host agent's own credential for the local bus and data layer")
                      .define(
                          GATE_PORT,
                          INT,
                          9192,
                          or(-1, "no gate", PORT),
                          "TCP port of the gate frontends hand requests to and take results from (on bus.host); 0 picks a free port, "
                              + "-1 turns the gate off (every request and result then goes through Kafka)")
                      .define(
                          METRICS_PORT,
                          INT,
                          9100,
                          PORT,
                          "Prometheus metrics on http://<bus.host>:<port>/metrics; 0 picks a free port")
                      .define(
                          HEARTBEAT_MS,
                          INT,
                          2000,
                          between(100, 60_000),
                          "how often this host writes its heartbeat to Cassandra")
                      .define(
                          FAIL_AFTER_MS,
                          INT,
                          10_000,
                          between(1000, 600_000),
                          "a host whose heartbeat is older than this is considered failed")
                      .define(
                          TOPIC_PARTITIONS,
                          INT,
                          4,
                          between(1, 1000),
                          "partitions of each grain topic at least: a deploy gives a topic as many as the cluster has live hosts when "
                              + "that is more (a host added later grows them when it deploys the application), so every host "
                              + "can own one")
                      .define(
                          SOCKETS_DIR,
                          STRING,
                          "",
                          FOLDER,
                          "where each application's bus.sock and data.sock are created")
                      .define(
                          RECONCILE_MS,
                          INT,
                          30_000,
                          between(1000, 3_600_000),
                          "how often the agent re-reads the cluster state as a safety net for missed control events")
                      .define(
                          CONTROL_THREADS,
                          INT,
                          8,
                          between(1, 256),
                          "applications deployed at once (one application's deploys always run one at a time)")
                      .define(
                          DEPLOY_PARTITIONS_WAIT_S,
                          INT,
                          15,
                          between(0, 600),
                          "longest wait, after a new application's grain workers are up, for Kafka to assign this host partitions of "
                              + "its grains' topics before it is reported deployed (until then its requests go through Kafka, ~1 s)")
                      .define(
                          DEPLOY_WORKERS_TIMEOUT_S,
                          INT,
                          60,
                          between(1, 3600),
                          "longest wait for a new sandbox's grain workers to poll their queues before the deploy fails")
                      .define(
                          DEPLOY_RETRY_INITIAL_S,
                          INT,
                          30,
                          between(1, 86_400),
                          "first wait before a failed deploy is tried again (doubling per failure)")
                      .define(
                          DEPLOY_RETRY_MAX_S,
                          INT,
                          1800,
                          between(1, 86_400),
                          "longest wait between attempts of a failed deploy")
                      .define(
                          LOG_TTL_HOURS,
                          INT,
                          168,
                          between(1, 24 * 365),
                          "how long instances' log lines are kept in Cassandra")
                      .define(
                          POISON_DEATHS,
                          INT,
                          3,
                          between(1, 1000),
                          "an event found in flight by this many starts of the host agent (its processing took the agent down each "
                              + "time) is not replayed again: it goes to the dead letters (<sandbox.state.dir>/dead-letters.jsonl) "
                              + "and its caller gets a 'Poison' error"),
                  BUS),
              BRIDGE),
          SANDBOX),
      SCHEDULER);

  /**
   * Read the settings {@link #DEF} parsed into {@code c}. {@code env} holds {@code SAND_HOME}, the sandbox state
   * folder's default.
   */
  public static HostAgentSettings from(Config c, Map<String, String> env) {
    String hostId = hostId(c);
    SandboxSettings sandbox = SandboxSettings.from(c, SANDBOX, env);
    String sockets = c.getString(SOCKETS_DIR);
    return new HostAgentSettings(
        hostId,
        c.getString(CREDENTIAL),
        c.getInt(GATE_PORT),
        c.getInt(METRICS_PORT),
        Duration.ofMillis(c.getInt(HEARTBEAT_MS)),
        Duration.ofMillis(c.getInt(FAIL_AFTER_MS)),
        c.getInt(TOPIC_PARTITIONS),
        sockets.isEmpty() ? sandbox.stateDir().resolve("sockets") : Path.of(sockets),
        Duration.ofMillis(c.getInt(RECONCILE_MS)),
        c.getInt(CONTROL_THREADS),
        new ApplicationDeployer.DeployPolicy(
            Duration.ofSeconds(c.getInt(DEPLOY_WORKERS_TIMEOUT_S)),
            Duration.ofSeconds(c.getInt(DEPLOY_RETRY_INITIAL_S)),
            Duration.ofSeconds(c.getInt(DEPLOY_RETRY_MAX_S)),
            Duration.ofSeconds(c.getInt(DEPLOY_PARTITIONS_WAIT_S))),
        Duration.ofHours(c.getInt(LOG_TTL_HOURS)),
        c.getInt(POISON_DEATHS),
        LocalBusSettings.from(c, BUS),
        BridgeSettings.from(c, BRIDGE, hostId),
        sandbox,
        SchedulerSettings.from(c, SCHEDULER));
  }

  /** This host's id in the cluster: the setting {@code host.id}, or the host name. */
  static String hostId(Config c) {
    return c.getString(HOST_ID).isEmpty() ? hostName() : c.getString(HOST_ID);
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9_.-]", "-");
    } catch (UnknownHostException e) {
      return "host";
    }
  }
}
