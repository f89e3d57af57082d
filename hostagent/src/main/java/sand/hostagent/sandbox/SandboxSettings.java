package sand.hostagent.sandbox;

import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.matches;
import static sand.common.ConfigDef.nonBlank;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Check;
import sand.common.ConfigDef.Type;

/**
 * The sandbox settings of a host agent, declared once. The host agent declares them under a prefix of
 * its own ({@code sandbox.}, so {@code SAND_HOSTAGENT_SANDBOX_IMAGE}) with {@link #declare} and reads
 * them back with {@link #from}. Tests derive variants with {@link #with}.
 *
 * @param stateDir        folder of the applications' prepared folders (code, libraries, sandbox.json)
 * @param image           the sandbox image (also runs dependency installs)
 * @param dockerSocket    the Docker Engine's Unix socket
 * @param pipAllowedHosts host:port pairs a dependency install may reach (empty: none, installs refused)
 * @param pipIndexUrl     the package index pip uses ("" = pip's default)
 * @param pipCert         CA bundle handed to pip in the install container (null = the image's own)
 * @param pipTimeout      longest a dependency install may take
 * @param pipMemoryMb     memory of the install container
 * @param pipTmpMb        size of its /tmp (pip's build space)
 * @param pipOutputMaxMb  most MB an install may produce (the tmpfs pip installs into)
 * @param stopGrace       how long the supervisor waits for its workers on stop; Docker's stop timeout is this + 5 s
 * @param tmpfsMb         size of the sandbox's writable /tmp
 * @param user            uid:gid the sandbox (and an install container) runs as
 * @param standby         grain workers keep a pre-forked standby instance
 * @param localShortcut   grain instances put events for grains of their own sandbox straight into those grains' local
 *                        queues (paper §4.2, the hierarchical bus); false: every hop goes through Kafka and back
 *                        (a baseline: what the local bus buys, benchmarks/interaction_latency.py)
 * @param workerRestartInitial first back-off of the supervisor before restarting a dead grain worker
 * @param workerRestartMax longest back-off between restarts of a grain worker
 * @param restartInitial  first back-off before the host agent restarts a dead sandbox
 * @param restartMax      longest back-off between restarts of a sandbox
 * @param codeMaxBytes    most bytes an application's code may unpack to
 * @param zipMaxEntries   most entries in one zip resource
 * @param logMaxMb        a sandbox's (or install container's) stdout/stderr kept by Docker is rotated at this size
 * @param logMaxFiles     ... and at most this many files are kept
 * @param labels          extra labels on every container (e.g. to find a test run's containers)
 */
