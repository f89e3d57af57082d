package sand.hostagent;

// Longer than 600 lines because deploy, redeploy and undeploy on this host share one
// per-application state and its lock; that state (ApplicationState) and the code swap
// (CodeUpdate) are already apart.

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.common.Backoff;
import sand.common.Credentials;
import sand.common.log.LogIdentity;
import sand.contracts.AppEnv;
import sand.contracts.ApplicationLimits;
import sand.contracts.ApplicationSettings;
import sand.contracts.GrainRef;
import sand.contracts.ScaleToZero;
import sand.contracts.Workflow;
import sand.datalayer.DataLayerService;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.ApplicationState.Deployed;
import sand.hostagent.ApplicationState.Failure;
import sand.hostagent.cluster.ScheduleHere;
import sand.hostagent.sandbox.ApplicationSpec;
import sand.hostagent.sandbox.SandboxManager;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

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
   * @param partitionsWait longest wait for the bridge's partitions of a new application's grains before saying it
   *                       is deployed
   */
  record DeployPolicy(
      Duration workersTimeout, Duration retryInitial, Duration retryMax, Duration partitionsWait) {}

  /**
   * The cluster as the deployer sees it.
   *
   * @param hostId this host's id
   * @param store  the cluster state: applications wanted, their code, this host's state of each
   * @param topics makes the grain topics of a new application
   */
  record Cluster(String hostId, HostAgentTables store, GrainTopics topics, Clock clock) {}

  /**
   * The parts of this host an application gets.
   *
   * @param credentials     the bus's and data layer's credentials, where each sandbox's is granted and revoked
   * @param agentCredential the host agent's own (it deletes queues, revokes data)
   * @param socketsRoot     where each application's folder of Unix sockets is made
   */
  record Local(
      SandboxManager sandboxes,
      Credentials credentials,
      String agentCredential,
      LocalMessageBus bus,
      LocalDataLayer data,
      Path socketsRoot) {}

  /** The global bus bridge as the deployer sees it (the host agent hands in {@code GlobalBusBridge}'s methods). */
  interface Bridge {
    /** The grains that should get events here now (the bridge's subscription). */
    void grainsChanged(Set<GrainRef> grains);

    /**
     * An application's sandbox is gone and it does not run here any more: its events in flight will never be
     * reported (the bridge forgets them).
     */
    void appDrained(String appId);

    /** Whether the bridge has a partition of a grain's topic (until then, requests for it go via Kafka). */
    boolean hasPartitions(GrainRef grain);

    /** Whether an event of the application delivered here is not finished (its instance may run). */
    default boolean hasEventsInFlight(String appId) {
      return false;
    }

    /** The three from their methods (tests' from lists); no event is ever in flight. */
    static Bridge of(
        Consumer<Set<GrainRef>> grainsChanged,
        Consumer<String> appDrained,
        Predicate<GrainRef> hasPartitions) {
      return of(grainsChanged, appDrained, hasPartitions, app -> false);
    }

    /** The four from their methods (the host agent's from {@code GlobalBusBridge}). */
    static Bridge of(
        Consumer<Set<GrainRef>> grainsChanged,
        Consumer<String> appDrained,
        Predicate<GrainRef> hasPartitions,
        Predicate<String> hasEventsInFlight) {
      return new Bridge() {
        @Override
        public boolean hasEventsInFlight(String appId) {
          return hasEventsInFlight.test(appId);
        }

        @Override
        public void grainsChanged(Set<GrainRef> grains) {
          grainsChanged.accept(grains);
        }

        @Override
        public void appDrained(String appId) {
          appDrained.accept(appId);
        }

        @Override
        public boolean hasPartitions(GrainRef grain) {
          return hasPartitions.test(grain);
        }
      };
    }
  }

  /** Told of each deploy attempt (the metrics: its duration, and the application's name and account). */
  interface Observer {
    Observer NONE = (app, ok, seconds) -> {};

    void deployed(ApplicationRecord app, boolean ok, double seconds);

    /** Its sandbox here was stopped for being idle (scale to zero). */
    default void scaledToZero(ApplicationRecord app) {}

    /** Its sandbox started again for an event after scale to zero, in {@code seconds}. */
    default void coldStart(ApplicationRecord app, double seconds) {}
  }

  private final Observer observer;
  private final String hostId;
  private final HostAgentTables store;
  private final ScheduleHere schedule;
  /** A host with a heartbeat this recent counts towards a grain topic's partitions. */
  private static final Duration HOSTS_SEEN = Duration.ofSeconds(30);

  private final AppEnvironment environment;
  private final SandboxManager sandboxes;
  private final Bridge bridge;
  private final Credentials credentials;
  private final String agentCredential;
  private final LocalMessageBus bus;
  private final LocalDataLayer data;
  private final Path socketsRoot;
  private final GrainTopics topics;
  private final Clock clock;
  private final ApplicationLimits limits;
  private final DeployPolicy policy;
  private final CodeUpdate updates;
  /** Every application known here (running, starting, failed, unwell), with all that is known of it. */
  private final Map<String, ApplicationState> apps = new ConcurrentHashMap<>();
  /** The applications whose row for this host was read once ({@link #forgetStaleRow}). */
  private final Set<String> rowsChecked = ConcurrentHashMap.newKeySet();

  private final Object grainsLock = new Object();

  ApplicationDeployer(
      Cluster cluster, Local local, Bridge bridge, ApplicationLimits limits, DeployPolicy policy) {
    this(cluster, local, bridge, limits, policy, Observer.NONE);
  }

  ApplicationDeployer(
      Cluster cluster,
      Local local,
      Bridge bridge,
      ApplicationLimits limits,
      DeployPolicy policy,
      Observer observer) {
    this.observer = observer;
    this.hostId = cluster.hostId();
    this.store = cluster.store();
    this.schedule = new ScheduleHere(store, cluster.hostId(), cluster.clock());
    this.environment = new AppEnvironment(store);
    this.topics = cluster.topics();
    this.clock = cluster.clock();
    this.sandboxes = local.sandboxes();
    this.credentials = local.credentials();
    this.agentCredential = local.agentCredential();
    this.bus = local.bus();
    this.data = local.data();
    this.socketsRoot = local.socketsRoot();
    this.bridge = bridge;
    this.limits = limits;
    this.policy = policy;
    this.updates = new CodeUpdate(hostId, store, sandboxes, clock, policy.workersTimeout());
  }

  private ApplicationState state(String appId) {
    return apps.computeIfAbsent(appId, a -> new ApplicationState());
  }

  /** What runs here of {@code appId} (its sandbox may be draining), or null. */
  private Deployed running(String appId) {
    ApplicationState st = apps.get(appId);
    return st == null ? null : st.deployed;
  }

  private Failure failure(String appId) {
    ApplicationState st = apps.get(appId);
    return st == null ? null : st.failure;
  }

  /** Forget {@code appId} once nothing is known of it here. */
  private void forgetIfIdle(String appId) {
    apps.computeIfPresent(appId, (a, st) -> st.idle() ? null : st);
  }

  private Set<String> runningApps() {
    Set<String> ids = new LinkedHashSet<>();
    apps.forEach((a, st) -> {
      if (st.deployed != null) {
        ids.add(a);
      }
    });
    return ids;
  }

  /**
   * The applications to reconcile as a safety net (start-up, periodically): every application of the
   * cluster and every one running here, minus those waiting out a failed deploy's back-off.
   */
  Set<String> toReconcile() {
    Set<String> ids = new LinkedHashSet<>();
    Instant now = clock.instant();
    for (ApplicationRecord app : store.applications()) {
      Failure f = failure(app.appId());
      if (f == null
          || f.version() != app.version()
          || !now.isBefore(f.notBefore())
          || !app.wantedOn(hostId)) {
        ids.add(app.appId());
      }
    }
    ids.addAll(runningApps());
    return ids;
  }

  /** The hosts alive now (at least this one): grain topics get at least as many partitions. */
  private int liveHosts() {
    try {
      return Math.max(1, store.liveHosts(clock.instant(), HOSTS_SEEN).size());
    } catch (RuntimeException e) {
      return 1; // the topics keep what they have; the next deploy grows them
    }
  }

  /** Operators changed this host's schedule (cordon, drain, uncordon): read it at the next reconcile. */
  void scheduleChanged() {
    schedule.changed();
  }

  /** Reconcile one application (a control event named it). */
  void reconcile(String appId) {
    LogIdentity.Scope log = LogIdentity.scope(appId, null);
    try {
      store.application(appId).ifPresentOrElse(this::reconcile, () -> {
        rowsChecked.remove(appId);
        undeploy(appId);
      });
    } finally {
      log.close();
    }
  }

  private void reconcile(ApplicationRecord app) {
    Deployed current = running(app.appId());
    if (app.wantedOn(hostId) && schedule.admits(current != null)) {
      if (current == null || current.version() != app.version()) {
        Failure f = failure(app.appId());
        if (f != null && f.version() == app.version() && clock.instant().isBefore(f.notBefore())) {
          LOG.debug(
              "[host {} app {}] version {} failed {} times; next attempt at {}",
              hostId,
              app.appId(),
              app.version(),
              f.attempts(),
              f.notBefore());
          return;
        }
        Map<String, HostAgentTables.GrainCode> code = store.applicationCode(app.appId());
        if (current != null) {
          Set<String> changed = CodeUpdate.codeOnlyChange(current, app, code);
          if (!changed.isEmpty()
              && !state(app.appId()).scaledToZero // no sandbox to swap code in: a new one
              && sameEnvironment(app)
              && update(app, current, code, changed)) {
            return;
          }
          drainForRedeploy(app.appId(), current);
        }
        boolean deployed =
            deploy(app, f != null && f.version() == app.version() ? f.attempts() : 0, code, false);
        if (current != null) {
          if (deployed) {
            dropGoneGrains(app, current);
          } else { // the old sandbox is gone and the new one failed: undeploy here
            finishStop(app.appId(), null);
          }
        }
      } else {
        scaleIfWanted(app, current);
      }
    } else {
      ApplicationState st = apps.get(app.appId());
      if (st != null) {
        st.failure = null;
        forgetIfIdle(app.appId());
      }
      if (current != null) {
        undeploy(app.appId());
      } else if (!app.wantedOn(hostId)) {
        forgetStaleRow(app.appId());
      }
    }
  }

  /**
   * An application neither running nor wanted here whose row for this host still says it runs: this agent died
   * while it ran it, and was started again after the application left this host (the scheduler moved it, or it
   * was undeployed meanwhile). The row is read once per application in this agent's life (and again after a
   * state it could not record), so the periodic reconcile adds no reads.
   */
  private void forgetStaleRow(String appId) {
    if (!rowsChecked.add(appId)) {
      return;
    }
    try {
      for (HostAgentTables.AppHostState s : store.appHostStates(appId)) {
        if (s.hostId().equals(hostId)
            && (HostAgentTables.serves(s.status())
                || HostAgentTables.HOST_DEPLOYING.equals(s.status()))) {
          LOG.info(
              "[host {} app {}] its row here said {}; nothing runs here: recorded as undeployed",
              hostId,
              appId,
              s.status());
          store.setAppHostState(
              appId, hostId, HostAgentTables.HOST_UNDEPLOYED, null, clock.instant());
        }
      }
    } catch (RuntimeException e) {
      rowsChecked.remove(appId); // looked at again at the next reconcile
      LOG.warn("[host {} app {}] could not read its row here: {}", hostId, appId, e.toString());
    }
  }

  /** The sandbox runs with the application's settings.env and secrets as they are now (else: a new sandbox). */
  private boolean sameEnvironment(ApplicationRecord app) {
    try {
      return AppEnvironment.digest(environment.of(app)).equals(state(app.appId()).envDigest);
    } catch (RuntimeException e) { // a secret that does not open: the deploy says so
      return false;
    }
  }

  /** An update ({@link CodeUpdate}); false when there is no sandbox to update (then it is deployed anew). */
  private boolean update(
      ApplicationRecord app,
      Deployed current,
      Map<String, HostAgentTables.GrainCode> code,
      Set<String> changed) {
    CodeUpdate.Outcome outcome = updates.apply(app, current, code, changed);
    if (outcome == null) {
      return false;
    }
    ApplicationState st = state(app.appId());
    st.deployed = current.withVersion(app.version(), outcome.runs());
    st.failure = null;
    updates.record(app, outcome);
    return true;
  }

  /**
   * A redeploy's first half: stop the old sandbox, letting its running instances finish (stop grace). The
   * application stays in {@link #running} and in the bridge's grains meanwhile, so their reports are
   * handled as before (outputs forwarded once, flags written), and its local queues stay, with what is
   * queued in them, for the new sandbox.
   */
  private void drainForRedeploy(String appId, Deployed current) {
    LOG.info(
        "[host {} app {}] redeploying: stopping version {}; its local queues are kept",
        hostId,
        appId,
        current.version());
    drainSandbox(appId, current);
    credentials.revoke(appId); // the old sandbox's credential; the new version gets its own
  }

  /** A redeploy's second half: the queues of grains the new version no longer has go (replayed from Kafka). */
  private void dropGoneGrains(ApplicationRecord app, Deployed before) {
    Set<String> grains = running(app.appId()).grains();
    for (String g : before.grains()) {
      if (!grains.contains(g)) {
        int dropped = bus.deleteQueue(agentCredential, app.appId() + "/" + g);
        LOG.info(
            "[host {} app {}] grain {} is gone in version {}: its queue deleted ({} events, replayed from "
                + "Kafka)",
            hostId,
            app.appId(),
            g,
            app.version(),
            dropped);
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

  /**
   * Start the application's sandbox here; {@code wake}: it was scaled to zero, its queues, partitions and topics
   * are in place and the host still serves it (its state stays until the sandbox runs).
   */
  private boolean deploy(
      ApplicationRecord app,
      int failedBefore,
      Map<String, HostAgentTables.GrainCode> stored,
      boolean wake) {
    String appId = app.appId();
    LOG.info(
        "[host {} app {}] deploying version {}{}",
        hostId,
        appId,
        app.version(),
        failedBefore == 0 ? "" : " (attempt " + (failedBefore + 1) + ")");
    if (failedBefore == 0
        && !wake) { // a retry stays 'failed' until it succeeds: the developer sees why it failed
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYING, null, clock.instant());
    }
    AppSockets sockets = null;
    ApplicationState st = state(appId);
    long t0 = System.nanoTime();
    try {
      Set<String> grains = Workflow.parse(app.workflow()).grains().keySet();
      ApplicationSettings settings = ApplicationSettings.fromJson(app.settings());
      limits.check(settings, grains.size(), 0);
      Map<String, ApplicationSpec.Code> code = new LinkedHashMap<>();
      stored.forEach((resource, c) -> code.put(
          resource,
          "zip".equals(c.kind())
              ? ApplicationSpec.Code.zip(c.code())
              : new ApplicationSpec.Code(ApplicationSpec.Kind.PY, c.code())));
      AppEnv env = environment.of(app); // settings.env and the secrets, opened once per deploy
      String credential = HexFormat.of().formatHex(randomBytes());
      st.unhealthy.clear(); // what the last sandbox's workers said is not about this one
      st.starting = grains;
      credentials.grant(appId, credential);
      sockets = new AppSockets(
          socketsRoot.resolve(appId), appId, bus, new DataLayerService(data).processor(), 1024);
      sandboxes.deploy(new ApplicationSpec(
          appId,
          app.workflow(),
          code,
          app.requirements() == null ? "" : app.requirements(),
          settings,
          credential,
          sockets.dir(),
          grains,
          env));
      awaitWorkers(appId, grains);
      if (!wake) {
        topics.ensureGrainTopics(appId, grains, liveHosts());
      }
      Deployed deployed = new Deployed(
          app.version(),
          sockets,
          grains,
          app.workflow(),
          String.valueOf(app.settings()),
          String.valueOf(app.requirements()),
          CodeUpdate.fingerprint(stored));
      synchronized (grainsLock) {
        st.deployed = deployed;
        bridge.grainsChanged(grainRefs());
      }
      awaitPartitions(appId, grains);
      st.failure = null;
      st.envDigest = AppEnvironment.digest(env);
      st.unhealthy.clear(); // a new sandbox: its workers start with a clean slate
      st.scaledToZero = false;
      st.scaleToZeroAfter = ScaleToZero.of(app.settings());
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYED, null, clock.instant());
      LOG.info("[host {} app {}] deployed: grains {}", hostId, appId, grains);
      observer.deployed(app, true, (System.nanoTime() - t0) / 1e9);
      return true;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      int attempts = failedBefore + 1;
      Duration wait = backoff(attempts);
      st.failure = new Failure(app.version(), attempts, clock.instant().plus(wait));
      LOG.warn(
          "[host {} app {}] deploy of version {} failed (attempt {}; next in {} s): {}",
          hostId,
          appId,
          app.version(),
          attempts,
          wait.toSeconds(),
          why);
      observer.deployed(app, false, (System.nanoTime() - t0) / 1e9);
      if (sockets != null) {
        sockets.close();
      }
      credentials.revoke(appId);
      try {
        store.setAppHostState(
            appId,
            hostId,
            HostAgentTables.HOST_FAILED,
            why + " [host " + hostId + ", attempt " + attempts + "; tried again in "
                + wait.toSeconds() + " s, or at once on a new deploy]",
            clock.instant());
      } catch (RuntimeException re) {
        LOG.warn("[host {} app {}] could not record the failure: {}", hostId, appId, re.toString());
      }
      return false;
    } finally {
      st.starting = null;
    }
  }

  /**
   * A new application's first requests are fast only once Kafka has assigned this host partitions of its grains'
   * topics (the gate backs a request up there; before that it goes through Kafka, ~1 s on a rebalance): wait for them,
   * bounded, before saying it is deployed. A wait that runs out is logged, not a failure.
   */
  private void awaitPartitions(String appId, Set<String> grains) throws InterruptedException {
    long deadline = System.nanoTime() + policy.partitionsWait().toNanos();
    for (String g : grains) {
      GrainRef ref = new GrainRef(appId, g);
      while (!bridge.hasPartitions(ref)) {
        if (System.nanoTime() > deadline) {
          LOG.warn(
              "[host {} app {}] Kafka has not assigned this host a partition of {} within {} s: its first "
                  + "requests go through Kafka",
              hostId,
              appId,
              ref.topic(),
              policy.partitionsWait().toSeconds());
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
      Map<String, Integer> pollers = new HashMap<>();
      bus.queueStats().forEach(s -> pollers.put(s.queue(), s.waitingPollers()));
      for (String g : grains) {
        if (pollers.getOrDefault(appId + "/" + g, 0) == 0) {
          waiting.add(g);
        }
      }
      if (waiting.isEmpty()) {
        return;
      }
      Map<String, String> sick = state(appId).unhealthy;
      if (!sick.isEmpty()) {
        sandboxes.undeploy(appId);
        throw new IllegalStateException(String.join("; ", new TreeMap<>(sick).values()));
      }
      if (System.nanoTime() > deadline) {
        String logs = sandboxes.logs(appId, 20);
        sandboxes.undeploy(appId);
        throw new IllegalStateException(
            "the sandbox did not start grain workers for " + waiting + " within "
                + policy.workersTimeout().toSeconds() + " s; its last log lines:\n" + logs);
      }
      Thread.sleep(WORKERS_POLL_MS);
    }
  }

  /** How often a new sandbox's workers are looked for: a cold start after scale to zero waits for them. */
  private static final int WORKERS_POLL_MS = 10;

  // ---- scale to zero (docs/operations.md "Scale to zero")

  /**
   * The idle watch's finding ({@link IdleSandboxes}): each application running here that has been idle past its
   * {@code scale_to_zero_after_s} is handed to {@code request} (its lane), which stops its sandbox if it still is.
   */
  void idleFor(Map<String, Duration> idle, Consumer<String> request) {
    idle.forEach((appId, d) -> {
      ApplicationState st = apps.get(appId);
      Deployed dep = st == null ? null : st.deployed;
      if (dep == null
          || st.stopping
          || st.scaledToZero
          || st.starting != null
          || st.scaleToZeroWanted) {
        return;
      }
      Duration after = st.scaleToZeroAfter;
      if (!after.isZero() && d.compareTo(after) >= 0) {
        st.scaleToZeroWanted = true;
        request.accept(appId);
      }
    });
  }

  /**
   * An event was put in a queue of {@code appId}: true (once) when its sandbox is scaled to zero here and its lane
   * must start it. On the publisher's thread, for every event: one map read.
   */
  boolean arrived(String appId) {
    ApplicationState st = apps.get(appId);
    if (st == null || !st.scaledToZero || st.wakeWanted) {
      return false;
    }
    st.wakeWanted = true;
    return true;
  }

  /** In the application's lane: start its sandbox when an event came, or stop it when it was found idle. */
  private void scaleIfWanted(ApplicationRecord app, Deployed current) {
    ApplicationState st = state(app.appId());
    if (st.scaledToZero) {
      if (st.wakeWanted) {
        wake(app);
      }
    } else if (st.scaleToZeroWanted) {
      st.scaleToZeroWanted = false;
      scaleToZero(app, current);
    }
  }

  private void scaleToZero(ApplicationRecord app, Deployed d) {
    String appId = app.appId();
    if (queued(appId) > 0 || bridge.hasEventsInFlight(appId)) {
      return; // busy again (or an instance still runs): the idle watch asks again once it is idle
    }
    ApplicationState st = state(appId);
    st.scaledToZero = true; // from here on an event asks for a sandbox (arrived)
    st.scaledToZeroAt = System.nanoTime();
    LOG.info(
        "[host {} app {}] no event for {} s: stopping its sandbox here (scale to zero); its queues and "
            + "partitions stay, and the next event starts it again",
        hostId,
        appId,
        st.scaleToZeroAfter.toSeconds());
    drainSandbox(appId, d);
    credentials.revoke(appId);
    observer.scaledToZero(app);
    try {
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_IDLE, null, clock.instant());
    } catch (RuntimeException e) {
      LOG.warn("[host {} app {}] could not record it idle: {}", hostId, appId, e.toString());
    }
    if (queued(appId) > 0 && !st.wakeWanted) { // came while it stopped, before arrived() could tell
      st.wakeWanted = true;
    }
    if (st.wakeWanted) {
      wake(app);
    }
  }

  /** An event came for an application scaled to zero here: its sandbox starts again (a cold start). */
  private void wake(ApplicationRecord app) {
    String appId = app.appId();
    ApplicationState st = state(appId);
    st.wakeWanted = false;
    long t0 = System.nanoTime();
    LOG.info(
        "[host {} app {}] an event arrived: starting its sandbox again (scaled to zero {} s ago)",
        hostId,
        appId,
        (t0 - st.scaledToZeroAt) / 1_000_000_000L);
    if (deploy(app, 0, store.applicationCode(appId), true)) {
      double s = (System.nanoTime() - t0) / 1e9;
      LOG.info(
          "[host {} app {}] cold start: its sandbox runs again after {} ms",
          hostId,
          appId,
          Math.round(s * 1000));
      observer.coldStart(app, s);
    } else { // its queued events are replayed from Kafka where it runs (here too, at the next try)
      finishStop(appId, null);
    }
  }

  /** Events waiting in the application's local queues here. */
  private int queued(String appId) {
    int n = 0;
    for (QueueStats q : bus.queueStats()) {
      if (appId.equals(q.application())) {
        n += q.length();
      }
    }
    return n;
  }

  private static byte[] randomBytes() {
    byte[] b = new byte[24];
    RANDOM.nextBytes(b);
    return b;
  }

  void undeploy(String appId) {
    LogIdentity.Scope log = LogIdentity.scope(appId, null);
    try {
      stop(appId, HostAgentTables.HOST_UNDEPLOYED);
    } finally {
      log.close();
    }
  }

  /**
   * Stop an application here and record {@code state} for this host: the bridge stops consuming its
   * partitions first, then its sandbox drains while it is still known here (reports of its last
   * instances are handled), then its queues, credentials and events in flight are dropped.
   */
  private void stop(String appId, String state) {
    ApplicationState st = apps.get(appId);
    if (st == null) {
      return;
    }
    st.unhealthy.clear();
    Deployed d = st.deployed;
    if (d == null) {
      forgetIfIdle(appId);
      return;
    }
    LOG.info("[host {} app {}] undeploying", hostId, appId);
    synchronized (grainsLock) {
      st.stopping = true;
      bridge.grainsChanged(grainRefs());
    }
    drainSandbox(appId, d);
    finishStop(appId, state);
  }

  /** After the sandbox is gone: forget the application here; record {@code state} unless null. */
  private void finishStop(String appId, String state) {
    ApplicationState st = apps.get(appId);
    synchronized (grainsLock) {
      if (st != null) {
        st.deployed = null;
        st.stopping = false;
        st.scaledToZero = false;
        st.wakeWanted = false;
      }
      bridge.grainsChanged(grainRefs());
    }
    forgetIfIdle(appId);
    bus.deleteApplicationQueues(agentCredential, appId);
    data.revokeApplication(agentCredential, appId);
    bridge.appDrained(appId);
    if (state == null) {
      return;
    }
    try {
      store.setAppHostState(appId, hostId, state, null, clock.instant());
    } catch (RuntimeException e) {
      rowsChecked.remove(appId); // the row may still say it runs here: read at the next reconcile
      LOG.warn(
          "[host {} app {}] could not record state {}: {}", hostId, appId, state, e.toString());
    }
  }

  /** The grains that get events here: those of the applications running here and not being undeployed. */
  private Set<GrainRef> grainRefs() {
    Set<GrainRef> refs = new LinkedHashSet<>();
    apps.forEach((app, st) -> {
      Deployed d = st.deployed;
      if (d != null && !st.stopping) {
        d.grains().forEach(g -> refs.add(new GrainRef(app, g)));
      }
    });
    return refs;
  }

  Set<String> deployedApps() {
    return Set.copyOf(runningApps());
  }

  /** The applications deployed here whose sandbox is scaled to zero. */
  Set<String> scaledToZeroApps() {
    Set<String> ids = new LinkedHashSet<>();
    apps.forEach((a, st) -> {
      if (st.deployed != null && st.scaledToZero) {
        ids.add(a);
      }
    });
    return ids;
  }

  /**
   * A sandbox's supervisor (or a grain worker whose code did not load) reported on a grain worker: while the
   * sandbox starts, that fails the deploy ({@link #awaitWorkers}); later, a crash-looping worker shows in this
   * host's state of the application ("deployed", with an error naming the grain and why) until the supervisor
   * says it runs again.
   */
  void workerHealth(String appId, String grain, String state, String message) {
    ApplicationState st = apps.get(appId);
    Set<String> starting = st == null ? null : st.starting;
    boolean ours = knowsGrain(appId, grain) || (starting != null && starting.contains(grain));
    if (st == null
        || "exited".equals(state)
        || !ours
        || updates.heard(appId, grain, state, message)) {
      // one death is not a state (LocalRecovery acts on it); or not a grain of this application
      // here (a report from
      // a sandbox already replaced, or forged)
      return;
    }
    Map<String, String> sick = st.unhealthy;
    boolean changed = "running".equals(state) || "reloaded".equals(state)
        ? sick.remove(grain) != null
        : !message.equals(sick.put(grain, message));
    if (!changed || st.deployed == null) {
      return;
    }
    String error = sick.isEmpty() ? null : String.join("; ", new TreeMap<>(sick).values());
    LOG.info("[host {} app {}] grain worker {} {}: {}", hostId, appId, grain, state, message);
    try {
      store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYED, error, clock.instant());
    } catch (RuntimeException e) {
      LOG.warn(
          "[host {} app {}] could not record the workers' health: {}", hostId, appId, e.toString());
    }
  }

  /** Whether {@code grain} is a grain of the workflow of {@code appId} as deployed here. */
  boolean knowsGrain(String appId, String grain) {
    Deployed d = running(appId);
    return d != null && d.grains().contains(grain);
  }

  /** The agent stops: its sandboxes stop too (the applications stay deployed in the cluster state). */
  @Override
  public void close() {
    for (String appId : runningApps()) {
      stop(appId, HostAgentTables.HOST_STOPPED);
    }
  }
}
