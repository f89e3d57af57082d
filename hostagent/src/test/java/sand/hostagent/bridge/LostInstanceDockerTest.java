package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.APP;
import static sand.hostagent.bridge.TestHost.CRED;
import static sand.hostagent.bridge.TestHost.FRONTEND;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.STORE;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.ThriftServer;
import sand.contracts.ApplicationLimits;
import sand.contracts.ApplicationSettings;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.TopicNames;
import sand.datalayer.DataLayerService;
import sand.hostagent.sandbox.ApplicationSpec;
import sand.hostagent.sandbox.DockerHttpEngine;
import sand.hostagent.sandbox.ItImage;
import sand.hostagent.sandbox.SandboxManager;
import sand.hostagent.sandbox.SandboxProcess;
import sand.hostagent.sandbox.SandboxSettings;
import sand.localbus.LocalBusServer;

/**
 * Lost grain instances in a real sandbox (-Dsand.it=true): the host agent's bridge and LQ_HA processor over
 * Kafka fakes ({@link TestHost}), the local bus and data layer on the application's Unix sockets, application
 * "shop" in a Docker container. An event whose instance is killed with SIGKILL, or whose sandbox is killed,
 * runs again and its caller gets exactly one result; its partition's commit moves past it.
 */
class LostInstanceDockerTest {
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final String RESIZE_PY =
      "import time\ndef handle(e, c):\n    time.sleep(e['s'])\n" + "    return {'slept': e['s']}\n";

  @TempDir
  Path tmp;

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private TestHost h;
  private DockerHttpEngine docker;
  private ItImage image;
  private SandboxManager manager;
  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    Assumptions.assumeTrue(
        Boolean.getBoolean("sand.it"), "integration test: run with -Dsand.it=true");
    docker = new DockerHttpEngine(DockerHttpEngine.DEFAULT_SOCKET);
    docker.ping();
    image = ItImage.build(ROOT, "sand-sandbox-lost-" + run);
    h = new TestHost("it" + run, new InMemoryGlobalDataLayer(), 10_000, true, s -> s);
    Path sockets = tmp.resolve("sockets");
    open.add(LocalBusServer.serveUnix(h.bus, "bus-" + APP, sockets.resolve("bus.sock"), 64));
    ThriftServer data = ThriftServer.unix(
            "data-" + APP,
            new DataLayerService(h.data).processor(),
            sockets.resolve("data.sock"),
            64)
        .start();
    open.add(data::close);
    manager = new SandboxManager(
        h.hostId,
        SandboxSettings.with(tmp.resolve("state"), Map.of(SandboxSettings.STOP_GRACE_S, "2"))
            .withImage(image.tag())
            .withLabels(Map.of("sand.test", run)),
        docker,
        Clock.systemUTC(),
        ApplicationLimits.defaults(),
        h.bridge::sandboxExited); // as HostAgent wires it
    String workflow =
        "{\"name\":\"shop\",\"entry\":\"resize\",\"functions\":[{\"name\":\"resize\",\"next\":[\"end\"]},"
            + "{\"name\":\"store\",\"next\":[\"end\"]}]}";
    Map<String, ApplicationSpec.Code> code = new LinkedHashMap<>();
    code.put("resize", ApplicationSpec.Code.py(RESIZE_PY));
    code.put("store", ApplicationSpec.Code.py("def handle(e, c):\n    return e\n"));
    manager.deploy(new ApplicationSpec(
        APP, workflow, code, "", ApplicationSettings.defaults(), CRED, sockets, Set.of()));
    await(
        Duration.ofSeconds(30),
        () -> manager.logs(APP, 100).split("grain worker up", -1).length - 1 >= 2,
        "both grain workers polling");
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1), tp(STORE, 1));
    h.processor.start();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (docker == null) {
      return;
    }
    for (var c : docker.list(Map.of("sand.test", run))) {
      docker.remove(c.id(), true);
    }
    for (AutoCloseable c : open) {
      c.close();
    }
    if (h != null) {
      h.close();
    }
    if (image != null) {
      image.remove();
    }
    docker.close();
  }

  /** A request from the frontend into resize-1 at {@code offset}, delivered into resize's local queue. */
  private String request(long offset, double sleepS) {
    String id = "e" + offset + "-" + run;
    ObjectNode e = TestHost.event(id, RESIZE);
    e.putObject("value").put("s", sleepS);
    h.add(tp(RESIZE, 1), offset, ConditionFlag.newEvent(e, ""));
    h.bridge.pollOnce();
    return id;
  }

  /** The forked processes of resize's worker once the event's instance runs (its pre-forked standby may be one). */
  private List<SandboxProcess> runningInstances() throws InterruptedException {
    List<SandboxProcess> found = new ArrayList<>();
    await(
        Duration.ofSeconds(20),
        () -> {
          found.clear();
          manager.instances(APP).stream()
              .filter(p -> p.grain().equals("resize"))
              .forEach(found::add);
          return !found.isEmpty();
        },
        "a running instance of resize");
    return found;
  }

  private List<JsonNode> results() throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (ProducerRecord<String, byte[]> r : h.sent(TopicNames.responseTopic(FRONTEND))) {
      out.add(ConditionFlag.JSON.readTree(r.value()));
    }
    return out;
  }

  /** Exactly one result (the second run's), e's finished flag, the commit past it. */
  private void answeredOnceByTheSecondRun(String id, long offset) throws Exception {
    await(
        Duration.ofSeconds(40),
        () -> !h.sent(TopicNames.responseTopic(FRONTEND)).isEmpty(),
        "a result; sandbox logs:\n" + manager.logs(APP, 30));
    await(
        Duration.ofSeconds(10),
        () -> h.flags(RESIZE.topic()).stream()
            .anyMatch(f -> f.eventId().equals(id) && f.flag() == Flag.FINISHED),
        "the finished flag of " + id);
    h.bridge.pollOnce();
    await(
        Duration.ofSeconds(10),
        () -> h.bridge.tracker().committable(tp(RESIZE, 1)).equals(OptionalLong.of(offset + 1)),
        "the commit past " + id);
    Thread.sleep(1000); // a second result, if any, would be on its way by now
    List<JsonNode> results = results();
    assertEquals(1, results.size(), "one result: " + results);
    assertEquals(
        2.0,
        results.get(0).path("value").path("slept").asDouble(),
        results.get(0).toString());
  }

  @Test
  void aGrainInstanceKilledWithSigkillRunsAgainAndItsCallerGetsOneResult() throws Exception {
    String id = request(0, 2.0);
    for (SandboxProcess p :
        runningInstances()) { // kill -9 from the host; a standby killed too is forked again
      ProcessHandle.of(p.pid()).ifPresent(ProcessHandle::destroyForcibly);
    }
    answeredOnceByTheSecondRun(id, 0);
    assertTrue(manager.logs(APP, 50).contains("was killed by signal 9"));
  }

  @Test
  void anEventWhoseSandboxIsKilledRunsAgainInTheNewSandboxAndItsCallerGetsOneResult()
      throws Exception {
    String id = request(0, 2.0);
    runningInstances();
    docker.kill(manager.containerName(APP), "SIGKILL");
    await(
        Duration.ofSeconds(10),
        () -> !docker.inspect(manager.containerName(APP)).orElseThrow().running(),
        "the sandbox to die");
    assertEquals(List.of(APP), manager.restartDead(), "the sandbox is created again");
    answeredOnceByTheSecondRun(id, 0);
  }

  private static void await(Duration timeout, BooleanSupplier condition, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }
}
