package sand.hostagent;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.Credentials;
import sand.datalayer.DataLayerService;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.GlobalBusBridge;
import sand.hostagent.bridge.GrainRef;
import sand.hostagent.cluster.ClusterStore;
import sand.hostagent.cluster.ClusterStore.ApplicationRecord;
import sand.hostagent.sandbox.ApplicationSettings;
import sand.hostagent.sandbox.ApplicationSpec;
import sand.hostagent.sandbox.SandboxManager;
import sand.hostagent.sandbox.internal.WorkflowGrains;
import sand.localbus.LocalMessageBus;

/**
 * Makes this host run what the cluster state says it should: for each application wanted here, its own
 * credential and Unix sockets, its sandbox, and the bridge consuming its grains' partitions; for each
 * application no longer wanted, the reverse. Calls are serialised by the caller (one control thread).
 *
 * <p>Undeploy hands queued events back rather than running them: the bridge stops consuming the app's
 * partitions (committing only up to the oldest unfinished event), so an event still in a local queue is
 * replayed from Kafka by whichever host runs the grain next.
 */
final class ApplicationDeployer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ApplicationDeployer.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final java.time.Duration WORKERS_UP = java.time.Duration.ofSeconds(60);

  private record Deployed(int version, AppSockets sockets, Set<String> grains) {}

  private final String hostId;
  private final ClusterStore store;
  private final SandboxManager sandboxes;
  private final GlobalBusBridge bridge;
  private final Credentials credentials;
  private final String agentCredential;
  private final LocalMessageBus bus;
  private final LocalDataLayer data;
  private final Path socketsRoot;
  private final KafkaTopics topics;
  private final Clock clock;
  private final Map<String, Deployed> running = new ConcurrentHashMap<>();

  ApplicationDeployer(String hostId, ClusterStore store, SandboxManager sandboxes, GlobalBusBridge bridge,
                      Credentials credentials, String agentCredential, LocalMessageBus bus, LocalDataLayer data,
                      Path socketsRoot, KafkaTopics topics, Clock clock) {
    this.hostId = hostId;
    this.store = store;
    this.sandboxes = sandboxes;
    this.bridge = bridge;
    this.credentials = credentials;
    this.agentCredential = agentCredential;
    this.bus = bus;
    this.data = data;
    this.socketsRoot = socketsRoot;
    this.topics = topics;
    this.clock = clock;
  }

  /** Reconcile every application of the cluster (start-up, and periodically as a safety net). */
  void reconcileAll() {
    Set<String> seen = new LinkedHashSet<>();
    for (ApplicationRecord app : store.applications()) {
      seen.add(app.appId());
      reconcile(app);
    }
    for (String appId : Set.copyOf(running.keySet())) {
      if (!seen.contains(appId)) {
        undeploy(appId);
      }
    }
  }

  /** Reconcile one application (a control event named it). */
  void reconcile(String appId) {
    store.application(appId).ifPresentOrElse(this::reconcile, () -> undeploy(appId));
  }

  private void reconcile(ApplicationRecord app) {
    Deployed current = running.get(app.appId());
    if (app.wantedOn(hostId)) {
      if (current == null || current.version() != app.version()) {
        if (current != null) {
          undeploy(app.appId());
        }
        deploy(app);
      }
    } else if (current != null) {
      undeploy(app.appId());
    }
  }

  private void deploy(ApplicationRecord app) {
    String appId = app.appId();
    LOG.info("[host {} app {}] deploying version {}", hostId, appId, app.version());
    store.setAppHostState(appId, hostId, "deploying", null, clock.instant());
    AppSockets sockets = null;
    try {
      Set<String> grains = WorkflowGrains.parse(app.workflow()).resourceByGrain().keySet();
      Map<String, ApplicationSpec.Code> code = new LinkedHashMap<>();
      store.applicationCode(appId).forEach((resource, c) -> code.put(resource,
          "zip".equals(c.kind()) ? ApplicationSpec.Code.zip(c.code())
              : new ApplicationSpec.Code(ApplicationSpec.Kind.PY, c.code())));
      String credential = HexFormat.of().formatHex(randomBytes());
      credentials.grant(appId, credential);
      sockets = new AppSockets(socketsRoot.resolve(appId), appId, bus,
          new DataLayerService(data).processor(), 1024);
      sandboxes.deploy(new ApplicationSpec(appId, app.workflow(), code, app.requirements() == null ? ""
          : app.requirements(), ApplicationSettings.fromJson(app.settings()), credential, sockets.dir(), grains));
      awaitWorkers(appId, grains);
      topics.ensureGrainTopics(appId, grains);
      running.put(appId, new Deployed(app.version(), sockets, grains));
      bridge.updateGrains(grainRefs());
      store.setAppHostState(appId, hostId, "deployed", null, clock.instant());
      LOG.info("[host {} app {}] deployed: grains {}", hostId, appId, grains);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      LOG.warn("[host {} app {}] deploy failed: {}", hostId, appId, why);
      if (sockets != null) {
        sockets.close();
      }
      credentials.revoke(appId);
      store.setAppHostState(appId, hostId, "failed", why, clock.instant());
    }
  }

  /**
   * A sandbox is up when every grain's worker is long-polling its local queue; until then the
   * application is not deployed (a sandbox that crash-loops fails the deploy with its own last words).
   */
  private void awaitWorkers(String appId, Set<String> grains) throws InterruptedException {
    long deadline = System.nanoTime() + WORKERS_UP.toNanos();
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
      if (System.nanoTime() > deadline) {
        String logs = sandboxes.logs(appId, 20);
        sandboxes.undeploy(appId);
        throw new IllegalStateException("the sandbox did not start grain workers for " + waiting + " within "
            + WORKERS_UP.toSeconds() + " s; its last log lines:\n" + logs);
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
    stop(appId, "undeployed");
  }

  /** Stop an application here and record {@code state} for this host. */
  private void stop(String appId, String state) {
    Deployed d = running.remove(appId);
    if (d == null) {
      return;
    }
    LOG.info("[host {} app {}] undeploying", hostId, appId);
    bridge.updateGrains(grainRefs());
    sandboxes.undeploy(appId);
    d.sockets().close();
    bus.deleteApplicationQueues(agentCredential, appId);
    data.revokeApplication(agentCredential, appId);
    try {
      store.setAppHostState(appId, hostId, state, null, clock.instant());
    } catch (RuntimeException e) {
      LOG.warn("[host {} app {}] could not record state {}: {}", hostId, appId, state, e.toString());
    }
  }

  private Set<GrainRef> grainRefs() {
    Set<GrainRef> refs = new LinkedHashSet<>();
    running.forEach((app, d) -> d.grains().forEach(g -> refs.add(new GrainRef(app, g))));
    return refs;
  }

  Set<String> deployedApps() {
    return Set.copyOf(running.keySet());
  }

  /** The agent stops: its sandboxes stop too (the applications stay deployed in the cluster state). */
  @Override
  public void close() {
    for (String appId : Set.copyOf(running.keySet())) {
      stop(appId, "stopped");
    }
  }
}
