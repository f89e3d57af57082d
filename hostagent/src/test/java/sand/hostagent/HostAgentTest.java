package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.cluster.ClusterSettings;
import sand.cluster.HostAgentTables.AppHostState;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.GrainCode;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.HostSchedules;
import sand.cluster.InMemoryClusterStore;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.ConfigDef.Config;
import sand.common.ThriftServer;
import sand.contracts.TopicNames;
import sand.datalayer.DataLayerSettings;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.FakeDockerEngine;
import sand.hostagent.sandbox.SandboxContainer;
import sand.hostagent.sandbox.internal.AppFolder;
import sand.localbus.thrift.LocalBus;

/**
 * The host agent as {@link HostAgent#newAgent} wires it, on fakes: the cluster state in memory, Docker as
 * {@link FakeDockerEngine} (a started sandbox's "grain workers" are threads that long-poll their queues through the
 * application's bus.sock with the credential the container got, as the supervisor would), the grain topics in
 * memory, Kafka as MockConsumer/MockProducer. What {@link ApplicationDeployerTest} covers of one deploy (back-off,
 * caps, worker health, lanes) is not repeated here: these tests are about what starts the deployer's work (a
 * control event, the start, the periodic safety net), what the rest of the agent does with it (the bridge's
 * subscription, the host's row), and what an agent does with what an earlier one left.
 */
