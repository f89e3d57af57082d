package sand.hostagent;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables;
import sand.common.Backoff;
import sand.common.Credentials;
import sand.contracts.ApplicationLimits;
import sand.contracts.ApplicationSettings;
import sand.contracts.GrainRef;
import sand.contracts.Workflow;
import sand.datalayer.DataLayerService;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.sandbox.ApplicationSpec;
import sand.hostagent.sandbox.SandboxException;
import sand.hostagent.sandbox.SandboxManager;
import sand.localbus.LocalMessageBus;

/**
 * Makes this host run what the cluster state says it should: for each application wanted here, its own
 * credential and Unix sockets, its sandbox, and the bridge consuming its grains' partitions; for each
 * application no longer wanted, the reverse. Calls for one application are serialised by the caller
 * ({@link ReconcileLanes}); calls for different applications may run at once.
 *
 * <p>A deploy that fails is retried with exponential back-off (from {@link DeployPolicy#retryInitial()}
 * doubling to {@link DeployPolicy#retryMax()}) while its version stays the same; meanwhile the host's state
 * stays {@code failed} with the reason and when the next attempt is. A new version (a redeploy) is tried at
 * once.
 *
 * <p>Undeploy hands queued events back rather than running them: the bridge stops consuming the app's
 * partitions (committing only up to the oldest unfinished event), so an event still in a local queue is
 * replayed from Kafka by whichever host runs the grain next. The instances running when the sandbox is
 * stopped finish in its stop grace: until the sandbox is gone the application stays known here (its
 * outputs are forwarded) and the bridge keeps its events in flight (their {@code data} and
 * {@code finished} flags are written); only then is it told to forget them ({@code appDrained}).
 *
 * <p>A redeploy (a new version) drains the old sandbox the same way but keeps the application's local
 * queues and its place in the bridge: the bridge goes on delivering into the queues, the events queued
 * there are taken by the new sandbox's grain workers, and nothing in flight is forgotten. The queues of
 * grains the new version no longer has are deleted (their events are replayed from Kafka); if the new
 * version fails to deploy, the application is undeployed here as above.
 */