public record SandboxSettings(
    Path stateDir,
    String image,
    Path dockerSocket,
    List<String> pipAllowedHosts,
    String pipIndexUrl,
    Path pipCert,
    Duration pipTimeout,
    int pipMemoryMb,
    int pipTmpMb,
    int pipOutputMaxMb,
    Duration stopGrace,
    int tmpfsMb,
    String user,
    boolean standby,
    boolean localShortcut,
    Duration workerRestartInitial,
    Duration workerRestartMax,
    Duration restartInitial,
    Duration restartMax,
    long codeMaxBytes,
    int zipMaxEntries,
    int logMaxMb,
    int logMaxFiles,
    Map<String, String> labels) {

  public static final String STATE_DIR = "state.dir";
  public static final String IMAGE = "image";
  public static final String DOCKER_SOCKET = "docker.socket";
  public static final String PIP_ALLOWED_HOSTS = "pip.allowed.hosts";
  public static final String PIP_INDEX_URL = "pip.index.url";
  public static final String PIP_CERT = "pip.cert";
  public static final String PIP_TIMEOUT_S = "pip.timeout.s";
  public static final String PIP_MEMORY_MB = "pip.memory.mb";
  public static final String PIP_TMP_MB = "pip.tmp.mb";
  public static final String PIP_OUTPUT_MAX_MB = "pip.output.max.mb";
  public static final String STOP_GRACE_S = "stop.grace.s";
  public static final String TMPFS_MB = "tmpfs.mb";
  public static final String USER = "user";
  public static final String STANDBY = "standby";
  public static final String LOCAL_SHORTCUT = "local.shortcut";
  public static final String WORKER_RESTART_INITIAL_MS = "worker.restart.initial.ms";
  public static final String WORKER_RESTART_MAX_MS = "worker.restart.max.ms";
  public static final String RESTART_INITIAL_MS = "restart.initial.ms";
  public static final String RESTART_MAX_MS = "restart.max.ms";
  public static final String CODE_MAX_BYTES = "code.max.bytes";
  public static final String ZIP_MAX_ENTRIES = "zip.max.entries";
  public static final String LOG_MAX_MB = "log.max.mb";
  public static final String LOG_MAX_FILES = "log.max.files";

  private static final Pattern HOST_PORT =
      Pattern.compile("[a-z0-9]([a-z0-9.-]*[a-z0-9])?:\\d{1,5}");

  public SandboxSettings {
    labels = Map.copyOf(labels);
    pipAllowedHosts = List.copyOf(pipAllowedHosts);
    for (String h : pipAllowedHosts) {
      if (!HOST_PORT.matcher(h).matches()) {
        throw new IllegalArgumentException("sandbox: " + PIP_ALLOWED_HOSTS + " entry '" + h
            + "' must be host:port in " + "lower case, e.g. index.example.org:443");
      }
    }
    if (pipCert != null && !Files.isReadable(pipCert)) {
      throw new IllegalArgumentException(
          "sandbox: " + PIP_CERT + "=" + pipCert + " is not a readable file");
    }
    if (!user.matches("\\d+:\\d+")) {
      throw new IllegalArgumentException(
          "sandbox: user '" + user + "' must be uid:gid (numbers), e.g. 1000:1000");
    }
    if (user.startsWith("0:")) {
      throw new IllegalArgumentException("sandbox: user must not be root (uid 0)");
    }
  }

  /** The default state folder: {@code $SAND_HOME/sandboxes}, SAND_HOME defaulting to {@code .sand}. */
  static String defaultStateDir(Map<String, String> env) {
    String home = env.getOrDefault("SAND_HOME", ".sand");
    return Path.of(home.isBlank() ? ".sand" : home, "sandboxes").toString();
  }

  /** Declare the sandbox settings in {@code def}, each key prefixed with {@code prefix} (e.g. "sandbox."). */
  public static ConfigDef declare(ConfigDef def, String prefix) {
    return def.define(
            prefix + STATE_DIR,
            Type.STRING,
            "",
            "folder of the applications' prepared sandboxes (code, "
                + "pip libraries, sandbox.json); empty = $SAND_HOME/sandboxes")
        .define(
            prefix + IMAGE,
            Type.STRING,
            "sand-sandbox:latest",
            nonBlank("an image name"),
            "the sandbox image (deploy/sandbox-image.sh builds it); dependency installs run in it too")
        .define(
            prefix + DOCKER_SOCKET,
            Type.STRING,
            DockerHttpEngine.DEFAULT_SOCKET.toString(),
            "the Docker Engine's Unix socket")
        .define(
            prefix + PIP_ALLOWED_HOSTS,
            Type.STRING,
            "",
            Check.of(
                v -> hosts((String) v).stream()
                    .allMatch(h -> HOST_PORT.matcher(h).matches()),
                "comma-separated host:port, or empty"),
            "the only hosts a dependency install may reach (the package index and its file host); empty = "
                + "requirements are refused. deploy/hostagent.sh fills it from this host's pip configuration")
        .define(
            prefix + PIP_INDEX_URL,
            Type.STRING,
            "",
            Check.of(v -> isUrlOrEmpty((String) v), "a URL, or empty"),
            "the package index pip uses in the install container; empty = pip's default")
        .define(
            prefix + PIP_CERT,
            Type.STRING,
            "",
            Check.of(v -> isReadableOrEmpty((String) v), "a readable file, or empty"),
            "CA bundle handed to pip in the install container (e.g. the host's); empty = the image's")
        .define(
            prefix + PIP_TIMEOUT_S,
            Type.INT,
            600,
            between(1, 86_400),
            "longest a dependency install may take before the deploy fails")
        .define(
            prefix + PIP_MEMORY_MB,
            Type.INT,
            1024,
            between(64, 1 << 20),
            "memory of a dependency install container")
        .define(
            prefix + PIP_TMP_MB,
            Type.INT,
            1024,
            between(16, 1 << 20),
            "pip's build space in the install container (tmpfs, counts against its memory)")
        .define(
            prefix + PIP_OUTPUT_MAX_MB,
            Type.INT,
            512,
            between(1, 1 << 20),
            "most MB an application's installed requirements may take")
        .define(
            prefix + STOP_GRACE_S,
            Type.INT,
            15,
            between(0, 3600),
            "on undeploy, how long grain workers may finish their instances after SIGTERM")
        .define(
            prefix + TMPFS_MB,
            Type.INT,
            64,
            between(1, 1 << 20),
            "size of the sandbox's writable /tmp (counts against its memory)")
        .define(
            prefix + USER,
            Type.STRING,
            "1000:1000",
            matches("[1-9]\\d*:\\d+", "uid:gid, not root"),
            "user the sandbox runs as (the image's 'sand')")
        .define(
            prefix + STANDBY,
            Type.BOOLEAN,
            true,
            "grain workers keep a pre-forked standby instance")
        .define(
            prefix + LOCAL_SHORTCUT,
            Type.BOOLEAN,
            true,
            "grain instances hand events for grains of their own "
                + "sandbox straight to the local queues (the hierarchical bus); false: every hop through Kafka (a baseline "
                + "for benchmarks)")
        .define(
            prefix + WORKER_RESTART_INITIAL_MS,
            Type.INT,
            500,
            between(0, 600_000),
            "first back-off before the supervisor restarts a dead grain worker")
        .define(
            prefix + WORKER_RESTART_MAX_MS,
            Type.INT,
            30_000,
            between(0, 3_600_000),
            "longest back-off between restarts of a grain worker")
        .define(
            prefix + RESTART_INITIAL_MS,
            Type.INT,
            1000,
            between(0, 600_000),
            "first back-off before the host agent restarts a dead sandbox")
        .define(
            prefix + RESTART_MAX_MS,
            Type.INT,
            60_000,
            between(0, 3_600_000),
            "longest back-off between restarts of a sandbox")
        .define(
            prefix + CODE_MAX_BYTES,
            Type.LONG,
            256L << 20,
            between(1, Long.MAX_VALUE),
            "most bytes an application's code (all resources, unzipped) may take")
        .define(
            prefix + ZIP_MAX_ENTRIES,
            Type.INT,
            10_000,
            between(1, 1_000_000),
            "most entries in one zip resource")
        .define(
            prefix + LOG_MAX_MB,
            Type.INT,
            10,
            between(1, 1 << 14),
            "a container's stdout/stderr (what a grain "
                + "writes to fd 1 or 2, the supervisor's own lines, pip's output) is rotated by Docker at this many MB")
        .define(
            prefix + LOG_MAX_FILES,
            Type.INT,
            3,
            between(1, 100),
            "most rotated log files Docker keeps per "
                + "container: its logs never take more than log.max.mb x log.max.files on the host's disk");
  }

  /** The host:port pairs of {@code pip.allowed.hosts}, lower-cased (the check and the reading split it alike). */
  private static List<String> hosts(String value) {
    String hosts = value.strip();
    return hosts.isEmpty()
        ? List.of()
        : Arrays.stream(hosts.split(","))
            .map(String::strip)
            .map(h -> h.toLowerCase(Locale.ROOT))
            .filter(h -> !h.isEmpty())
            .toList();
  }

  private static boolean isUrlOrEmpty(String value) {
    try {
      return value.isBlank() || new URI(value.strip()).isAbsolute();
    } catch (URISyntaxException e) {
      return false;
    }
  }

  private static boolean isReadableOrEmpty(String value) {
    try {
      return value.isBlank() || Files.isReadable(Path.of(value.strip()));
    } catch (InvalidPathException e) {
      return false;
    }
  }

  /** Read the settings declared by {@link #declare} under {@code prefix}; empty defaults from the environment. */
  public static SandboxSettings from(ConfigDef.Config c, String prefix, Map<String, String> env) {
    String state = c.getString(prefix + STATE_DIR);
    String cert = c.getString(prefix + PIP_CERT).strip();
    return new SandboxSettings(
        Path.of(state.isBlank() ? defaultStateDir(env) : state).toAbsolutePath(),
        c.getString(prefix + IMAGE),
        Path.of(c.getString(prefix + DOCKER_SOCKET)),
        hosts(c.getString(prefix + PIP_ALLOWED_HOSTS)),
        c.getString(prefix + PIP_INDEX_URL).strip(),
        cert.isEmpty() ? null : Path.of(cert),
        Duration.ofSeconds(c.getInt(prefix + PIP_TIMEOUT_S)),
        c.getInt(prefix + PIP_MEMORY_MB),
        c.getInt(prefix + PIP_TMP_MB),
        c.getInt(prefix + PIP_OUTPUT_MAX_MB),
        Duration.ofSeconds(c.getInt(prefix + STOP_GRACE_S)),
        c.getInt(prefix + TMPFS_MB),
        c.getString(prefix + USER),
        c.getBoolean(prefix + STANDBY),
        c.getBoolean(prefix + LOCAL_SHORTCUT),
        Duration.ofMillis(c.getInt(prefix + WORKER_RESTART_INITIAL_MS)),
        Duration.ofMillis(c.getInt(prefix + WORKER_RESTART_MAX_MS)),
        Duration.ofMillis(c.getInt(prefix + RESTART_INITIAL_MS)),
        Duration.ofMillis(c.getInt(prefix + RESTART_MAX_MS)),
        c.getLong(prefix + CODE_MAX_BYTES),
        c.getInt(prefix + ZIP_MAX_ENTRIES),
        c.getInt(prefix + LOG_MAX_MB),
        c.getInt(prefix + LOG_MAX_FILES),
        Map.of());
  }

  /** Every setting at its default, state in {@code stateDir} (tests). */
  public static SandboxSettings defaults(Path stateDir) {
    return with(stateDir, Map.of());
  }

  /** The defaults with some settings given as their keys (without prefix) and values, state in {@code stateDir}. */
  public static SandboxSettings with(Path stateDir, Map<String, String> overrides) {
    ConfigDef def = declare(new ConfigDef("hostagent"), "");
    Map<String, String> all = new HashMap<>(overrides);
    all.put(STATE_DIR, stateDir.toString());
    return from(def.parse(Map.of(), all), "", System.getenv());
  }

  /** What Docker keeps of a container's stdout/stderr. */
  public DockerEngine.LogLimits logLimits() {
    return new DockerEngine.LogLimits((long) logMaxMb << 20, logMaxFiles);
  }

  public SandboxSettings withImage(String image) {
    return new SandboxSettings(
        stateDir,
        image,
        dockerSocket,
        pipAllowedHosts,
        pipIndexUrl,
        pipCert,
        pipTimeout,
        pipMemoryMb,
        pipTmpMb,
        pipOutputMaxMb,
        stopGrace,
        tmpfsMb,
        user,
        standby,
        localShortcut,
        workerRestartInitial,
        workerRestartMax,
        restartInitial,
        restartMax,
        codeMaxBytes,
        zipMaxEntries,
        logMaxMb,
        logMaxFiles,
        labels);
  }

  public SandboxSettings withLabels(Map<String, String> labels) {
    return new SandboxSettings(
        stateDir,
        image,
        dockerSocket,
        pipAllowedHosts,
        pipIndexUrl,
        pipCert,
        pipTimeout,
        pipMemoryMb,
        pipTmpMb,
        pipOutputMaxMb,
        stopGrace,
        tmpfsMb,
        user,
        standby,
        localShortcut,
        workerRestartInitial,
        workerRestartMax,
        restartInitial,
        restartMax,
        codeMaxBytes,
        zipMaxEntries,
        logMaxMb,
        logMaxFiles,
        labels);
  }

  /** The package index an install may reach: allowed host:port pairs, index URL ("" = pip's), CA bundle or null. */
  public SandboxSettings withPackageIndex(List<String> allowedHosts, String indexUrl, Path cert) {
    return new SandboxSettings(
        stateDir,
        image,
        dockerSocket,
        allowedHosts,
        indexUrl,
        cert,
        pipTimeout,
        pipMemoryMb,
        pipTmpMb,
        pipOutputMaxMb,
        stopGrace,
        tmpfsMb,
        user,
        standby,
        localShortcut,
        workerRestartInitial,
        workerRestartMax,
        restartInitial,
        restartMax,
        codeMaxBytes,
        zipMaxEntries,
        logMaxMb,
        logMaxFiles,
        labels);
  }
}
