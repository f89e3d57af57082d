package sand.hostagent.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The few Docker Engine API calls the host agent needs to run sandboxes (paper §4.1, §5: "Docker for
 * application sandboxes"). {@link DockerHttpEngine} speaks the Engine's HTTP API on its Unix socket;
 * {@link FakeDockerEngine} stands in for it in unit tests.
 *
 * <p>Calls that name a container take its id or its name. A call the Engine refuses throws
 * {@link DockerException} with the Engine's status and message.
 */
public interface DockerEngine {

  /** Answers when the Engine is reachable; throws {@link DockerException} naming the socket otherwise. */
  void ping();

  /**
   * Create (not start) a container named {@code name}; returns its id. A name already taken throws
   * {@link DockerException} with status 409, a missing image one with status 404.
   */
  String create(String name, ContainerSpec spec);

  /** Start a created or exited container (starting a running one is a no-op). */
  void start(String container);

  /** SIGTERM (the image's stop signal), then SIGKILL after {@code timeout}; a stopped container is a no-op. */
  void stop(String container, Duration timeout);

  /** Send {@code signal} (e.g. "SIGKILL") to the container's PID 1. */
  void kill(String container, String signal);

  /** Remove the container (force: kill it first if it runs); false if there was none. */
  boolean remove(String container, boolean force);

  /** The container's configuration and state, or empty if there is no such container. */
  Optional<ContainerInfo> inspect(String container);

  /** Every container, running or not, carrying all the given labels. */
  List<ContainerSummary> list(Map<String, String> labels);

  /** The processes of a running container, as the host sees them (host pids); empty if it is not running. */
  List<ProcessEntry> top(String container);

  /** The last {@code lines} lines of the container's stdout and stderr, interleaved as written. */
  String logs(String container, int lines);

  /** A bind mount of a host folder into the container. */
  record Mount(String source, String target, boolean readOnly) {}

  /**
   * How much of a container's stdout and stderr Docker keeps on the host's disk (the Engine's {@code LogConfig}:
   * json-file, rotated at {@code maxBytes}, at most {@code maxFiles} files). Anything a grain writes to fd 1 or 2
   * lands there, so it must be bounded: a container's logs never take more than {@code maxBytes * maxFiles}.
   */
  record LogLimits(long maxBytes, int maxFiles) {
    /** For specs built without settings (tests): SandboxSettings' defaults. */
    public static final LogLimits DEFAULT = new LogLimits(10L << 20, 3);

    public LogLimits {
      if (maxBytes < 4096 || maxFiles < 1) {
        throw new IllegalArgumentException("log limits must keep at least one file of 4 KiB: "
            + maxBytes + " bytes, " + maxFiles + " files");
      }
    }
  }

  /**
   * What a container is created with. Field names follow the Engine API ({@code HostConfig} for the
   * resource and security fields).
   *
   * @param memoryBytes     memory limit (0 = none); {@code memorySwapBytes} equal to it means no swap
   * @param nanoCpus        CPU quota in billionths of a CPU (0 = none)
   * @param pidsLimit       most processes at once (0 = none)
   * @param tmpfs           mount point -> mount options (e.g. "/tmp" -> "rw,nosuid,nodev,size=64m")
   * @param stopTimeoutSecs how long `docker stop` waits after SIGTERM when no timeout is given
   * @param logs            how much of its stdout/stderr Docker keeps (rotated)
   */
  record ContainerSpec(
      String image,
      List<String> cmd,
      Map<String, String> env,
      String user,
      String workingDir,
      Map<String, String> labels,
      String networkMode,
      List<String> capDrop,
      List<String> securityOpt,
      boolean readonlyRootfs,
      Map<String, String> tmpfs,
      long memoryBytes,
      long memorySwapBytes,
      long nanoCpus,
      long pidsLimit,
      List<Mount> mounts,
      int stopTimeoutSecs,
      LogLimits logs) {
    /** A spec with {@link LogLimits#DEFAULT} logs. */
    public ContainerSpec(
        String image,
        List<String> cmd,
        Map<String, String> env,
        String user,
        String workingDir,
        Map<String, String> labels,
        String networkMode,
        List<String> capDrop,
        List<String> securityOpt,
        boolean readonlyRootfs,
        Map<String, String> tmpfs,
        long memoryBytes,
        long memorySwapBytes,
        long nanoCpus,
        long pidsLimit,
        List<Mount> mounts,
        int stopTimeoutSecs) {
      this(
          image,
          cmd,
          env,
          user,
          workingDir,
          labels,
          networkMode,
          capDrop,
          securityOpt,
          readonlyRootfs,
          tmpfs,
          memoryBytes,
          memorySwapBytes,
          nanoCpus,
          pidsLimit,
          mounts,
          stopTimeoutSecs,
          LogLimits.DEFAULT);
    }

    public ContainerSpec {
      Objects.requireNonNull(logs, "logs");
      cmd = List.copyOf(cmd);
      env = Map.copyOf(env);
      labels = Map.copyOf(labels);
      capDrop = List.copyOf(capDrop);
      securityOpt = List.copyOf(securityOpt);
      tmpfs = Map.copyOf(tmpfs);
      mounts = List.copyOf(mounts);
    }

    /** Printable without the environment (it holds the sandbox's credential). */
    @Override
    public String toString() {
      return "ContainerSpec[image=" + image + ", cmd=" + cmd + ", env=" + env.keySet() + ", user="
          + user
          + ", labels=" + labels + ", network=" + networkMode + ", capDrop=" + capDrop
          + ", securityOpt="
          + securityOpt + ", readonlyRootfs=" + readonlyRootfs + ", tmpfs=" + tmpfs + ", memory="
          + memoryBytes
          + ", nanoCpus=" + nanoCpus + ", pids=" + pidsLimit + ", mounts=" + mounts + ", logs="
          + logs + "]";
    }
  }

  /**
   * A container's state as inspected.
   *
   * @param status    created, running, paused, restarting, removing, exited or dead
   * @param pid       its PID 1 on the host (0 when not running)
   * @param startedAt RFC 3339 time of the last start ("0001-01-01T00:00:00Z" if never)
   * @param raw       the Engine's whole answer (HostConfig, Config, ...), for diagnostics and tests
   */
  record ContainerInfo(
      String id,
      String name,
      String image,
      Map<String, String> labels,
      String status,
      boolean running,
      int exitCode,
      boolean oomKilled,
      int pid,
      String error,
      String startedAt,
      String finishedAt,
      JsonNode raw) {}

  /** One container of a listing. */
  record ContainerSummary(
      String id, String name, Map<String, String> labels, String state, String status) {}

  /** One process of a container, with host pids. */
  record ProcessEntry(int pid, int ppid, String stat, String command) {}
}
