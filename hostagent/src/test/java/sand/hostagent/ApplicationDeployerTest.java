package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.GrainCode;
import sand.cluster.InMemoryClusterStore;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.Credentials;
import sand.common.testing.ManualClock;
import sand.contracts.ApplicationLimits;
import sand.contracts.GrainRef;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.sandbox.FakeDockerEngine;
import sand.hostagent.sandbox.SandboxManager;
import sand.hostagent.sandbox.SandboxSettings;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;

/**
 * The host agent's deploy orchestration on fakes: Docker is {@link FakeDockerEngine}, the cluster state is in
 * memory, the grain workers are threads long-polling the real local bus (what the agent waits for).
 */
class ApplicationDeployerTest {
  private static final String HOST = "h1";
  private static final String AGENT = "agent-credential-0123456789";
  private static final String WORKFLOW = "{\"name\": \"w\", \"entry\": \"a\", \"functions\": ["
      + "{\"name\": \"a\", \"next\": [\"b\"]}, {\"name\": \"b\", \"next\": [\"end\"]}]}";

  /** Records every per-host state the deployer writes, in order. */
  static final class RecordingStore extends InMemoryClusterStore {
    final List<String> states = new CopyOnWriteArrayList<>();

    @Override
    public void setAppHostState(
        String appId, String hostId, String status, String error, Instant now) {
      states.add(appId + ":" + status);
      super.setAppHostState(appId, hostId, status, error, now);
    }

    String state(String appId) {
      return appHostStates(appId).stream()
          .filter(s -> s.hostId().equals(HOST))
          .map(s -> s.status())
          .findFirst()
          .orElse("");
    }

    String error(String appId) {
      return appHostStates(appId).stream()
          .filter(s -> s.hostId().equals(HOST))
          .map(s -> s.error() == null ? "" : s.error())
          .findFirst()
          .orElse("");
    }
  }

  @TempDir
  Path tmp;

  RecordingStore store;
  FakeDockerEngine docker;
  LocalMessageBus bus;
  LocalDataLayer data;
  ManualClock clock;
  ExecutorService pool;
  final List<Set<GrainRef>> grainUpdates = new CopyOnWriteArrayList<>();
  final List<String> drained = new CopyOnWriteArrayList<>();
  final InMemoryGrainTopics topics = new InMemoryGrainTopics();
  final List<Thread> workers = new ArrayList<>();

  @BeforeEach
  void setUp() {
    store = new RecordingStore();
    docker = new FakeDockerEngine();
    Credentials credentials = new Credentials(AGENT);
    bus = new LocalMessageBus(credentials, LocalBusSettings.defaults());
    data = new LocalDataLayer(
        credentials, new InMemoryGlobalDataLayer(), LocalDataLayer.Options.defaults());
    clock = new ManualClock(Instant.ofEpochMilli(1_000_000_000L));
    pool = Executors.newFixedThreadPool(4);
  }

  @AfterEach
  void tearDown() throws Exception {
    pool.shutdownNow();
    pool.awaitTermination(5, TimeUnit.SECONDS);
    workers.forEach(Thread::interrupt);
    data.close();
  }

  ApplicationDeployer deployer(ApplicationLimits limits) {
    return deployer(limits, g -> true);
  }

  ApplicationDeployer deployer(ApplicationLimits limits, Predicate<GrainRef> partitioned) {
    SandboxManager sandboxes =
        new SandboxManager(HOST, SandboxSettings.defaults(tmp.resolve("state")), docker, clock);
    return new ApplicationDeployer(
        new ApplicationDeployer.Cluster(HOST, store, topics, clock),
        new ApplicationDeployer.Local(
            sandboxes, bus.credentials(), AGENT, bus, data, tmp.resolve("sockets")),
        ApplicationDeployer.Bridge.of(grainUpdates::add, drained::add, partitioned),
        limits,
        new ApplicationDeployer.DeployPolicy(
            Duration.ofSeconds(20),
            Duration.ofSeconds(30),
            Duration.ofSeconds(240),
            Duration.ofSeconds(15)));
  }

