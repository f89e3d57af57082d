package sand.hostagent.sandbox;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Type;

/**
 * The sandbox settings of a host agent, declared once. The host agent declares them under a prefix of
 * its own ({@code sandbox.}, so {@code SAND_HOSTAGENT_SANDBOX_IMAGE}) with {@link #declare} and reads
 * them back with {@link #from}.
 *
 * @param stateDir        folder of the applications' prepared folders (code, libraries, sandbox.json)
 * @param image           the sandbox image
 * @param dockerSocket    the Docker Engine's Unix socket
 * @param pipCommand      the pip that installs requirements on the host (its Python must be the image's version)
 * @param pipTimeout      longest a pip install may take
 * @param stopGrace       how long the supervisor waits for its workers on stop; Docker's stop timeout is this + 5 s
 * @param tmpfsMb         size of the sandbox's writable /tmp
 * @param user            uid:gid the sandbox runs as
 * @param standby         grain workers keep a pre-forked standby instance
 * @param workerRestartInitial first back-off of the supervisor before restarting a dead grain worker
 * @param workerRestartMax longest back-off between restarts of a grain worker
 * @param restartInitial  first back-off before the host agent restarts a dead sandbox
 * @param restartMax      longest back-off between restarts of a sandbox
 * @param codeMaxBytes    most bytes an application's code may unpack to
 * @param zipMaxEntries   most entries in one zip resource
 * @param labels          extra labels on every sandbox container (e.g. to find a test run's containers)
 */
