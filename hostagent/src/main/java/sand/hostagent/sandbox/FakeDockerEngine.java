package sand.hostagent.sandbox;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * An in-memory {@link DockerEngine} for unit tests: containers are records with a state, nothing runs.
 * It keeps every call in {@link #calls()} (e.g. {@code "create sand-shop-h1"}, {@code "stop sand-shop-h1 20s"})
 * and lets a test play the Engine's part: {@link #die} a container, {@link #setProcesses} for {@link #top},
 * {@link #failNext} a call.
 */
public final class FakeDockerEngine implements DockerEngine {

  /** One fake container: its spec as created and its current state. */
  public static final class Container {
    public final String id;
    public final String name;
    public final ContainerSpec spec;
    public String status = "created";
    public int exitCode;
    public boolean oomKilled;
    public int starts;
    public List<ProcessEntry> processes = List.of();
    public String logs = "";

    Container(String id, String name, ContainerSpec spec) {
      this.id = id;
      this.name = name;
      this.spec = spec;
    }
  }

  private final Map<String, Container> byName = new LinkedHashMap<>();
  private final List<String> calls = new ArrayList<>();
  private final Map<String, DockerException> failures = new LinkedHashMap<>();
  private final Map<String, Consumer<Container>> onStart = new LinkedHashMap<>();
  private final Map<String, Consumer<Container>> onStop = new LinkedHashMap<>();
  private final Map<String, Consumer<String>> onKill = new LinkedHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();
  private boolean reachable = true;

  // ---- what a test sets up or inspects

  /** Every call made, in order, as "verb container [detail]". */
  public synchronized List<String> calls() {
    return List.copyOf(calls);
  }

  /** The container named {@code name} (its spec as created), or null. */
  public synchronized Container container(String name) {
    return byName.get(name);
  }

  public synchronized List<Container> containers() {
    return List.copyOf(byName.values());
  }

  /** The container exits as if its PID 1 ended with {@code exitCode}. */
  public synchronized void die(String name, int exitCode, boolean oomKilled) {
    Container c = require(name);
    c.status = "exited";
    c.exitCode = exitCode;
    c.oomKilled = oomKilled;
  }

  /** The container disappears (e.g. an operator ran `docker rm -f`). */
  public synchronized void vanish(String name) {
    byName.remove(name);
  }

  public synchronized void setProcesses(String name, List<ProcessEntry> processes) {
    require(name).processes = List.copyOf(processes);
  }

  public synchronized void setLogs(String name, String logs) {
    require(name).logs = logs;
  }

  /** The next call with this verb ("create", "start", ...) throws {@code e}. */
  public synchronized void failNext(String verb, DockerException e) {
    failures.put(verb, e);
  }

  /**
   * Play the container's part when a container whose name starts with {@code namePrefix} starts: e.g. a
   * dependency install that writes its output into a mounted folder and exits ({@link #die}, {@link #setLogs}
   * take effect from inside the action, which runs under this engine's lock).
   */
  public synchronized void onStart(String namePrefix, Consumer<Container> action) {
    onStart.put(namePrefix, action);
  }

  /**
   * Run {@code action} when a running container whose name starts with {@code namePrefix} is stopped, before it
   * exits: what its processes do in their stop grace (finishing instances, reporting).
   */
  public synchronized void onStop(String namePrefix, Consumer<Container> action) {
    onStop.put(namePrefix, action);
  }

  /** Run {@code action} with the signal when a container whose name starts with {@code namePrefix} is sent one. */
  public synchronized void onKill(String namePrefix, Consumer<String> action) {
    onKill.put(namePrefix, action);
  }

  private static void runHooks(Map<String, Consumer<Container>> hooks, Container c) {
    hooks.forEach((prefix, action) -> {
      if (c.name.startsWith(prefix)) {
        action.accept(c);
      }
    });
  }

  /** An unreachable Engine fails every call like a missing socket would. */
  public synchronized void setReachable(boolean reachable) {
    this.reachable = reachable;
  }

  /** Put a container there as if left by an earlier run (labels as given). */
  public synchronized Container preexisting(String name, ContainerSpec spec, String status) {
    Container c = new Container("fake" + ids.incrementAndGet(), name, spec);
    c.status = status;
    byName.put(name, c);
    return c;
  }

  // ---- the Engine

  @Override
  public synchronized void ping() {
    record("ping", "");
  }

  @Override
  public synchronized String create(String name, ContainerSpec spec) {
    record("create", name);
    if (byName.containsKey(name)) {
      throw new DockerException(
          409, "Conflict. The container name \"/" + name + "\" is already in use");
    }
    Container c = new Container("fake" + ids.incrementAndGet(), name, spec);
    byName.put(name, c);
    return c.id;
  }

  @Override
  public synchronized void start(String container) {
    record("start", container);
    Container c = require(container);
    if (!c.status.equals("running")) {
      c.status = "running";
      c.exitCode = 0;
      c.oomKilled = false;
      c.starts++;
      runHooks(onStart, c);
    }
  }

  @Override
  public synchronized void stop(String container, Duration timeout) {
    record("stop", container + " " + timeout.toSeconds() + "s");
    Container c = require(container);
    if (c.status.equals("running")) {
      runHooks(onStop, c);
      c.status = "exited";
      c.exitCode = 0;
    }
  }

  @Override
  public synchronized void kill(String container, String signal) {
    record("kill", container + " " + signal);
    Container c = require(container);
    onKill.forEach((prefix, action) -> {
      if (c.name.startsWith(prefix)) {
        action.accept(signal);
      }
    });
    if (List.of("SIGKILL", "SIGTERM", "SIGINT")
        .contains(signal)) { // the supervisor handles SIGHUP, and lives
      c.status = "exited";
      c.exitCode = 137;
    }
  }

  @Override
  public synchronized boolean remove(String container, boolean force) {
    record("remove", container + (force ? " force" : ""));
    Container c = find(container);
    if (c == null) {
      return false;
    }
    if (c.status.equals("running") && !force) {
      throw new DockerException(409, "You cannot remove a running container " + c.id);
    }
    byName.remove(c.name);
    return true;
  }

  @Override
  public synchronized Optional<ContainerInfo> inspect(String container) {
    record("inspect", container);
    Container c = find(container);
    if (c == null) {
      return Optional.empty();
    }
    boolean running = c.status.equals("running");
    return Optional.of(new ContainerInfo(
        c.id,
        c.name,
        c.spec.image(),
        c.spec.labels(),
        c.status,
        running,
        c.exitCode,
        c.oomKilled,
        running ? 1000 + Math.floorMod(c.id.hashCode(), 1000) : 0,
        "",
        "",
        "",
        null));
  }

  @Override
  public synchronized List<ContainerSummary> list(Map<String, String> labels) {
    record("list", new TreeMap<>(labels).toString());
    List<ContainerSummary> out = new ArrayList<>();
    for (Container c : byName.values()) {
      if (c.spec.labels().entrySet().containsAll(labels.entrySet())) {
        out.add(new ContainerSummary(c.id, c.name, c.spec.labels(), c.status, c.status));
      }
    }
    return out;
  }

  @Override
  public synchronized List<ProcessEntry> top(String container) {
    record("top", container);
    Container c = find(container);
    return c == null || !c.status.equals("running") ? List.of() : c.processes;
  }

  @Override
  public synchronized String logs(String container, int lines) {
    record("logs", container);
    Container c = find(container);
    return c == null ? "" : c.logs;
  }

  private void record(String verb, String detail) {
    calls.add(detail.isEmpty() ? verb : verb + " " + detail);
    if (!reachable) {
      throw new DockerException("Docker Engine on /fake/docker.sock: connection refused", null);
    }
    DockerException e = failures.remove(verb);
    if (e != null) {
      throw e;
    }
  }

  private Container find(String idOrName) {
    Container c = byName.get(idOrName);
    if (c != null) {
      return c;
    }
    return byName.values().stream()
        .filter(x -> x.id.equals(idOrName))
        .findFirst()
        .orElse(null);
  }

  private Container require(String idOrName) {
    Container c = find(idOrName);
    if (c == null) {
      throw new DockerException(404, "No such container: " + idOrName);
    }
    return c;
  }
}