class HostAgentTest {
  private static final String HOST = "h1";
  private static final String AGENT = "agent-credential-0123456789";
  private static final String WORKFLOW = "{\"name\": \"w\", \"entry\": \"a\", \"functions\": ["
      + "{\"name\": \"a\", \"next\": [\"b\"]}, {\"name\": \"b\", \"next\": [\"end\"]}]}";
  private static final TopicPartition CONTROL = new TopicPartition(TopicNames.CONTROL, 0);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A MockConsumer whose empty polls wait a little as a real one does (MockConsumer's return at once). */
  static final class PacedConsumer extends MockConsumer<String, byte[]> {
    PacedConsumer() {
      super("earliest");
    }

    @Override
    public ConsumerRecords<String, byte[]> poll(Duration timeout) {
      ConsumerRecords<String, byte[]> records = super.poll(timeout);
      if (records.isEmpty()) {
        try {
          Thread.sleep(Math.min(timeout.toMillis(), 20));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return records;
    }
  }

  @TempDir
  Path tmp;

  InMemoryClusterStore store;
  FakeDockerEngine docker;
  InMemoryGrainTopics topics;
  InMemoryGlobalDataLayer global;
  PacedConsumer grainConsumer;
  PacedConsumer control;
  MockProducer<String, byte[]> producer;
  final AtomicLong controlOffset = new AtomicLong();
  final List<HostAgent> agents = new ArrayList<>();

  @BeforeEach
  void setUp() {
    store = new InMemoryClusterStore();
    docker = new FakeDockerEngine();
    topics = new InMemoryGrainTopics();
    global = new InMemoryGlobalDataLayer();
    docker.onStart("sand-", this::runGrainWorkers);
  }

  @AfterEach
  void tearDown() {
    agents.forEach(HostAgent::close);
  }

  /** Start an agent over this test's cluster state, Docker and topics, with Kafka clients of its own. */
  HostAgent startAgent(int reconcileMs) throws Exception {
    Map<String, String> settings = new HashMap<>();
    settings.put("host.id", HOST);
    settings.put("credential", AGENT);
    settings.put("bus.port", "0");
    settings.put("gate.port", "0");
    settings.put("metrics.port", "0");
    settings.put("sandbox.state.dir", tmp.resolve("state").toString());
    settings.put("sockets.dir", tmp.resolve("sockets").toString());
    settings.put("reconcile.ms", Integer.toString(reconcileMs));
    settings.put("deploy.partitions.wait.s", "0"); // the MockConsumer assigns nothing
    Config config = HostAgent.DEF.parse(Map.of(), settings);
    Config dataConfig =
        DataLayerSettings.DEF.parse(Map.of(), Map.of("port", "0", "global", "memory"));
    grainConsumer = new PacedConsumer();
    control = new PacedConsumer();
    control.updateEndOffsets(Map.of(CONTROL, controlOffset.get()));
    producer = new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
    HostAgent agent = HostAgent.newAgent(
        config,
        dataConfig,
        Map.of(),
        new HostAgent.Deps(
            store, topics, docker, global, grainConsumer, producer, control, Clock.systemUTC()));
    agents.add(agent);
    return agent.start();
  }

  /** Stop {@code agent} now (tearDown stops the others). */
  void stop(HostAgent agent) {
    agents.remove(agent);
    agent.close();
  }

  /** No periodic reconcile within a test: only the start and control events make the agent look. */
  HostAgent startAgent() throws Exception {
    return startAgent(3_600_000);
  }

  /** The sandbox's part: each grain worker long-polls its queue on the app's bus.sock while the container runs. */
  void runGrainWorkers(FakeDockerEngine.Container c) {
    if (!"sandbox".equals(c.spec.labels().get(SandboxContainer.LABEL_COMPONENT))) {
      return;
    }
    JsonNode sandbox;
    try {
      sandbox = JSON.readTree(mount(c, AppFolder.MOUNT).resolve("sandbox.json").toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path bus = mount(c, AppFolder.SOCKETS_MOUNT).resolve(AppSockets.BUS);
    String credential = c.spec.env().get(SandboxContainer.ENV_CREDENTIAL);
    for (JsonNode grain : sandbox.path("local_grains")) {
      String queue = sandbox.path("app").asText() + "/" + grain.asText();
      Thread t = new Thread(
          () -> {
            try (TTransport transport = ThriftServer.connectUnix(bus)) {
              LocalBus.Client client = new LocalBus.Client(new TBinaryProtocol(transport));
              while (docker.container(c.name) == c && "running".equals(c.status)) {
                client.poll(credential, queue, 1, 200);
              }
            } catch (Exception e) {
              // the application's socket closed: its sandbox is going away
            }
          },
          "worker-" + c.name + "-" + grain.asText());
      t.setDaemon(true);
      t.start();
    }
  }

  private static Path mount(FakeDockerEngine.Container c, String target) {
    return c.spec.mounts().stream()
        .filter(m -> m.target().equals(target))
        .map(m -> Path.of(m.source()))
        .findFirst()
        .orElseThrow();
  }

  /** Application {@code appId} (grains a and b) at {@code version}, wanted on {@code hosts} (empty: every host). */
  void putApp(String appId, int version, List<String> hosts) {
    byte[] code = "def handle(e, c):\n    return e\n".getBytes(StandardCharsets.UTF_8);
    store.putApplication(
        new ApplicationRecord(appId, appId, "acct", WORKFLOW, "", "{}", version, "deployed", hosts),
        Map.of("a", new GrainCode("a", code, "py", "x"), "b", new GrainCode("b", code, "py", "y")));
  }

  /** What a frontend writes on sand.control after changing the cluster state. */
  void controlEvent(String type, String appId) {
    String json = "{\"type\": \"" + type + "\", \"app\": \"" + appId + "\", \"hosts\": null}";
    control.addRecord(new ConsumerRecord<>(
        TopicNames.CONTROL,
        0,
        controlOffset.getAndIncrement(),
        appId,
        json.getBytes(StandardCharsets.UTF_8)));
  }

  /** This host's state of {@code appId} in app_hosts, or "" when it wrote none. */
  String state(String appId) {
    return store.appHostStates(appId).stream()
        .filter(s -> s.hostId().equals(HOST))
        .map(AppHostState::status)
        .findFirst()
        .orElse("");
  }

  static String sandbox(String appId) {
    return SandboxContainer.name(appId, HOST);
  }

  String credentialOf(String appId) {
    return docker.container(sandbox(appId)).spec.env().get(SandboxContainer.ENV_CREDENTIAL);
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

  static ContainerSpec labelled(Map<String, String> labels) {
    return new ContainerSpec(
        "sand-sandbox:latest",
        List.of(),
        Map.of(),
        "1000:1000",
        "/tmp",
        labels,
        "none",
        List.of(),
        List.of(),
        true,
        Map.of(),
        0,
        0,
        0,
        0,
        List.of(),
        0);
  }

  @Test
  void topicReplicationIsTheClustersSetting() {
    // One replication factor for every topic SAND creates: SAND_CLUSTER_KAFKA_REPLICATION, not a
    // host agent's own.
    assertTrue(HostAgent.DEF.keys().stream().noneMatch(k -> k.name().equals("topic.replication")));
    assertTrue(
        ClusterSettings.DEF.keys().stream().anyMatch(k -> k.name().equals("kafka.replication")));
  }

  @Test
  void aDeployEventStartsTheSandboxCreatesTheTopicsAndTheBridgeConsumesThem() throws Exception {
    startAgent();
    putApp("shop", 1, List.of());
    controlEvent("deploy", "shop");
    await(() -> "deployed".equals(state("shop")), "shop deployed on the control event");
    FakeDockerEngine.Container c = docker.container(sandbox("shop"));
    assertEquals("running", c.status);
    assertNotEquals(AGENT, credentialOf("shop"), "the sandbox gets a credential of its own");
    assertEquals(List.of("sand.shop.a", "sand.shop.b"), topics.topics());
    await(
        () -> Set.of("sand.shop.a", "sand.shop.b").equals(grainConsumer.subscription()),
        "the bridge subscribes to the grains' topics");
  }

  @Test
  void anUndeployEventStopsTheSandboxAndTheBridgeLetsGoOfItsTopics() throws Exception {
    putApp("shop", 1, List.of());
    startAgent();
    await(() -> "deployed".equals(state("shop")), "shop deployed at start");
    await(() -> !grainConsumer.subscription().isEmpty(), "the bridge subscribes");
    String id = docker.container(sandbox("shop")).id;
    store.setDesired("shop", "undeployed", List.of());
    controlEvent("undeploy", "shop");
    await(() -> "undeployed".equals(state("shop")), "shop undeployed on the control event");
    assertNull(docker.container(sandbox("shop")), "the sandbox is removed");
    assertTrue(
        docker.calls().contains("stop " + id + " 20s"),
        "stopped (SIGTERM, then the grace) before it is removed: " + docker.calls());
    await(
        () -> grainConsumer.subscription().isEmpty(),
        "the bridge unsubscribes from the app's topics");
  }

  /** What a frontend writes on sand.control after an operator cordoned, drained or uncordoned a host. */
  void hostEvent(String host) {
    String json = "{\"type\": \"host\", \"host\": \"" + host + "\"}";
    control.addRecord(new ConsumerRecord<>(
        TopicNames.CONTROL,
        0,
        controlOffset.getAndIncrement(),
        host,
        json.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void grainTopicsGetAPartitionPerLiveHost() throws Exception {
    Instant now = Instant.now();
    for (int i = 2; i <= 6; i++) {
      store.upsertHost(new HostInfo("h" + i, "b", "d", "", 1, 0, now, now));
    }
    store.upsertHost(new HostInfo("dead", "b", "d", "", 1, 0, now, now.minusSeconds(600)));
    putApp("shop", 1, List.of());
    startAgent();
    await(() -> "deployed".equals(state("shop")), "shop deployed at start");
    assertEquals(
        6,
        topics.hostsAsked("sand.shop.a"),
        "five other live hosts and this one (not the dead one)");
  }

  @Test
  void aCordonedHostKeepsWhatItRunsNewVersionsIncludedAndStartsNothingNew() throws Exception {
    putApp("shop", 1, List.of());
    startAgent();
    await(() -> "deployed".equals(state("shop")), "shop deployed at start");
    store
        .hostSchedules()
        .set(new HostSchedules.HostSchedule(HOST, HostSchedules.CORDONED, "", Instant.now()));
    hostEvent(HOST);
    putApp("blog", 1, List.of());
    controlEvent("deploy", "blog");
    putApp("shop", 2, List.of());
    controlEvent("deploy", "shop");
    await(
        () -> docker.calls().stream()
                    .filter(c -> c.equals("create " + sandbox("shop")))
                    .count()
                >= 2
            && "deployed".equals(state("shop")),
        "shop's version 2 deployed on the cordoned host");
    Thread.sleep(300);
    assertNull(
        docker.container(sandbox("blog")), "nothing new on a cordoned host: " + docker.calls());
    assertEquals("", state("blog"));

    store.hostSchedules().clear(HOST);
    hostEvent(HOST);
    await(() -> "deployed".equals(state("blog")), "uncordoned: blog deployed at once");
  }

  @Test
  void aDrainingHostUndeploysEverythingAndTheBridgeLetsGoOfTheTopics() throws Exception {
    putApp("shop", 1, List.of());
    putApp("blog", 1, List.of(HOST));
    startAgent();
    await(
        () -> "deployed".equals(state("shop")) && "deployed".equals(state("blog")),
        "both deployed");
    store
        .hostSchedules()
        .set(new HostSchedules.HostSchedule(HOST, HostSchedules.DRAINING, "", Instant.now()));
    hostEvent("another-host");
    Thread.sleep(300);
    assertEquals("deployed", state("shop"), "an event for another host changes nothing here");
    hostEvent(HOST);
    await(
        () -> "undeployed".equals(state("shop")) && "undeployed".equals(state("blog")),
        "both undeployed on the host event");
    assertNull(docker.container(sandbox("shop")));
    await(
        () -> grainConsumer.subscription().isEmpty(), "the bridge unsubscribes from their topics");
  }

  @Test
  void atStartItDeploysWhatIsWantedHereAndNothingElse() throws Exception {
    putApp("every", 1, List.of());
    putApp("listed", 1, List.of("h2", HOST));
    putApp("elsewhere", 1, List.of("h2"));
    putApp("off", 1, List.of());
    store.setDesired("off", "undeployed", List.of());
    HostAgent agent = startAgent();
    await(
        () -> "deployed".equals(state("every")) && "deployed".equals(state("listed")),
        "the apps wanted here are deployed without any control event");
    stop(agent); // waits for every reconciliation under way: what was not started by now never will
    // be
    for (String app : List.of("elsewhere", "off")) {
      assertFalse(
          docker.calls().contains("create " + sandbox(app)),
          app + " got a sandbox: " + docker.calls());
      assertEquals("", state(app), app + " has a state on this host");
    }
    assertEquals(
        List.of("sand.every.a", "sand.every.b", "sand.listed.a", "sand.listed.b"), topics.topics());
  }

  @Test
  void thePeriodicReconcileRedeploysANewVersionAndUndeploysWhatMovedAway() throws Exception {
    putApp("shop", 1, List.of());
    startAgent(1000);
    await(() -> "deployed".equals(state("shop")), "shop deployed at start");
    String firstId = docker.container(sandbox("shop")).id;
    String firstCredential = credentialOf("shop");

    putApp("shop", 2, List.of()); // no control event: the missed event's safety net must see it
    await(
        () -> docker.container(sandbox("shop")) != null
            && !docker.container(sandbox("shop")).id.equals(firstId)
            && "deployed".equals(state("shop")),
        "version 2 deployed in a new sandbox");
    assertNotEquals(firstCredential, credentialOf("shop"), "a redeploy gets a fresh credential");

    store.setDesired("shop", "deployed", List.of("h2"));
    await(() -> "undeployed".equals(state("shop")), "shop, moved to h2, undeployed here");
    assertNull(docker.container(sandbox("shop")));
  }

  @Test
  void aRestartedAgentReplacesTheSandboxesAnEarlierRunLeftAndRemovesTheOrphans() throws Exception {
    putApp("shop", 1, List.of());
    store.setAppHostState(
        "shop", HOST, "deployed", null, Clock.systemUTC().instant()); // as the crashed run left it
    Map<String, String> mine =
        new HashMap<>(SandboxContainer.hostLabels(HOST, tmp.resolve("state")));
    mine.put(SandboxContainer.LABEL_APP, "shop");
    String leftId = docker.preexisting(sandbox("shop"), labelled(mine), "running").id;
    mine.put(SandboxContainer.LABEL_APP, "gone");
    docker.preexisting(sandbox("gone"), labelled(mine), "running");
    docker.preexisting(
        "sand-deps-shop-" + HOST,
        labelled(Map.of(
            SandboxContainer.LABEL_HOST,
            HOST,
            SandboxContainer.LABEL_STATE,
            SandboxContainer.stateLabel(tmp.resolve("state")),
            SandboxContainer.LABEL_COMPONENT,
            "deps",
            SandboxContainer.LABEL_APP,
            "shop")),
        "running");
    Map<String, String> theirs =
        new HashMap<>(SandboxContainer.hostLabels("h2", tmp.resolve("state")));
    theirs.put(SandboxContainer.LABEL_APP, "shop");
    String theirId =
        docker.preexisting(SandboxContainer.name("shop", "h2"), labelled(theirs), "running").id;
    // another cluster on the same Docker Engine with a host of the same id (issue 31: make cluster
    // next to a test's)
    Map<String, String> otherCluster =
        new HashMap<>(SandboxContainer.hostLabels(HOST, tmp.resolve("other-cluster")));
    otherCluster.put(SandboxContainer.LABEL_APP, "theirs");
    String otherId = docker.preexisting(sandbox("theirs"), labelled(otherCluster), "running").id;

    startAgent();
    await(
        () -> docker.container(sandbox("shop")) != null
            && !docker.container(sandbox("shop")).id.equals(leftId)
            && "running".equals(docker.container(sandbox("shop")).status)
            && "deployed".equals(state("shop")),
        "shop's sandbox replaced by a new one and deployed");
    assertNull(
        docker.container(sandbox("gone")),
        "the sandbox of an app no longer in the cluster is removed");
    assertNull(
        docker.container("sand-deps-shop-" + HOST), "a dependency install left behind is removed");
    assertEquals(
        theirId,
        docker.container(SandboxContainer.name("shop", "h2")).id,
        "another host's is not touched");
    assertEquals(
        otherId,
        docker.container(sandbox("theirs")).id,
        "another cluster's host of the same id is not touched");
  }

  @Test
  void aStoppedAgentLeavesItsAppsDeployedInTheClusterAndTheNextOneRunsThemAgain() throws Exception {
    putApp("shop", 1, List.of());
    HostAgent first = startAgent();
    await(() -> "deployed".equals(state("shop")), "shop deployed by the first agent");
    assertEquals(
        List.of(first.busAddress()),
        store.liveHosts(Clock.systemUTC().instant(), Duration.ofSeconds(10)).stream()
            .map(HostInfo::busAddress)
            .toList(),
        "the host joined with its bus address");
    assertFalse(store
        .liveHosts(Clock.systemUTC().instant(), Duration.ofSeconds(10))
        .get(0)
        .gateAddress()
        .isEmpty());
    MockConsumer<String, byte[]> firstConsumer = grainConsumer;
    MockProducer<String, byte[]> firstProducer = producer;

    stop(first);
    assertEquals("stopped", state("shop"));
    assertNull(docker.container(sandbox("shop")), "its sandbox stops with it");
    assertTrue(
        store.liveHosts(Clock.systemUTC().instant(), Duration.ofSeconds(10)).isEmpty(),
        "it left the cluster");
    assertTrue(
        store.application("shop").orElseThrow().wantedOn(HOST),
        "the app stays deployed in the cluster");
    assertTrue(firstConsumer.closed() && firstProducer.closed(), "it closed its Kafka clients");

    HostAgent second = startAgent();
    await(() -> "deployed".equals(state("shop")), "shop deployed again by the next agent");
    assertEquals("running", docker.container(sandbox("shop")).status);
    assertEquals(
        List.of(second.busAddress()),
        store.liveHosts(Clock.systemUTC().instant(), Duration.ofSeconds(10)).stream()
            .map(HostInfo::busAddress)
            .toList());
  }

  @Test
  void aSandboxThatDiesIsStartedAgain() throws Exception {
    putApp("shop", 1, List.of());
    startAgent();
    await(() -> "deployed".equals(state("shop")), "shop deployed at start");
    FakeDockerEngine.Container c = docker.container(sandbox("shop"));
    docker.die(sandbox("shop"), 137, true);
    await(
        () -> docker.container(sandbox("shop")) == c && c.starts == 2 && "running".equals(c.status),
        "the dead sandbox is started again (checked every 2 s)");
    assertEquals("deployed", state("shop"));
  }
}