public record SandboxSettings(Path stateDir, String image, Path dockerSocket, List<String> pipCommand,
                              Duration pipTimeout, Duration stopGrace, int tmpfsMb, String user, boolean standby,
                              Duration workerRestartInitial, Duration workerRestartMax, Duration restartInitial,
                              Duration restartMax, long codeMaxBytes, int zipMaxEntries, Map<String, String> labels) {

  public static final String STATE_DIR = "state.dir";
  public static final String IMAGE = "image";
  public static final String DOCKER_SOCKET = "docker.socket";
  public static final String PIP_COMMAND = "pip.command";
  public static final String PIP_TIMEOUT_S = "pip.timeout.s";
  public static final String STOP_GRACE_S = "stop.grace.s";
  public static final String TMPFS_MB = "tmpfs.mb";
  public static final String USER = "user";
  public static final String STANDBY = "standby";
  public static final String WORKER_RESTART_INITIAL_MS = "worker.restart.initial.ms";
  public static final String WORKER_RESTART_MAX_MS = "worker.restart.max.ms";
  public static final String RESTART_INITIAL_MS = "restart.initial.ms";
  public static final String RESTART_MAX_MS = "restart.max.ms";
  public static final String CODE_MAX_BYTES = "code.max.bytes";
  public static final String ZIP_MAX_ENTRIES = "zip.max.entries";

  public SandboxSettings {
    labels = Map.copyOf(labels);
    pipCommand = List.copyOf(pipCommand);
    if (pipCommand.isEmpty()) {
      throw new IllegalArgumentException("sandbox: pip command is empty: name a pip, e.g. $SAND_VENV/bin/pip");
    }
    if (!user.matches("\\d+:\\d+")) {
      throw new IllegalArgumentException("sandbox: user '" + user + "' must be uid:gid (numbers), e.g. 1000:1000");
    }
    if (user.startsWith("0:")) {
      throw new IllegalArgumentException("sandbox: user must not be root (uid 0)");
    }
  }

  /** The default pip: {@code $SAND_VENV/bin/pip} when SAND_VENV is set, else {@code pip} on the PATH. */
  static String defaultPip(Map<String, String> env) {
    String venv = env.get("SAND_VENV");
    return venv == null || venv.isBlank() ? "pip" : Path.of(venv, "bin", "pip").toString();
  }

  /** The default state folder: {@code $SAND_HOME/sandboxes}, SAND_HOME defaulting to {@code .sand}. */
  static String defaultStateDir(Map<String, String> env) {
    String home = env.getOrDefault("SAND_HOME", ".sand");
    return Path.of(home.isBlank() ? ".sand" : home, "sandboxes").toString();
  }

  /** Declare the sandbox settings in {@code def}, each key prefixed with {@code prefix} (e.g. "sandbox."). */
  public static ConfigDef declare(ConfigDef def, String prefix) {
    return def
        .define(prefix + STATE_DIR, Type.STRING, "", "folder of the applications' prepared sandboxes (code, "
            + "pip libraries, sandbox.json); empty = $SAND_HOME/sandboxes")
        .define(prefix + IMAGE, Type.STRING, "sand-sandbox:latest", v -> !((String) v).isBlank(), "an image name",
            "the sandbox image (deploy/sandbox-image.sh builds it)")
        .define(prefix + DOCKER_SOCKET, Type.STRING, DockerHttpEngine.DEFAULT_SOCKET.toString(),
            "the Docker Engine's Unix socket")
        .define(prefix + PIP_COMMAND, Type.STRING, "", "the pip that installs applications' requirements on the host "
            + "(pip install --target); its Python must be the image's version; empty = $SAND_VENV/bin/pip")
        .define(prefix + PIP_TIMEOUT_S, Type.INT, 600, ConfigDef.between(1, 86_400), "seconds in [1, 86400]",
            "longest a pip install may take before the deploy fails")
        .define(prefix + STOP_GRACE_S, Type.INT, 15, ConfigDef.between(0, 3600), "seconds in [0, 3600]",
            "on undeploy, how long grain workers may finish their instances after SIGTERM")
        .define(prefix + TMPFS_MB, Type.INT, 64, ConfigDef.between(1, 1 << 20), "MB in [1, 1048576]",
            "size of the sandbox's writable /tmp (counts against its memory)")
        .define(prefix + USER, Type.STRING, "1000:1000", v -> ((String) v).matches("[1-9]\\d*:\\d+"),
            "uid:gid, not root", "user the sandbox runs as (the image's 'sand')")
        .define(prefix + STANDBY, Type.BOOLEAN, true, "grain workers keep a pre-forked standby instance")
        .define(prefix + WORKER_RESTART_INITIAL_MS, Type.INT, 500, ConfigDef.between(0, 600_000),
            "ms in [0, 600000]", "first back-off before the supervisor restarts a dead grain worker")
        .define(prefix + WORKER_RESTART_MAX_MS, Type.INT, 30_000, ConfigDef.between(0, 3_600_000),
            "ms in [0, 3600000]", "longest back-off between restarts of a grain worker")
        .define(prefix + RESTART_INITIAL_MS, Type.INT, 1000, ConfigDef.between(0, 600_000), "ms in [0, 600000]",
            "first back-off before the host agent restarts a dead sandbox")
        .define(prefix + RESTART_MAX_MS, Type.INT, 60_000, ConfigDef.between(0, 3_600_000), "ms in [0, 3600000]",
            "longest back-off between restarts of a sandbox")
        .define(prefix + CODE_MAX_BYTES, Type.LONG, 256L << 20, v -> ((Number) v).longValue() > 0,
            "a positive number of bytes", "most bytes an application's code (all resources, unzipped) may take")
        .define(prefix + ZIP_MAX_ENTRIES, Type.INT, 10_000, ConfigDef.between(1, 1_000_000),
            "an integer in [1, 1000000]", "most entries in one zip resource");
  }

  /** Read the settings declared by {@link #declare} under {@code prefix}; empty defaults from the environment. */
  public static SandboxSettings from(ConfigDef.Config c, String prefix, Map<String, String> env) {
    String state = c.getString(prefix + STATE_DIR);
    String pip = c.getString(prefix + PIP_COMMAND);
    return new SandboxSettings(Path.of(state.isBlank() ? defaultStateDir(env) : state).toAbsolutePath(),
        c.getString(prefix + IMAGE), Path.of(c.getString(prefix + DOCKER_SOCKET)),
        Arrays.asList((pip.isBlank() ? defaultPip(env) : pip).trim().split("\\s+")),
        Duration.ofSeconds(c.getInt(prefix + PIP_TIMEOUT_S)), Duration.ofSeconds(c.getInt(prefix + STOP_GRACE_S)),
        c.getInt(prefix + TMPFS_MB), c.getString(prefix + USER), c.getBoolean(prefix + STANDBY),
        Duration.ofMillis(c.getInt(prefix + WORKER_RESTART_INITIAL_MS)),
        Duration.ofMillis(c.getInt(prefix + WORKER_RESTART_MAX_MS)),
        Duration.ofMillis(c.getInt(prefix + RESTART_INITIAL_MS)), Duration.ofMillis(c.getInt(prefix + RESTART_MAX_MS)),
        c.getLong(prefix + CODE_MAX_BYTES), c.getInt(prefix + ZIP_MAX_ENTRIES), Map.of());
  }

  /** Every setting at its default, state in {@code stateDir} (tests). */
  public static SandboxSettings defaults(Path stateDir) {
    ConfigDef def = declare(new ConfigDef("hostagent"), "");
    return from(def.parse(Map.of(), Map.of(STATE_DIR, stateDir.toString())), "", System.getenv());
  }

  public SandboxSettings withImage(String image) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, restartInitial, restartMax, codeMaxBytes, zipMaxEntries,
        labels);
  }

  public SandboxSettings withPipCommand(List<String> pipCommand) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, restartInitial, restartMax, codeMaxBytes, zipMaxEntries,
        labels);
  }

  public SandboxSettings withLabels(Map<String, String> labels) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, restartInitial, restartMax, codeMaxBytes, zipMaxEntries,
        labels);
  }

  public SandboxSettings withStopGrace(Duration stopGrace) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, restartInitial, restartMax, codeMaxBytes, zipMaxEntries,
        labels);
  }

  public SandboxSettings withWorkerRestart(Duration initial, Duration max) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, initial, max, restartInitial, restartMax, codeMaxBytes, zipMaxEntries, labels);
  }

  public SandboxSettings withRestart(Duration initial, Duration max) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, initial, max, codeMaxBytes, zipMaxEntries, labels);
  }

  public SandboxSettings withCodeLimits(long codeMaxBytes, int zipMaxEntries) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, restartInitial, restartMax, codeMaxBytes, zipMaxEntries,
        labels);
  }

  public SandboxSettings withPipTimeout(Duration pipTimeout) {
    return new SandboxSettings(stateDir, image, dockerSocket, pipCommand, pipTimeout, stopGrace, tmpfsMb, user,
        standby, workerRestartInitial, workerRestartMax, restartInitial, restartMax, codeMaxBytes, zipMaxEntries,
        labels);
  }
}