  /** An application of grains a and b; {@code codeOfA} null leaves a's code out (the deploy fails at once). */
  void putApp(String appId, int version, String settings, String codeOfA) {
    Map<String, GrainCode> code = new LinkedHashMap<>();
    if (codeOfA != null) {
      code.put(
          "a",
          new GrainCode(
              "a",
              codeOfA.getBytes(StandardCharsets.UTF_8),
              "py",
              Integer.toHexString(codeOfA.hashCode())));
    }
    code.put(
        "b",
        new GrainCode(
            "b", "def handle(e, c):\n    return e\n".getBytes(StandardCharsets.UTF_8), "py", "y"));
    store.replaceApplicationCode(appId, Map.of());
    store.putApplication(
        new ApplicationRecord(
            appId, appId, "acct", WORKFLOW, "", settings, version, "deployed", List.of()),
        code);
  }

  void putApp(String appId, int version) {
    putApp(appId, version, "{}", "def handle(e, c):\n    return e\n");
  }

  /** Stand-in grain workers of {@code appId}: long-poll each grain's queue until it is deleted. */
  void startWorkers(String appId) {
    for (String g : List.of("a", "b")) {
      Thread t = new Thread(
          () -> {
            try {
              while (!Thread.currentThread().isInterrupted()) {
                bus.poll(AGENT, appId + "/" + g, 1, 60_000);
                if (!bus.queueStats().stream().anyMatch(s -> s.queue().equals(appId + "/" + g))) {
                  return;
                }
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          },
          "worker-" + appId + "-" + g);
      t.setDaemon(true);
      t.start();
      workers.add(t);
    }
  }

  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 15 s: " + what);
      }
      Thread.sleep(10);
    }
  }

  @Test
  void oneApplicationsStuckDeployDoesNotHoldAnothers() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    ReconcileLanes lanes = new ReconcileLanes(pool, d::reconcile);
    putApp("stuck", 1);
    putApp("good", 1);
    lanes.request(
        "stuck"); // its workers never poll until the test says so: the deploy waits for them
    await(() -> docker.container("sand-stuck-h1") != null, "the stuck app's sandbox is created");
    startWorkers("good");
    lanes.request("good");
    await(() -> "deployed".equals(store.state("good")), "the good app is deployed");
    assertTrue(lanes.busy("stuck"), "the stuck deploy is still waiting for its workers");
    assertEquals("deploying", store.state("stuck"));
    assertTrue(
        d.knowsGrain("good", "a") && !d.knowsGrain("good", "zz") && !d.knowsGrain("stuck", "a"));
    startWorkers("stuck");
    await(
        () -> "deployed".equals(store.state("stuck")),
        "the stuck app is deployed once its workers poll");
    assertEquals(
        List.of("sand.good.a", "sand.good.b", "sand.stuck.a", "sand.stuck.b"), topics.topics());
    assertEquals(
        Set.of(
            new GrainRef("good", "a"),
            new GrainRef("good", "b"),
            new GrainRef("stuck", "a"),
            new GrainRef("stuck", "b")),
        grainUpdates.get(grainUpdates.size() - 1));
  }

  @Test
  void requestsForABusyApplicationAreCoalescedIntoOneMoreRun() throws Exception {
    List<String> runs = new CopyOnWriteArrayList<>();
    CountDownLatch release = new CountDownLatch(1);
    ReconcileLanes lanes = new ReconcileLanes(pool, app -> {
      runs.add(app);
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    lanes.request("x");
    await(() -> runs.size() == 1, "first run started");
    lanes.request("x");
    lanes.request("x");
    lanes.request("x");
    release.countDown();
    await(() -> !lanes.busy("x"), "lane idle");
    assertEquals(2, runs.size(), "three requests during a run make one more run: " + runs);
  }

  @Test
  void aFailedDeployIsRetriedWithBackOffAndStaysFailedMeanwhile() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("broken", 1, "{}", null);
    d.reconcile("broken");
    assertEquals("failed", store.state("broken"));
    assertTrue(
        store.error("broken").contains("attempt 1; tried again in 30 s"), store.error("broken"));
    int creates = docker.calls().size();

    d.reconcile(
        "broken"); // a control event or the safety net before the back-off ran out: nothing happens
    assertFalse(d.toReconcile().contains("broken"));
    assertEquals(creates, docker.calls().size());

    clock.advance(Duration.ofSeconds(30));
    assertTrue(d.toReconcile().contains("broken"));
    store.states.clear();
    d.reconcile("broken");
    assertEquals(
        List.of("broken:failed"), store.states, "a retry never flips the state back to deploying");
    assertTrue(
        store.error("broken").contains("attempt 2; tried again in 60 s"), store.error("broken"));

    putApp(
        "broken", 2); // a new deploy (new version) is tried at once, and starts over as deploying
    startWorkers("broken");
    store.states.clear();
    d.reconcile("broken");
    assertEquals(List.of("broken:deploying", "broken:deployed"), store.states);
  }

  @Test
  void backOffDoublesUpToItsCap() {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    assertEquals(
        List.of(30L, 60L, 120L, 240L, 240L, 240L),
        IntStream.rangeClosed(1, 6).mapToObj(a -> d.backoff(a).toSeconds()).toList());
    assertEquals(240, d.backoff(1000).toSeconds());
  }

  @Test
  void settingsAboveThisHostsCapsFailTheDeployNamingTheCap() throws Exception {
    ApplicationLimits limits = ApplicationLimits.from(
        ApplicationLimits.DEF.parse(Map.of(), Map.of("sandbox.memory.mb.max", "1024")));
    ApplicationDeployer d = deployer(limits);
    putApp("big", 1, "{\"sandbox_memory_mb\": 4096}", "def handle(e, c):\n    return e\n");
    d.reconcile("big");
    assertEquals("failed", store.state("big"));
    assertTrue(
        store.error("big").contains("sandbox_memory_mb=4096 is above the operator's cap 1024"),
        store.error("big"));
    assertTrue(docker.containers().isEmpty(), "no sandbox was created");
  }

  @Test
  void undeployStopsTheSandboxAndForgetsTheGrains() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    assertEquals("deployed", store.state("app"));
    store.setDesired("app", "undeployed", List.of());
    d.reconcile("app");
    assertEquals("undeployed", store.state("app"));
    assertFalse(d.knowsGrain("app", "a"));
    assertEquals(Set.of(), grainUpdates.get(grainUpdates.size() - 1));
    assertTrue(docker.containers().isEmpty());
  }

  @Test
  void aRowLeftSayingDeployedByAnAgentThatDiedIsRecordedUndeployedWhenTheApplicationLeftThisHost()
      throws Exception {
    putApp("moved", 1);
    store.setPlacement("moved", List.of("elsewhere"));
    putApp("gone", 1);
    store.setDesired("gone", "undeployed", List.of());
    putApp("here", 1);
    for (String app :
        List.of("moved", "gone", "here")) { // what this host wrote before it was killed
      store.setAppHostState(app, HOST, HostAgentTables.HOST_DEPLOYED, null, clock.instant());
    }
    store.setAppHostState(
        "moved", "elsewhere", HostAgentTables.HOST_DEPLOYED, null, clock.instant());
    store.states.clear();
    ApplicationDeployer d =
        deployer(ApplicationLimits.defaults()); // this host's agent, started again
    startWorkers("here");
    d.toReconcile().forEach(d::reconcile);
    assertEquals("undeployed", store.state("moved"));
    assertEquals("undeployed", store.state("gone"));
    assertEquals(
        "deployed", store.state("here"), "an application placed here is deployed, not forgotten");
    assertEquals(
        List.of("elsewhere:deployed"),
        store.appHostStates("moved").stream()
            .filter(s -> !s.hostId().equals(HOST))
            .map(s -> s.hostId() + ":" + s.status())
            .toList(),
        "another host's row is that host's own");
    int writes = store.states.size();
    d.toReconcile().forEach(d::reconcile);
    assertEquals(
        writes, store.states.size(), "read once: the periodic reconcile writes nothing more");
  }

  @Test
  void undeployDrainsTheSandboxWhileTheApplicationIsStillKnownThenForgetsItsEvents()
      throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    List<String> atStop = new CopyOnWriteArrayList<>();
    docker.onStop(
        "sand-app-",
        c -> atStop.add("knows b: " + d.knowsGrain("app", "b") + ", events given: "
            + grainUpdates.get(grainUpdates.size() - 1) + ", drained: " + drained));
    store.setDesired("app", "undeployed", List.of());
    d.reconcile("app");
    assertEquals(
        List.of("knows b: true, events given: [], drained: []"),
        atStop,
        "the last instances' outputs are still accepted; the bridge stopped delivering; in-flight events kept");
    assertEquals(List.of("app"), drained, "forgotten once the sandbox is gone");
    assertFalse(d.knowsGrain("app", "a"));
  }

  @Test
  void aRedeployKeepsTheQueuedEventsAndTheEventsInFlightForTheNewSandbox() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    Set<GrainRef> both = Set.of(new GrainRef("app", "a"), new GrainRef("app", "b"));
    assertEquals(both, grainUpdates.get(grainUpdates.size() - 1));
    for (Thread t : workers) { // version 1's workers stop taking events (SIGTERM)
      t.interrupt();
      t.join(5000);
    }
    bus.publish(AGENT, "app/a", "queued-1".getBytes(StandardCharsets.UTF_8));
    bus.publish(AGENT, "app/b", "queued-2".getBytes(StandardCharsets.UTF_8));
    List<String> atStop = new CopyOnWriteArrayList<>();
    docker.onStop(
        "sand-app-",
        c -> atStop.add("knows b: " + d.knowsGrain("app", "b") + ", events given: "
            + grainUpdates.get(grainUpdates.size() - 1).size()));
    List<String> taken = new CopyOnWriteArrayList<>();
    docker.onStart(
        "sand-app-",
        c -> { // version 2's grain workers: record what they take
          for (String g : List.of("a", "b")) {
            Thread t = new Thread(
                () -> {
                  try {
                    while (!Thread.currentThread().isInterrupted()) {
                      bus.poll(AGENT, "app/" + g, 10, 60_000)
                          .forEach(m -> taken.add(new String(m, StandardCharsets.UTF_8)));
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                },
                "worker-v2-" + g);
            t.setDaemon(true);
            t.start();
            workers.add(t);
          }
        });
    int updatesBefore = grainUpdates.size();
    putApp("app", 2);
    d.reconcile("app");
    assertEquals("deployed", store.state("app"));
    assertEquals(
        List.of("knows b: true, events given: 2"),
        atStop,
        "while the old sandbox drains, its instances' outputs are accepted and the bridge keeps the application");
    assertTrue(
        grainUpdates.subList(updatesBefore, grainUpdates.size()).stream().allMatch(both::equals),
        "the bridge never dropped the application (its events in flight are kept): "
            + grainUpdates);
    assertEquals(List.of(), drained);
    await(() -> taken.size() == 2, "the queued events reach the new sandbox");
    assertEquals(Set.of("queued-1", "queued-2"), Set.copyOf(taken));
  }

  /** The application's folder as the sandbox sees it. */
  String fileOfApp(String appId, String name) throws Exception {
    return Files.readString(tmp.resolve("state").resolve("apps").resolve(appId).resolve(name));
  }

  @Test
  void anUpdateOfOnlyPyCodeRestartsOnlyThoseGrainWorkersInTheRunningSandbox() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    int updates = grainUpdates.size();
    List<String> signals = new CopyOnWriteArrayList<>();
    docker.onKill(
        "sand-app-",
        sig -> { // the supervisor: restarts the worker of a, which loads its new code
          signals.add(sig);
          d.workerHealth("app", "a", "exited", "grain worker a stopped for new code");
          d.workerHealth("app", "a", "reloaded", "grain worker a runs its new code");
        });
    putApp("app", 2, "{}", "def handle(e, c):\n    return 2\n");
    d.reconcile("app");
    assertEquals(List.of("SIGHUP"), signals);
    assertEquals("deployed", store.state("app"));
    assertEquals("", store.error("app"));
    assertEquals("def handle(e, c):\n    return 2\n", fileOfApp("app", "code/a.py"));
    assertEquals("{\"grains\":[\"a\"]}", fileOfApp("app", "reload.json"));
    assertEquals(
        1, docker.calls().stream().filter(c -> c.startsWith("create")).count(), "the same sandbox");
    assertEquals(updates, grainUpdates.size(), "the bridge's grains did not change");
    assertEquals(List.of(), drained);
    d.reconcile("app");
    assertEquals(List.of("SIGHUP"), signals, "version 2 runs: nothing more to do");
  }

  @Test
  void anUpdateWhoseCodeDoesNotLoadPutsThePreviousCodeBackAndSaysWhy() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    List<String> signals = new CopyOnWriteArrayList<>();
    docker.onKill("sand-app-", sig -> {
      signals.add(sig);
      if (signals.size() == 1) {
        d.workerHealth(
            "app",
            "a",
            "load-failed",
            "grain a failed to load: NameError: name 'x' is not defined (a.py, " + "line 1)");
      } else {
        d.workerHealth("app", "a", "reloaded", "grain worker a runs its new code");
      }
    });
    putApp("app", 2, "{}", "x\n");
    d.reconcile("app");
    assertEquals(List.of("SIGHUP", "SIGHUP"), signals, "the new code, then the previous code back");
    assertEquals("def handle(e, c):\n    return e\n", fileOfApp("app", "code/a.py"));
    assertEquals("deployed", store.state("app"), "it still answers, with the previous code");
    assertEquals(
        "the update to version 2 failed: grain a failed to load: NameError: name 'x' is not defined (a.py, "
            + "line 1); grain(s) [a] run their previous code here",
        store.error("app"));
    d.reconcile("app");
    assertEquals(2, signals.size(), "not tried again until the next deploy or update");
    putApp("app", 3, "{}", "def handle(e, c):\n    return 3\n");
    d.reconcile("app");
    assertEquals("", store.error("app"), "a good update clears the error");
    assertEquals("def handle(e, c):\n    return 3\n", fileOfApp("app", "code/a.py"));
  }

  @Test
  void aChangeOfSettingsWithTheCodeIsANewSandboxNotAnUpdate() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    docker.onStart("sand-app-", c -> startWorkers("app"));
    putApp("app", 2, "{\"timeout_s\": 5}", "def handle(e, c):\n    return 2\n");
    d.reconcile("app");
    assertEquals("deployed", store.state("app"));
    assertEquals(
        2, docker.calls().stream().filter(c -> c.startsWith("create")).count(), "a new sandbox");
    assertTrue(
        docker.calls().stream().noneMatch(c -> c.contains("SIGHUP")),
        docker.calls().toString());
  }

  @Test
  void aChangedSecretWithTheCodeIsANewSandboxWithItNotAnUpdate() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    assertEquals("{\"config\":{},\"secrets\":{}}", fileOfApp("app", "env.json"));
    docker.onStart("sand-app-", c -> startWorkers("app"));
    store.putSecret(new sand.cluster.SecretTables.StoredSecret(
        "app",
        "TOKEN",
        new sand.cluster.SecretBox(store.clusterSecret()).seal("app", "TOKEN", "hunter2"),
        java.time.Instant.now()));
    putApp("app", 2, "{}", "def handle(e, c):\n    return 2\n");
    d.reconcile("app");
    assertEquals("deployed", store.state("app"));
    assertEquals(
        2, docker.calls().stream().filter(c -> c.startsWith("create")).count(), "a new sandbox");
    assertEquals(
        "{\"config\":{},\"secrets\":{\"TOKEN\":\"hunter2\"}}", fileOfApp("app", "env.json"));
  }

  @Test
  void anApplicationIsDeployedOnlyOnceTheBridgeHasItsGrainsPartitions() throws Exception {
    AtomicBoolean assigned = new AtomicBoolean();
    ApplicationDeployer d = deployer(ApplicationLimits.defaults(), g -> assigned.get());
    putApp("app", 1);
    startWorkers("app");
    var done = pool.submit(() -> d.reconcile("app"));
    await(() -> d.knowsGrain("app", "a"), "the grains are given to the bridge");
    Thread.sleep(200);
    assertEquals(
        "deploying", store.state("app"), "not yet: its first requests would go through Kafka");
    assigned.set(true);
    done.get(10, TimeUnit.SECONDS);
    assertEquals("deployed", store.state("app"));
  }

  @Test
  void aRedeployWhoseNewVersionFailsUndeploysTheApplicationHere() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    putApp("app", 2, "{}", null); // grain a's code is missing: the deploy fails at once
    d.reconcile("app");
    assertEquals("failed", store.state("app"));
    assertFalse(d.knowsGrain("app", "a"));
    assertEquals(Set.of(), grainUpdates.get(grainUpdates.size() - 1));
    assertEquals(List.of("app"), drained);
    assertTrue(
        bus.queueStats().stream().noneMatch(q -> q.queue().startsWith("app/")),
        "its queues are gone");
  }

  @Test
  void aGrainThatDoesNotLoadFailsTheDeployAtOnceWithItsReason() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    Thread supervisor = new Thread(() -> {
      try {
        await(() -> docker.container("sand-app-h1") != null, "the sandbox to be starting");
        d.workerHealth(
            "app",
            "a",
            "load-failed",
            "grain a failed to load: SyntaxError: invalid syntax (a.py, line 2)");
        d.workerHealth(
            "app",
            "a",
            "exited",
            "grain worker a exited with code 3"); // it says less: not the reason
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    supervisor.start();
    long t0 = System.nanoTime();
    d.reconcile("app");
    supervisor.join();
    assertTrue(
        System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "not the 20 s workers timeout");
    assertEquals("failed", store.state("app"));
    assertTrue(
        store
            .error("app")
            .startsWith(
                "grain a failed to load: SyntaxError: invalid syntax (a.py, line 2) " + "[host"),
        store.error("app"));
    d.workerHealth("app", "a", "load-failed", "a late report");
    assertTrue(
        store.error("app").startsWith("grain a failed to load"),
        "a report after the deploy ended is ignored");
    assertTrue(docker.containers().isEmpty(), "its sandbox is removed");
  }

  @Test
  void aCrashLoopingWorkerShowsInTheHostsStateUntilItRunsAgain() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp("app", 1);
    startWorkers("app");
    d.reconcile("app");
    assertEquals("deployed", store.state("app"));
    assertEquals("", store.error("app"));
    d.workerHealth(
        "app",
        "b",
        "crash-looping",
        "grain worker b exited with code 1 after 0.3s, 3 times in a row");
    assertEquals("deployed", store.state("app"));
    assertEquals(
        "grain worker b exited with code 1 after 0.3s, 3 times in a row", store.error("app"));
    d.workerHealth("app", "b", "running", "grain worker b has run 30s");
    assertEquals("", store.error("app"));
    d.workerHealth("app", "zz", "crash-looping", "not a grain of app");
    assertEquals("", store.error("app"));
    d.workerHealth("other", "b", "crash-looping", "not deployed here");
    assertEquals(
        "", store.state("other"), "an application not running here gets no state from a report");
  }

  /** The stand-in workers of {@code appId} stop (as when its sandbox goes). */
  void stopWorkers(String appId) throws InterruptedException {
    for (Thread t : workers) {
      if (t.getName().startsWith("worker-" + appId + "-")) {
        t.interrupt();
        t.join(5000);
      }
    }
  }

  private static final long S = 1_000_000_000L;

  /**
   * Scale to zero on one host (docs/operations.md "Scale to zero"): an application idle past its
   * {@code scale_to_zero_after_s} loses its sandbox here but keeps its queues and partitions; the next event put in
   * one of its queues starts a sandbox, which takes the event.
   */
  @Test
  void anIdleApplicationScalesToZeroAndItsNextEventStartsItAgain() throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    ReconcileLanes lanes = new ReconcileLanes(pool, d::reconcile);
    bus.onArrival(app -> {
      if (d.arrived(app)) {
        lanes.request(app);
      }
    });
    putApp("lazy", 1, "{\"scale_to_zero_after_s\": 5}", "def handle(e, c):\n    return e\n");
    putApp("always", 1); // no setting: never scaled to zero
    startWorkers("lazy");
    startWorkers("always");
    d.reconcile("lazy");
    d.reconcile("always");
    assertEquals("deployed", store.state("lazy"));

    IdleSandboxes idle = new IdleSandboxes();
    d.idleFor(idle.observe(bus.queueStats(), 0), lanes::request);
    d.idleFor(idle.observe(bus.queueStats(), 4 * S), lanes::request);
    await(() -> !lanes.busy("lazy"), "nothing to do before its setting");
    assertNotNull(docker.container("sand-lazy-h1"), "4 s idle of 5: still running");

    d.idleFor(idle.observe(bus.queueStats(), 6 * S), lanes::request);
    await(() -> "idle".equals(store.state("lazy")), "scaled to zero after 5 s idle");
    assertNull(docker.container("sand-lazy-h1"), "its sandbox is gone");
    assertNotNull(
        docker.container("sand-always-h1"), "an application without the setting keeps its own");
    assertEquals("deployed", store.state("always"));
    assertTrue(d.knowsGrain("lazy", "a"), "still deployed here");
    assertTrue(
        grainUpdates.get(grainUpdates.size() - 1).contains(new GrainRef("lazy", "a")),
        "its partitions stay: the bridge still delivers its events here");
    stopWorkers("lazy"); // they went with the sandbox

    int creates = docker.calls().size();
    store.states.clear();
    bus.publish(AGENT, "lazy/a", "an event".getBytes(StandardCharsets.UTF_8));
    await(() -> docker.container("sand-lazy-h1") != null, "the event starts a sandbox");
    assertTrue(docker.calls().size() > creates);
    assertEquals(1, bus.length(AGENT, "lazy/a"), "the event waits in its queue meanwhile");
    startWorkers("lazy");
    await(() -> "deployed".equals(store.state("lazy")), "deployed again");
    await(() -> bus.length(AGENT, "lazy/a") == 0, "the new sandbox's worker takes the event");
    assertTrue(
        store.states.stream().noneMatch(s -> s.equals("lazy:deploying")),
        "a cold start never shows the application deploying (frontends keep sending to the host): "
            + store.states);
  }

  /** An application scaled to zero here, its stand-in workers gone with its sandbox. */
  ApplicationDeployer scaledToZero(String appId) throws Exception {
    ApplicationDeployer d = deployer(ApplicationLimits.defaults());
    putApp(appId, 1, "{\"scale_to_zero_after_s\": 1}", "def handle(e, c):\n    return e\n");
    startWorkers(appId);
    d.reconcile(appId);
    IdleSandboxes idle = new IdleSandboxes();
    d.idleFor(idle.observe(bus.queueStats(), 0), d::reconcile);
    d.idleFor(idle.observe(bus.queueStats(), 2 * S), d::reconcile);
    assertEquals("idle", store.state(appId));
    assertNull(docker.container("sand-" + appId + "-h1"));
    stopWorkers(appId);
    return d;
  }

  @Test
  void anApplicationUndeployedWhileScaledToZeroIsGoneHere() throws Exception {
    ApplicationDeployer d = scaledToZero("gone");
    store.setDesired("gone", "undeployed", List.of());
    d.reconcile("gone");
    assertEquals("undeployed", store.state("gone"));
    assertFalse(d.knowsGrain("gone", "a"));
    assertTrue(drained.contains("gone"), "the bridge forgets its events");
    assertFalse(d.arrived("gone"), "an event for it starts nothing");
    assertTrue(
        bus.queueStats().stream().noneMatch(q -> q.queue().startsWith("gone/")),
        "its queues are deleted");
  }

  @Test
  void aNewVersionDeployedWhileScaledToZeroStartsASandboxOfIt() throws Exception {
    ApplicationDeployer d = scaledToZero("next");
    putApp("next", 2, "{\"scale_to_zero_after_s\": 1}", "def handle(e, c):\n    return {'v': 2}\n");
    startWorkers("next");
    d.reconcile("next");
    assertEquals("deployed", store.state("next"));
    assertNotNull(docker.container("sand-next-h1"), "a sandbox of version 2");
    assertFalse(d.arrived("next"), "it runs: an event needs no start");
  }
}
