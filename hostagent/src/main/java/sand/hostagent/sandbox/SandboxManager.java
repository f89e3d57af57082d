package sand.hostagent.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.Backoff;
import sand.contracts.ApplicationLimits;
import sand.contracts.Workflow;
import sand.hostagent.sandbox.DockerEngine.ContainerInfo;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.DockerEngine.ContainerSummary;
import sand.hostagent.sandbox.SandboxStatus.State;
import sand.hostagent.sandbox.internal.AppFolder;
import sand.hostagent.sandbox.internal.DependencyInstaller;

/**
 * The sandboxes of one host (paper §4.1): for each application deployed here, one Docker container in
 * which a supervisor runs one grain worker per grain.
 *
 * <p>{@link #deploy} prepares the application's folder (code, workflow, requirements installed in a
 * throw-away container, never on the host), then replaces any container of the same name and starts a new one. A container left by an
 * earlier run of the host agent is <b>replaced, not adopted</b>: the agent's restart also recreated the
 * local bus and data layer behind the sockets, and the code or the credential may have changed since.
 * {@link #restartDead} (called periodically by the host agent) restarts sandboxes that died, with back-off.
 *
 * <p>Calls for one application are serialized; different applications deploy in parallel.
 */
public final class SandboxManager {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxManager.class);
  private static final Pattern HOST_ID = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}");
  private static final int LOG_TAIL_LINES = 20;

  /**
   * What this manager deployed for one application. Changed under its lock; the volatile fields are
   * also read without it, so status() answers while a long deploy (pip) holds the lock.
   */
  private static final class Deployment {
    volatile ContainerSpec container; // null until the first deploy succeeded
    volatile String containerId = "";
    volatile Instant deployedAt;
    volatile String error = "";
    volatile boolean deploying;
    volatile int restarts;
    int failuresInARow;
    Instant restartNotBefore = Instant.MIN;
    Instant lastRestart = Instant.MIN;
  }

  private final String hostId;
  private final SandboxSettings settings;
  private final DockerEngine docker;
  private final DependencyInstaller deps;
  private final Clock clock;
  private final AppFolder folders;
  private final Map<String, Deployment> deployments = new ConcurrentHashMap<>();
  private final Consumer<String> sandboxDied;

  public SandboxManager(String hostId, SandboxSettings settings, DockerEngine docker, Clock clock) {
    this(hostId, settings, docker, clock, ApplicationLimits.defaults(), app -> {});
  }

  /**
   * @param limits      the operator's caps; requirement lines follow its {@code requirements.allow.urls}
   * @param sandboxDied told, with the application's id, of a sandbox that died, just before {@link #restartDead}
   *                    starts it again (the host agent re-delivers the events it had taken). Must not throw.
   */
  public SandboxManager(
      String hostId,
      SandboxSettings settings,
      DockerEngine docker,
      Clock clock,
      ApplicationLimits limits,
      Consumer<String> sandboxDied) {
    if (hostId == null || !HOST_ID.matcher(hostId).matches()) {
      throw new IllegalArgumentException(
          "host id '" + hostId + "' cannot be part of a container name: " + HOST_ID.pattern());
    }
    this.hostId = hostId;
    this.settings = settings;
    this.docker = docker;
    this.clock = clock;
    this.deps = new DependencyInstaller(docker, settings, hostId, limits.requirementsAllowUrls());
    this.folders = new AppFolder(settings.stateDir());
    this.sandboxDied = sandboxDied;
  }

  public String hostId() {
    return hostId;
  }

  /** The container name of {@code appId} on this host. */
  public String containerName(String appId) {
    return SandboxContainer.name(appId, hostId);
  }

  /** The prepared folder of {@code appId}, mounted at /sand/app in its sandbox. */
  public Path appDir(String appId) {
    return folders.appDir(appId);
  }

  // ---- deploy / undeploy

  /**
   * Deploy (or redeploy) an application: prepare its folder, install its requirements, replace its
   * container. Throws {@link SandboxException} naming what failed (for pip: pip's own error); a failed
   * redeploy leaves the running sandbox as it was.
   */
  public SandboxStatus deploy(ApplicationSpec spec) throws SandboxException, InterruptedException {
    String app = spec.appId();
    Deployment d = deployments.computeIfAbsent(app, a -> new Deployment());
    synchronized (d) {
      d.deploying = true;
      try {
        SandboxStatus s = deployLocked(spec, d);
        d.error = "";
        return s;
      } catch (SandboxException e) {
        d.error = e.getMessage();
        LOG.warn("[host {} app {}] deploy failed: {}", hostId, app, e.getMessage());
        throw e;
      } finally {
        d.deploying = false;
      }
    }
  }

  private SandboxStatus deployLocked(ApplicationSpec spec, Deployment d)
      throws SandboxException, InterruptedException {
    String app = spec.appId();
    long t0 = System.nanoTime();
    Workflow workflow;
    try {
      workflow = Workflow.parse(spec.workflowJson());
    } catch (IllegalArgumentException e) {
      throw new SandboxException("application " + app + ": " + e.getMessage());
    }
    Set<String> hosted =
        new LinkedHashSet<>(spec.grains().isEmpty() ? workflow.grains().keySet() : spec.grains());
    if (!workflow.grains().keySet().containsAll(hosted)) {
      throw new SandboxException("application " + app + ": grains " + hosted
          + " to host are not all in the " + "workflow " + workflow.grains().keySet());
    }
    try {
      spec.settings().requireFits(hosted.size());
    } catch (IllegalArgumentException e) {
      throw new SandboxException("application " + app + ": " + e.getMessage());
    }
    prepareSockets(app, spec.socketDir());
    LOG.info("[host {} app {}] deploying: grains {}, {}", hostId, app, hosted, spec.settings());
    Path build = folders.build(spec, workflow, hosted, settings, deps, hostId);
    String name = containerName(app);
    try {
      removeContainer(app, name, "replacing");
      Path dir = folders.install(app, build);
      ContainerSpec container = SandboxContainer.spec(spec, hostId, dir, settings);
      d.container = container;
      d.containerId = docker.create(name, container);
      docker.start(d.containerId);
    } catch (DockerException e) {
      d.container = null; // nothing to restart: the old sandbox is gone, the new one did not start
      try {
        docker.remove(name, true);
      } catch (DockerException ignored) {
        // it was never created
      }
      throw new SandboxException(
          "application " + app + ": Docker could not run sandbox " + name + ": " + e.getMessage(),
          e);
    }
    deployments.put(
        app, d); // an undeploy may have dropped it while this deploy waited for the lock
    d.deployedAt = clock.instant();
    d.failuresInARow = 0;
    d.restartNotBefore = Instant.MIN;
    LOG.info(
        "[host {} app {}] sandbox {} started in {} ms ({} MB, {} CPUs, {} pids)",
        hostId,
        app,
        name,
        (System.nanoTime() - t0) / 1_000_000,
        spec.settings().sandboxMemoryMb(),
        spec.settings().sandboxCpus(),
        spec.settings().sandboxPids());
    d.deploying = false;
    return status(d, app);
  }

  /**
   * An update: new code for some .py resources of a running sandbox. Writes it into the application's folder and
   * tells the sandbox's supervisor (SIGHUP), which restarts only the workers of {@code grains}; each says
   * "reloaded" or "load-failed" to the host agent. Returns the code replaced (to put it back if the new one does
   * not load). The container, the other workers and the local queues stay.
   */
  public Map<String, byte[]> swapCode(
      String appId, Map<String, byte[]> pyResources, Set<String> grains) throws SandboxException {
    Deployment d = deployments.get(appId);
    if (d == null) {
      throw new SandboxException("application " + appId + ": no sandbox here to update");
    }
    synchronized (d) {
      if (d.container == null || d.containerId.isEmpty()) {
        throw new SandboxException("application " + appId + ": its sandbox is not running here");
      }
      Map<String, byte[]> old = folders.replaceCode(appId, pyResources, grains);
      try {
        docker.kill(d.containerId, "SIGHUP");
      } catch (DockerException e) {
        throw new SandboxException(
            "application " + appId + ": could not signal sandbox " + containerName(appId) + ": "
                + e.getMessage(),
            e);
      }
      LOG.info(
          "[host {} app {}] new code for {}: grain workers {} restart",
          hostId,
          appId,
          pyResources.keySet(),
          grains);
      return old;
    }
  }

  /**
   * Stop the application's sandbox (SIGTERM; grain workers finish their instances, bounded by the stop
   * grace), remove it and its folder. Returns false if there was nothing to remove.
   */
  public boolean undeploy(String appId) {
    Deployment d = deployments.computeIfAbsent(appId, a -> new Deployment());
    synchronized (d) {
      boolean removed = removeContainer(appId, containerName(appId), "undeploying");
      try {
        removed |= folders.installed().contains(appId);
        folders.remove(appId);
      } catch (IOException e) {
        LOG.warn(
            "[host {} app {}] could not delete its folder {}: {}",
            hostId,
            appId,
            folders.appDir(appId),
            e);
      }
      d.container = null; // nothing to restart: a restart check that waited on this lock skips it
      deployments.remove(appId);
      LOG.info(
          "[host {} app {}] undeployed{}", hostId, appId, removed ? "" : " (nothing was deployed)");
      return removed;
    }
  }

  /**
   * Remove the sandboxes of this host whose application is not in {@code keep} (left by an earlier run), and
   * any dependency-install container an earlier run left.
   */
  public List<String> removeOthers(Set<String> keep) {
    List<String> removed = new ArrayList<>();
    deps.removeLeftovers()
        .forEach(name -> LOG.info(
            "[host {}] removed dependency container {} left by an earlier " + "run", hostId, name));
    for (ContainerSummary c :
        docker.list(SandboxContainer.hostLabels(hostId, settings.stateDir()))) {
      String app = c.labels().getOrDefault(SandboxContainer.LABEL_APP, "");
      if (!app.isEmpty() && !keep.contains(app) && undeploy(app)) {
        removed.add(app);
      }
    }
    return removed;
  }

  private boolean removeContainer(String app, String name, String why) {
    Set<String> ids = new LinkedHashSet<>();
    docker.inspect(name).ifPresent(c -> ids.add(c.id()));
    Map<String, String> labels =
        new LinkedHashMap<>(SandboxContainer.hostLabels(hostId, settings.stateDir()));
    labels.put(SandboxContainer.LABEL_APP, app);
    docker.list(labels).forEach(c -> ids.add(c.id()));
    for (String id : ids) {
      LOG.info(
          "[host {} app {}] {}: stopping container {} (grace {} s)",
          hostId,
          app,
          why,
          id,
          settings.stopGrace().toSeconds());
      try {
        docker.stop(id, settings.stopGrace().plusSeconds(5));
      } catch (DockerException e) {
        if (!e.notFound()) {
          LOG.warn(
              "[host {} app {}] stop of {} failed, removing it by force: {}",
              hostId,
              app,
              id,
              e.getMessage());
        }
      }
      docker.remove(id, true);
    }
    return !ids.isEmpty();
  }

  /**
   * The sockets must be reachable by the sandbox's unprivileged user: search permission on the folder,
   * read/write on the sockets (the credential, not the file mode, is what protects the application).
   */
  private void prepareSockets(String app, Path dir) throws SandboxException {
    try {
      if (!Files.isDirectory(dir)) {
        throw new SandboxException(
            "application " + app + ": socket folder " + dir + " does not exist; the host "
                + "agent creates it with the application's bus.sock and data.sock before deploying");
      }
      addPermissions(
          dir, EnumSet.of(PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE));
      for (String sock : List.of("bus.sock", "data.sock")) {
        Path p = dir.resolve(sock);
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)
            || !Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                .isOther()) {
          throw new SandboxException(
              "application " + app + ": " + p + " is not a socket; serve the application's "
                  + "local bus and data layer there (ThriftServer.unix) before deploying");
        }
        addPermissions(
            p, EnumSet.of(PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE));
      }
    } catch (IOException e) {
      throw new SandboxException(
          "application " + app + ": cannot prepare socket folder " + dir + ": " + e, e);
    }
  }

  private static void addPermissions(Path p, Set<PosixFilePermission> wanted) throws IOException {
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
    if (!perms.containsAll(wanted)) {
      perms.addAll(wanted);
      Files.setPosixFilePermissions(p, perms);
    }
  }

  // ---- status

  /** The application's sandbox as it is now, or empty if nothing is deployed and no container exists. */
  public Optional<SandboxStatus> status(String appId) {
    Deployment d = deployments.get(appId);
    if (d == null) {
      return docker.inspect(containerName(appId)).map(c -> fromContainer(appId, c, null));
    }
    return Optional.of(status(d, appId));
  }

  /**
   * Each application deployed by this manager that has a container, and that container's Docker id: no call to
   * Docker (the metrics read it at every scrape).
   */
  public Map<String, String> containerIds() {
    Map<String, String> out = new java.util.TreeMap<>();
    deployments.forEach((app, d) -> {
      String id = d.containerId;
      if (id != null && !id.isEmpty()) {
        out.put(app, id);
      }
    });
    return out;
  }

  /** Every sandbox of this host: those deployed by this manager and any container labelled for this host. */
  public List<SandboxStatus> list() {
    Set<String> apps = new LinkedHashSet<>(deployments.keySet());
    for (ContainerSummary c :
        docker.list(SandboxContainer.hostLabels(hostId, settings.stateDir()))) {
      apps.add(c.labels().getOrDefault(SandboxContainer.LABEL_APP, c.name()));
    }
    List<SandboxStatus> out = new ArrayList<>();
    for (String app : apps) {
      status(app).ifPresent(out::add);
    }
    return out;
  }

  private SandboxStatus status(Deployment d, String app) {
    if (d.deploying) {
      return new SandboxStatus(
          app,
          containerName(app),
          d.containerId,
          State.DEPLOYING,
          0,
          false,
          d.restarts,
          d.error,
          d.deployedAt);
    }
    Optional<ContainerInfo> c = docker.inspect(containerName(app));
    if (c.isPresent()) {
      return fromContainer(app, c.get(), d);
    }
    State state = d.container == null ? State.FAILED : State.MISSING;
    return new SandboxStatus(
        app, containerName(app), "", state, 0, false, d.restarts, d.error, d.deployedAt);
  }

  private SandboxStatus fromContainer(String app, ContainerInfo c, Deployment d) {
    return new SandboxStatus(
        app,
        c.name(),
        c.id(),
        c.running() ? State.RUNNING : State.EXITED,
        c.exitCode(),
        c.oomKilled(),
        d == null ? 0 : d.restarts,
        d == null ? "" : d.error,
        d == null ? null : d.deployedAt);
  }

  // ---- keeping sandboxes alive

  private void died(String app) {
    try {
      sandboxDied.accept(app);
    } catch (RuntimeException e) {
      LOG.error(
          "[host {} app {}] recovering what its dead sandbox had taken failed", hostId, app, e);
    }
  }

  /**
   * Restart every deployed sandbox whose container is not running (recreating it if it is gone), each
   * at most once per back-off period (doubling from restart.initial.ms to restart.max.ms; reset once a
   * sandbox has run for restart.max.ms). Returns the applications restarted. The host agent calls this
   * periodically.
   */
  public List<String> restartDead() {
    List<String> restarted = new ArrayList<>();
    for (Map.Entry<String, Deployment> e : deployments.entrySet()) {
      String app = e.getKey();
      Deployment d = e.getValue();
      synchronized (d) {
        if (d.deploying || d.container == null) {
          continue;
        }
        Instant now = clock.instant();
        String name = containerName(app);
        try {
          Optional<ContainerInfo> c = docker.inspect(name);
          if (c.isPresent() && c.get().running()) {
            if (d.failuresInARow > 0
                && Duration.between(d.lastRestart, now).compareTo(settings.restartMax()) >= 0) {
              d.failuresInARow = 0;
            }
            continue;
          }
          if (now.isBefore(d.restartNotBefore)) {
            continue;
          }
          died(app); // before it runs again: what the dead sandbox had taken is re-delivered
          if (c.isPresent()) {
            ContainerInfo info = c.get();
            LOG.warn(
                "[host {} app {}] sandbox {} is {} (exit code {}{}); restarting it. Last log lines:\n{}",
                hostId,
                app,
                name,
                info.status(),
                info.exitCode(),
                info.oomKilled() ? ", killed for memory" : "",
                docker.logs(name, LOG_TAIL_LINES).stripTrailing());
            docker.start(info.id());
          } else {
            LOG.warn("[host {} app {}] sandbox {} is gone; creating it again", hostId, app, name);
            d.containerId = docker.create(name, d.container);
            docker.start(d.containerId);
          }
          d.restarts++;
          d.failuresInARow++;
          d.lastRestart = now;
          d.restartNotBefore =
              now.plus(new Backoff(settings.restartInitial(), settings.restartMax())
                  .after(d.failuresInARow));
          d.error = "";
          restarted.add(app);
        } catch (DockerException ex) {
          d.error = "restart failed: " + ex.getMessage();
          LOG.error(
              "[host {} app {}] could not restart sandbox {}: {}",
              hostId,
              app,
              name,
              ex.getMessage());
        }
      }
    }
    return restarted;
  }

  // ---- inside a sandbox

  /** The processes of the application's sandbox (host pids), placed in its tree; empty if it does not run. */
  public List<SandboxProcess> processes(String appId) {
    return SandboxProcess.classify(docker.top(containerName(appId)));
  }

  /** The grain instances running in the application's sandbox (each one a fork of its grain worker). */
  public List<SandboxProcess> instances(String appId) {
    return processes(appId).stream()
        .filter(p -> p.role() == SandboxProcess.Role.GRAIN_INSTANCE)
        .toList();
  }

  /** The last {@code lines} lines the sandbox's supervisor and workers logged. */
  public String logs(String appId, int lines) {
    return docker.logs(containerName(appId), lines);
  }
}