final class ApplicationDeployer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ApplicationDeployer.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * How deploys are bounded and retried.
   *
   * @param workersTimeout longest wait for every grain worker of a new sandbox to poll its queue
   * @param retryInitial   first wait before a failed deploy is tried again
   * @param retryMax       longest wait between attempts
   */
  record DeployPolicy(Duration workersTimeout, Duration retryInitial, Duration retryMax) {}

  /**
   * What runs here: with {@code code} (resource → kind:sha256), {@code workflow}, {@code settings} and
   * {@code requirements}, enough to tell an update (only .py grains' code changed) from a change that needs a new
   * sandbox.
   */
  private record Deployed(int version, AppSockets sockets, Set<String> grains, String workflow, String settings,
                          String requirements, Map<String, String> code) {
    Deployed withVersion(int v, Map<String, String> newCode) {
      return new Deployed(v, sockets, grains, workflow, settings, requirements, newCode);
    }
  }

  private static Map<String, String> fingerprint(Map<String, HostAgentTables.GrainCode> code) {
    Map<String, String> out = new TreeMap<>();
    code.forEach((r, c) -> out.put(r, c.kind() + ":" + c.sha256()));
    return out;
  }

  /** A deploy of {@code version} that failed {@code attempts} times; not tried again before {@code notBefore}. */
  private record Failure(int version, int attempts, Instant notBefore) {}

  private final String hostId;
  private final HostAgentTables store;
  private final SandboxManager sandboxes;
  private final Consumer<Set<GrainRef>> grainsChanged;
  private final Consumer<String> appDrained;
  private final Credentials credentials;
  private final String agentCredential;
  private final LocalMessageBus bus;
  private final LocalDataLayer data;
  private final Path socketsRoot;
  private final GrainTopics topics;
  private final Clock clock;
  private final ApplicationLimits limits;
  private final DeployPolicy policy;
  private final Map<String, Deployed> running = new ConcurrentHashMap<>();
  /** Applications being undeployed: still in {@link #running} while their sandbox drains, but not given events. */
  private final Set<String> stopping = ConcurrentHashMap.newKeySet();
  /** Per application, what its supervisor last said of each grain worker that is not well (grain → message). */
  private final Map<String, Map<String, String>> unhealthy = new ConcurrentHashMap<>();
  /** Applications whose sandbox is starting here, with their grains: their workers' reports are heard. */
  private final Map<String, Set<String>> starting = new ConcurrentHashMap<>();
  private final Map<String, Failure> failures = new ConcurrentHashMap<>();
  private final GrainWorkerSwaps swaps = new GrainWorkerSwaps();
  /** Whether the bridge has a partition of a grain's topic (until then, requests for it go the long way, via Kafka). */
  private volatile java.util.function.Predicate<GrainRef> partitioned = g -> true;
  /** Longest wait for the bridge's partitions of a new application's grains before saying it is deployed. */
  private volatile Duration partitionsWait = Duration.ofSeconds(15);
  private final Object grainsLock = new Object();

  /**
   * @param grainsChanged the grains that should get events here now (the bridge's subscription)
   * @param appDrained    an application's sandbox is gone and it does not run here any more: its events in
   *                      flight will never be reported (the bridge forgets them)
   */
  ApplicationDeployer(String hostId, HostAgentTables store, SandboxManager sandboxes,
                      Consumer<Set<GrainRef>> grainsChanged, Consumer<String> appDrained,
                      Credentials credentials, String agentCredential,
                      LocalMessageBus bus, LocalDataLayer data, Path socketsRoot, GrainTopics topics, Clock clock,
                      ApplicationLimits limits, DeployPolicy policy) {
    this.hostId = hostId;
    this.store = store;
    this.sandboxes = sandboxes;
    this.grainsChanged = grainsChanged;
    this.appDrained = appDrained;
    this.credentials = credentials;
    this.agentCredential = agentCredential;
    this.bus = bus;
    this.data = data;
    this.socketsRoot = socketsRoot;
    this.topics = topics;
    this.clock = clock;
    this.limits = limits;
    this.policy = policy;
  }

  /**
   * The applications to reconcile as a safety net (start-up, periodically): every application of the
   * cluster and every one running here, minus those waiting out a failed deploy's back-off.
   */
  Set<String> toReconcile() {
    Set<String> ids = new LinkedHashSet<>();
    Instant now = clock.instant();
    for (ApplicationRecord app : store.applications()) {
      Failure f = failures.get(app.appId());
      if (f == null || f.version() != app.version() || !now.isBefore(f.notBefore()) || !app.wantedOn(hostId)) {
        ids.add(app.appId());
      }
    }
    ids.addAll(running.keySet());
    return ids;
  }

  /** Reconcile one application (a control event named it). */
  void reconcile(String appId) {
    store.application(appId).ifPresentOrElse(this::reconcile, () -> undeploy(appId));
  }

  private void reconcile(ApplicationRecord app) {
    Deployed current = running.get(app.appId());
    if (app.wantedOn(hostId)) {
      if (current == null || current.version() != app.version()) {
        Failure f = failures.get(app.appId());
        if (f != null && f.version() == app.version() && clock.instant().isBefore(f.notBefore())) {
          LOG.debug("[host {} app {}] version {} failed {} times; next attempt at {}", hostId, app.appId(),
              app.version(), f.attempts(), f.notBefore());
          return;
        }
        Map<String, HostAgentTables.GrainCode> code = store.applicationCode(app.appId());
        if (current != null) {
          Set<String> changed = codeOnlyChange(current, app, code);
          if (!changed.isEmpty() && swap(app, current, code, changed)) {
            return;
          }
          drainForRedeploy(app.appId(), current);
        }
        boolean deployed = deploy(app, f != null && f.version() == app.version() ? f.attempts() : 0, code);
        if (current != null) {
          if (deployed) {
            dropGoneGrains(app, current);
          } else { // the old sandbox is gone and the new one failed: undeploy here
            finishStop(app.appId(), null);
          }
        }
      }
    } else {
      failures.remove(app.appId());
      if (current != null) {
        undeploy(app.appId());
      }
    }
  }

  /**
   * The .py resources whose code is all that changed between what runs here and {@code app} (an update); empty when
   * something else changed (workflow, settings, requirements, a zip resource: a new sandbox) or nothing did (a
   * deploy of the same application again is how a developer asks for a fresh sandbox).
   */
  private static Set<String> codeOnlyChange(Deployed current, ApplicationRecord app,
                                            Map<String, HostAgentTables.GrainCode> code) {
    Map<String, String> next = fingerprint(code);
    if (!current.workflow().equals(app.workflow()) || !current.settings().equals(String.valueOf(app.settings()))
        || !current.requirements().equals(String.valueOf(app.requirements()))
        || !current.code().keySet().equals(next.keySet())) {
      return Set.of();
    }
    Set<String> changed = new java.util.TreeSet<>();
    for (Map.Entry<String, String> e : next.entrySet()) {
      String was = current.code().get(e.getKey());
      if (!was.equals(e.getValue())) {
        if (!was.startsWith("py:") || !e.getValue().startsWith("py:")) {
          return Set.of();
        }
        changed.add(e.getKey());
      }
    }
    return changed;
  }

  /**
   * An update: the new code of {@code changed} resources goes into the running sandbox, whose supervisor restarts
   * only the workers of the grains running them (events wait in their local queues meanwhile). If a new worker does
   * not load its code, the previous code is put back and its worker restarted with it: the application keeps
   * answering, and this host's state says the update failed, and why. False when there is no sandbox to update
   * (then it is deployed anew).
   */
  private boolean swap(ApplicationRecord app, Deployed current, Map<String, HostAgentTables.GrainCode> code,
                       Set<String> changed) {
    String appId = app.appId();
    Set<String> grains = new java.util.TreeSet<>();
    Workflow.parse(app.workflow()).grains().forEach((g, resource) -> {
      if (changed.contains(resource) && current.grains().contains(g)) {
        grains.add(g);
      }
    });
    Map<String, byte[]> fresh = new LinkedHashMap<>();
    changed.forEach(r -> fresh.put(r, code.get(r).code()));
    LOG.info("[host {} app {}] version {} changes only the code of {}: restarting grain workers {} in the running "
        + "sandbox", hostId, appId, app.version(), changed, grains);
    store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYING, null, clock.instant());
    String failure;
    try {
      Map<String, java.util.concurrent.CompletableFuture<String>> waits = swaps.expect(appId, grains);
      Map<String, byte[]> previous;
      try {
        previous = sandboxes.swapCode(appId, fresh, grains);
      } catch (SandboxException e) {
        LOG.warn("[host {} app {}] cannot update the running sandbox ({}); deploying it anew", hostId, appId,
            e.getMessage());
        return false;
      }
      failure = swaps.await(waits, policy.workersTimeout());
      if (failure != null) {
        LOG.warn("[host {} app {}] the new code of {} does not run ({}); putting the previous code back", hostId,
            appId, changed, failure);
        Map<String, java.util.concurrent.CompletableFuture<String>> back = swaps.expect(appId, grains);
        sandboxes.swapCode(appId, previous, grains);
        String still = swaps.await(back, policy.workersTimeout());
        if (still != null) {
          failure += "; and the previous code did not come back: " + still;
        }
      }
    } catch (SandboxException e) {
      failure = e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = "interrupted";
    } finally {
      swaps.done(appId);
    }
    // Done with this version either way: a failed update is not tried again (its code would fail the same way)
    // until the next deploy or update.
    Map<String, String> runs = failure == null ? fingerprint(code) : current.code();
    running.put(appId, current.withVersion(app.version(), runs));
    failures.remove(appId);
    String error = failure == null ? null : "the update to version " + app.version() + " failed: " + failure
        + "; grain(s) " + grains + " run their previous code here";
    store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYED, error, clock.instant());
    LOG.info("[host {} app {}] {}", hostId, appId, error == null ? "updated to version " + app.version()
        + ": grain workers " + grains + " run the new code" : error);
    return true;
  }

  /**
   * A redeploy's first half: stop the old sandbox, letting its running instances finish (stop grace). The
   * application stays in {@link #running} and in the bridge's grains meanwhile, so their reports are
   * handled as before (outputs forwarded once, flags written), and its local queues stay, with what is
   * queued in them, for the new sandbox.
   */
  private void drainForRedeploy(String appId, Deployed current) {
    LOG.info("[host {} app {}] redeploying: stopping version {}; its local queues are kept", hostId, appId,
        current.version());
    drainSandbox(appId, current);
    credentials.revoke(appId); // the old sandbox's credential; the new version gets its own
  }

  /** A redeploy's second half: the queues of grains the new version no longer has go (replayed from Kafka). */
  private void dropGoneGrains(ApplicationRecord app, Deployed before) {
    Set<String> grains = running.get(app.appId()).grains();
    for (String g : before.grains()) {
      if (!grains.contains(g)) {
        int dropped = bus.deleteQueue(agentCredential, app.appId() + "/" + g);
        LOG.info("[host {} app {}] grain {} is gone in version {}: its queue deleted ({} events, replayed from "
            + "Kafka)", hostId, app.appId(), g, app.version(), dropped);
      }
    }
  }

  /**
   * Stop the application's sandbox, its running instances finishing in the stop grace; the application
   * stays in {@link #running} meanwhile, so their reports are handled.
   */
  private void drainSandbox(String appId, Deployed d) {
    sandboxes.undeploy(appId);
    d.sockets().close();
  }

  private boolean deploy(ApplicationRecord app, int failedBefore, Map<String, HostAgentTables.GrainCode> stored) {
    String appId = app.appId();
    LOG.info("[host {} app {}] deploying version {}{}", hostId, appId, app.version(),
        failedBefore == 0 ? "" : " (attempt " + (failedBefore + 1) + ")");
    if (failedBefore == 0) { // a retry stays 'failed' until it succeeds: the developer sees why it failed
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYING, null, clock.instant());
    }
    AppSockets sockets = null;
    try {
      Set<String> grains = Workflow.parse(app.workflow()).grains().keySet();
      ApplicationSettings settings = ApplicationSettings.fromJson(app.settings());
      limits.check(settings, grains.size(), 0);
      Map<String, ApplicationSpec.Code> code = new LinkedHashMap<>();
      stored.forEach((resource, c) -> code.put(resource,
          "zip".equals(c.kind()) ? ApplicationSpec.Code.zip(c.code())
              : new ApplicationSpec.Code(ApplicationSpec.Kind.PY, c.code())));
      String credential = HexFormat.of().formatHex(randomBytes());
      unhealthy.remove(appId); // what the last sandbox's workers said is not about this one
      starting.put(appId, grains);
      credentials.grant(appId, credential);
      sockets = new AppSockets(socketsRoot.resolve(appId), appId, bus,
          new DataLayerService(data).processor(), 1024);
      sandboxes.deploy(new ApplicationSpec(appId, app.workflow(), code, app.requirements() == null ? ""
          : app.requirements(), settings, credential, sockets.dir(), grains));
      awaitWorkers(appId, grains);
      topics.ensureGrainTopics(appId, grains);
      Deployed deployed = new Deployed(app.version(), sockets, grains, app.workflow(),
          String.valueOf(app.settings()), String.valueOf(app.requirements()), fingerprint(stored));
      synchronized (grainsLock) {
        running.put(appId, deployed);
        grainsChanged.accept(grainRefs());
      }
      awaitPartitions(appId, grains);
      failures.remove(appId);
      unhealthy.remove(appId); // a new sandbox: its workers start with a clean slate
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYED, null, clock.instant());
      LOG.info("[host {} app {}] deployed: grains {}", hostId, appId, grains);
      return true;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      int attempts = failedBefore + 1;
      Duration wait = backoff(attempts);
      failures.put(appId, new Failure(app.version(), attempts, clock.instant().plus(wait)));
      LOG.warn("[host {} app {}] deploy of version {} failed (attempt {}; next in {} s): {}", hostId, appId,
          app.version(), attempts, wait.toSeconds(), why);
      if (sockets != null) {
        sockets.close();
      }
      credentials.revoke(appId);
      try {
        store.setAppHostState(appId, hostId, HostAgentTables.HOST_FAILED, why + " [host " + hostId + ", attempt " + attempts
            + "; tried again in " + wait.toSeconds() + " s, or at once on a new deploy]", clock.instant());
      } catch (RuntimeException re) {
        LOG.warn("[host {} app {}] could not record the failure: {}", hostId, appId, re.toString());
      }
      return false;
    } finally {
      starting.remove(appId);
    }
  }

  /** How this host knows the bridge has partitions of a grain's topic (the host agent wires the bridge in). */
  void partitionedBy(java.util.function.Predicate<GrainRef> p, Duration wait) {
    partitioned = p;
    partitionsWait = wait;
  }

  /**
   * A new application's first requests are fast only once Kafka has assigned this host partitions of its grains'
   * topics (the gate backs a request up there; before that it goes through Kafka, ~1 s on a rebalance): wait for them,
   * bounded, before saying it is deployed. A wait that runs out is logged, not a failure.
   */
  private void awaitPartitions(String appId, Set<String> grains) throws InterruptedException {
    long deadline = System.nanoTime() + partitionsWait.toNanos();
    for (String g : grains) {
      GrainRef ref = new GrainRef(appId, g);
      while (!partitioned.test(ref)) {
        if (System.nanoTime() > deadline) {
          LOG.warn("[host {} app {}] Kafka has not assigned this host a partition of {} within {} s: its first "
              + "requests go through Kafka", hostId, appId, ref.topic(), partitionsWait.toSeconds());
          return;
        }
        Thread.sleep(20);
      }
    }
  }

  /** Wait before attempt {@code attempts + 1}: retryInitial doubling per failure, at most retryMax. */
  Duration backoff(int attempts) {
    return new Backoff(policy.retryInitial(), policy.retryMax()).after(attempts);
  }

  /**
   * A sandbox is up when every grain's worker is long-polling its local queue; until then the
   * application is not deployed. A grain whose code does not load, or whose worker crash-loops (exits at
   * import, is killed for memory), fails the deploy as soon as the supervisor says so, with its words; a
   * sandbox that says nothing fails it after the workers timeout, with its last log lines.
   */
  private void awaitWorkers(String appId, Set<String> grains) throws InterruptedException {
    long deadline = System.nanoTime() + policy.workersTimeout().toNanos();
    Set<String> waiting = new LinkedHashSet<>();
    while (true) {
      waiting.clear();
      Map<String, Integer> pollers = new java.util.HashMap<>();
      bus.queueStats().forEach(s -> pollers.put(s.queue(), s.waitingPollers()));
      for (String g : grains) {
        if (pollers.getOrDefault(appId + "/" + g, 0) == 0) {
          waiting.add(g);
        }
      }
      if (waiting.isEmpty()) {
        return;
      }
      Map<String, String> sick = unhealthy.getOrDefault(appId, Map.of());
      if (!sick.isEmpty()) {
        sandboxes.undeploy(appId);
        throw new IllegalStateException(String.join("; ", new TreeMap<>(sick).values()));
      }
      if (System.nanoTime() > deadline) {
        String logs = sandboxes.logs(appId, 20);
        sandboxes.undeploy(appId);
        throw new IllegalStateException("the sandbox did not start grain workers for " + waiting + " within "
            + policy.workersTimeout().toSeconds() + " s; its last log lines:\n" + logs);
      }
      Thread.sleep(100);
    }
  }

  private static byte[] randomBytes() {
    byte[] b = new byte[24];
    RANDOM.nextBytes(b);
    return b;
  }

  void undeploy(String appId) {
    stop(appId, HostAgentTables.HOST_UNDEPLOYED);
  }

  /**
   * Stop an application here and record {@code state} for this host: the bridge stops consuming its
   * partitions first, then its sandbox drains while it is still known here (reports of its last
   * instances are handled), then its queues, credentials and events in flight are dropped.
   */
  private void stop(String appId, String state) {
    unhealthy.remove(appId);
    Deployed d = running.get(appId);
    if (d == null) {
      return;
    }
    LOG.info("[host {} app {}] undeploying", hostId, appId);
    synchronized (grainsLock) {
      stopping.add(appId);
      grainsChanged.accept(grainRefs());
    }
    drainSandbox(appId, d);
    finishStop(appId, state);
  }

  /** After the sandbox is gone: forget the application here; record {@code state} unless null. */
  private void finishStop(String appId, String state) {
    synchronized (grainsLock) {
      running.remove(appId);
      stopping.remove(appId);
      grainsChanged.accept(grainRefs());
    }
    bus.deleteApplicationQueues(agentCredential, appId);
    data.revokeApplication(agentCredential, appId);
    appDrained.accept(appId);
    if (state == null) {
      return;
    }
    try {
      store.setAppHostState(appId, hostId, state, null, clock.instant());
    } catch (RuntimeException e) {
      LOG.warn("[host {} app {}] could not record state {}: {}", hostId, appId, state, e.toString());
    }
  }

  /** The grains that get events here: those of the applications running here and not being undeployed. */
  private Set<GrainRef> grainRefs() {
    Set<GrainRef> refs = new LinkedHashSet<>();
    running.forEach((app, d) -> {
      if (!stopping.contains(app)) {
        d.grains().forEach(g -> refs.add(new GrainRef(app, g)));
      }
    });
    return refs;
  }

  Set<String> deployedApps() {
    return Set.copyOf(running.keySet());
  }

  /**
   * A sandbox's supervisor (or a grain worker whose code did not load) reported on a grain worker: while the
   * sandbox starts, that fails the deploy ({@link #awaitWorkers}); later, a crash-looping worker shows in this
   * host's state of the application ("deployed", with an error naming the grain and why) until the supervisor
   * says it runs again.
   */
  void workerHealth(String appId, String grain, String state, String message) {
    boolean ours = knowsGrain(appId, grain) || starting.getOrDefault(appId, Set.of()).contains(grain);
    if ("exited".equals(state) || !ours || swaps.heard(appId, grain, state, message)) {
      // one death is not a state (LocalRecovery acts on it); or not a grain of this application here (a report from
      // a sandbox already replaced, or forged)
      return;
    }
    Map<String, String> sick = unhealthy.computeIfAbsent(appId, a -> new ConcurrentHashMap<>());
    boolean changed = "running".equals(state) || "reloaded".equals(state) ? sick.remove(grain) != null : !message.equals(sick.put(grain, message));
    if (!changed || !running.containsKey(appId)) {
      return;
    }
    String error = sick.isEmpty() ? null : String.join("; ", new TreeMap<>(sick).values());
    LOG.info("[host {} app {}] grain worker {} {}: {}", hostId, appId, grain, state, message);
    try {
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYED, error, clock.instant());
    } catch (RuntimeException e) {
      LOG.warn("[host {} app {}] could not record the workers' health: {}", hostId, appId, e.toString());
    }
  }

  /** Whether {@code grain} is a grain of the workflow of {@code appId} as deployed here. */
  boolean knowsGrain(String appId, String grain) {
    Deployed d = running.get(appId);
    return d != null && d.grains().contains(grain);
  }

  /** The agent stops: its sandboxes stop too (the applications stay deployed in the cluster state). */
  @Override
  public void close() {
    for (String appId : Set.copyOf(running.keySet())) {
      stop(appId, HostAgentTables.HOST_STOPPED);
    }
  }
}
