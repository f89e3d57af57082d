package sand.hostagent.sandbox;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import sand.contracts.ApplicationSettings;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.DockerEngine.Mount;
import sand.hostagent.sandbox.internal.AppFolder;

/**
 * The container of an application's sandbox (docs/host-agent.md, Sandbox): its name, its labels and the
 * options it is created with. Declared here in one place so a test can check them option by option.
 */
public final class SandboxContainer {
  public static final String LABEL_HOST = "sand.host";
  /**
   * The host agent's state folder: with {@link #LABEL_HOST} it tells one agent's containers from those of another
   * cluster's host of the same id on the same Docker Engine ({@code make cluster} and the fault tests both have an
   * h1), whose containers an agent must never remove.
   */
  public static final String LABEL_STATE = "sand.state";

  public static final String LABEL_APP = "sand.app";
  public static final String LABEL_COMPONENT = "sand.component";
  /** The only environment a sandbox gets: its application's credential for the local bus and data layer. */
  public static final String ENV_CREDENTIAL = "SAND_GRAINWORKER_CREDENTIAL";

  public static final List<String> COMMAND = List.of(
      "python3", "-m", "grainworker.supervisor", "--config", AppFolder.MOUNT + "/sandbox.json");

  private SandboxContainer() {}

  /** {@code sand-<app id>-<host id>}. */
  public static String name(String appId, String hostId) {
    return "sand-" + appId + "-" + hostId;
  }

  /** The labels every sandbox of this host carries (plus {@link #LABEL_APP} for one application). */
  public static Map<String, String> hostLabels(String hostId, Path stateDir) {
    return Map.of(
        LABEL_HOST, hostId, LABEL_STATE, stateLabel(stateDir), LABEL_COMPONENT, "sandbox");
  }

  /** {@link #LABEL_STATE}'s value: the absolute, normalized path ({@code realpath -ms} in deploy/cluster.sh). */
  public static String stateLabel(Path stateDir) {
    return stateDir.toAbsolutePath().normalize().toString();
  }

  /**
   * The container of {@code spec}: no network, no capabilities, no privilege gain, read-only root with a
   * size-limited /tmp, the application's limits, an unprivileged user, the application's folder and its
   * own sockets mounted read-only (a Unix socket can be connected to on a read-only mount), its stdout/stderr
   * rotated by Docker.
   */
  public static ContainerSpec spec(
      ApplicationSpec spec, String hostId, Path appDir, SandboxSettings s) {
    ApplicationSettings a = spec.settings();
    Map<String, String> labels = new LinkedHashMap<>(s.labels());
    labels.putAll(hostLabels(hostId, s.stateDir()));
    labels.put(LABEL_APP, spec.appId());
    long memory = (long) a.sandboxMemoryMb() << 20;
    return new ContainerSpec(
        s.image(),
        COMMAND,
        Map.of(ENV_CREDENTIAL, spec.credential()),
        s.user(),
        "/tmp",
        labels,
        "none",
        List.of("ALL"),
        List.of("no-new-privileges"),
        true,
        Map.of("/tmp", "rw,nosuid,nodev,size=" + s.tmpfsMb() + "m,mode=1777"),
        memory,
        memory,
        Math.round(a.sandboxCpus() * 1e9),
        a.sandboxPids(),
        List.of(
            new Mount(appDir.toAbsolutePath().toString(), AppFolder.MOUNT, true),
            new Mount(spec.socketDir().toAbsolutePath().toString(), AppFolder.SOCKETS_MOUNT, true)),
        (int) s.stopGrace().toSeconds() + 5,
        s.logLimits());
  }
}
