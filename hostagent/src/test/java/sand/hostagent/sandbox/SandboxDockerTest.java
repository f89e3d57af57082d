package sand.hostagent.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer.OrderAnnotation;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.Credentials;
import sand.common.ThriftServer;
import sand.contracts.ApplicationSettings;
import sand.datalayer.DataLayerService;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.sandbox.DockerEngine.ContainerInfo;
import sand.hostagent.sandbox.SandboxProcess.Role;
import sand.localbus.HostAgentMessage;
import sand.localbus.LocalBusServer;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;

/**
 * Sandboxes in real Docker containers (-Dsand.it=true): the hello example deployed from this worktree,
 * events through the real local bus on the application's own Unix sockets, the host agent's view from
 * LQ_HA. The image is sand-sandbox:latest with this worktree's grainworker copied over (see
 * {@link ItImage}); every container carries the label sand.test=&lt;run&gt; and is removed at the end.
 * Runs as root here: it SIGKILLs a grain worker (uid 1000) from the host and reads /proc of the sandbox.
 */
@TestMethodOrder(OrderAnnotation.class)
class SandboxDockerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
  private static final String HOST = "it" + RUN;
  private static final String AGENT = "agent-credential-" + RUN + "-0123456789";

  @TempDir
  static Path tmp;

  private static DockerHttpEngine docker;
  private static ItImage image;
  private static Credentials credentials;
  private static LocalMessageBus bus;
  private static LocalDataLayer data;
  private static final List<ThriftServer> servers = new ArrayList<>();
  private static final List<AutoCloseable> buses = new ArrayList<>();
  private static SandboxManager manager;

  @BeforeAll
  static void setUp() throws Exception {
    Assumptions.assumeTrue(
        Boolean.getBoolean("sand.it"), "integration test: run with -Dsand.it=true");
    docker = new DockerHttpEngine(DockerHttpEngine.DEFAULT_SOCKET);
    docker.ping();
    image = ItImage.build(ROOT, "sand-sandbox-it-" + RUN);
    credentials = new Credentials(AGENT);
    bus = new LocalMessageBus(credentials, LocalBusSettings.defaults());
    data = new LocalDataLayer(
        credentials, new InMemoryGlobalDataLayer(), LocalDataLayer.Options.defaults());
    // the first restart of a dead worker waits 2 s: long enough to publish while it is down
    SandboxSettings settings = TestApps.withThisHostsPackageIndex(
        ROOT,
        SandboxSettings.with(
                tmp.resolve("state"),
                Map.of(
                    SandboxSettings.STOP_GRACE_S,
                    "5",
                    SandboxSettings.WORKER_RESTART_INITIAL_MS,
                    "2000",
                    SandboxSettings.WORKER_RESTART_MAX_MS,
                    "4000"))
            .withImage(image.tag())
            .withLabels(Map.of("sand.test", RUN)));
    manager = new SandboxManager(HOST, settings, docker, Clock.systemUTC());
    manager.deploy(app("hello", "", Map.of()));
    awaitWorkersUp("hello", 2);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (docker == null) {
      return;
    }
    for (var c : docker.list(Map.of("sand.test", RUN))) {
      docker.remove(c.id(), true);
    }
    servers.forEach(ThriftServer::close);
    for (AutoCloseable b : buses) {
      b.close();
    }
    if (data != null) {
      data.close();
    }
    if (image != null) {
      image.remove();
    }
    docker.close();
  }

  /** An application from examples/hello plus extra resources, with its own bus.sock and data.sock. */
  private static ApplicationSpec app(
      String id, String requirements, Map<String, ApplicationSpec.Code> extra) throws IOException {
    Path hello = ROOT.resolve("examples/hello");
    Map<String, ApplicationSpec.Code> code = new LinkedHashMap<>();
    code.put("greet", ApplicationSpec.Code.py(Files.readString(hello.resolve("greet.py"))));
    code.put("shout", ApplicationSpec.Code.py(Files.readString(hello.resolve("shout.py"))));
    code.putAll(extra);
    ObjectNode workflow =
        (ObjectNode) JSON.readTree(hello.resolve("workflow.json").toFile());
    for (String grain : extra.keySet()) {
      workflow
          .withArray("functions")
          .addObject()
          .put("name", grain)
          .putArray("next")
          .add("end");
    }
    String credential = id + "-credential-" + RUN;
    credentials.grant(id, credential);
    Path sockets = tmp.resolve("sockets").resolve(id);
    buses.add(LocalBusServer.serveUnix(bus, "localbus-" + id, sockets.resolve("bus.sock"), 64));
    servers.add(ThriftServer.unix(
            "datalayer-" + id,
            new DataLayerService(data).processor(),
            sockets.resolve("data.sock"),
            64)
        .start());
    return new ApplicationSpec(
        id,
        workflow.toString(),
        code,
        requirements,
        ApplicationSettings.defaults(),
        credential,
        sockets,
        Set.of());
  }

  // ---- acting as the host agent

  private static String publish(String app, String grain, Object value) {
    String execution = UUID.randomUUID().toString();
    ObjectNode event = JSON.createObjectNode()
        .put("id", UUID.randomUUID().toString())
        .put("execution_id", execution)
        .put("app", app)
        .put("grain", grain)
        .put("from", "")
        .put("frontend", "it");
    event.set("value", JSON.valueToTree(value));
    event.put("sent_ns", System.currentTimeMillis() * 1_000_000);
    bus.publish(AGENT, app + "/" + grain, event.toString().getBytes(StandardCharsets.UTF_8));
    return execution;
  }

  private static final List<JsonNode> reports = new ArrayList<>();

  /** Read LQ_HA (as the host agent does) until the report of {@code grain} for the execution arrives. */
  private static JsonNode report(String app, String execution, String grain) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (System.nanoTime() < deadline) {
      for (JsonNode r : reports) {
        if (r.path("execution_id").asText().equals(execution)
            && r.path("grain").asText().equals(grain)) {
          return r;
        }
      }
      for (HostAgentMessage m : bus.pollHostAgent(AGENT, 100, 500)) {
        ObjectNode r = (ObjectNode) JSON.readTree(m.payload());
        r.put("_published_by", m.application());
        reports.add(r);
      }
    }
    throw new AssertionError("no report from " + grain + " for " + execution + "; sandbox logs:\n"
        + manager.logs(app, 50));
  }

  private static JsonNode endOutput(JsonNode report) {
    for (JsonNode out : report.path("outputs")) {
      if (out.path("grain").asText().equals("end")) {
        return out.path("value");
      }
    }
    throw new AssertionError("no output to end in " + report);
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

  private static void awaitWorkersUp(String app, int n) throws InterruptedException {
    await(
        Duration.ofSeconds(30),
        () -> count(manager.logs(app, 200), "grain worker up") >= n,
        n + " grain workers of " + app + " polling");
  }

  private static int count(String text, String what) {
    return text.split(Pattern.quote(what), -1).length - 1;
  }

  private static Map<Role, List<SandboxProcess>> byRole(String app) {
    Map<Role, List<SandboxProcess>> out = new LinkedHashMap<>();
    for (SandboxProcess p : manager.processes(app)) {
      out.computeIfAbsent(p.role(), r -> new ArrayList<>()).add(p);
    }
    return out;
  }

  /** A host process's pid as seen inside its container's PID namespace (last field of NSpid). */
  private static int namespacePid(int hostPid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + hostPid + "/status"))) {
      if (line.startsWith("NSpid:")) {
        String[] f = line.split("\\s+");
        return Integer.parseInt(f[f.length - 1]);
      }
    }
    throw new IOException("no NSpid for " + hostPid);
  }

  private static String procStatus(int hostPid, String key) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + hostPid + "/status"))) {
      if (line.startsWith(key + ":")) {
        return line.substring(key.length() + 1).strip();
      }
    }
    return "";
  }

  // ---- the tests

  @Test
  @Order(1)
  void anEventRunsThroughBothGrainsOfHello() throws Exception {
    String run = publish("hello", "greet", Map.of("name", "sand"));
    JsonNode greet = report("hello", run, "greet");
    assertEquals("shout", greet.path("outputs").path(0).path("grain").asText());
    assertTrue(greet.path("outputs").path(0).path("local").asBoolean(), "shout runs on this host");
    JsonNode shout = report("hello", run, "shout");
    assertEquals(
        "hello", shout.path("_published_by").asText(), "the bus stamps the sandbox's application");
    assertEquals("ok", shout.path("status").asText());
    assertEquals(
        JSON.readTree("{\"greeting\": \"HELLO, SAND!\", \"execution_id\": \"" + run + "\"}"),
        endOutput(shout));
    Set<Integer> pids =
        new HashSet<>(List.of(greet.path("pid").asInt(), shout.path("pid").asInt()));
    for (int i = 0; i < 2; i++) {
      String again = publish("hello", "greet", Map.of("name", "n" + i));
      pids.add(report("hello", again, "greet").path("pid").asInt());
      pids.add(report("hello", again, "shout").path("pid").asInt());
    }
    assertEquals(6, pids.size(), "every event of every grain ran in a process of its own");
  }

  @Test
  @Order(2)
  void exactlyOneContainerWithTheIsolationOptions() throws Exception {
    var containers = docker.list(Map.of("sand.host", HOST, "sand.app", "hello"));
    assertEquals(1, containers.size());
    assertEquals("sand-hello-" + HOST, containers.get(0).name());
    ContainerInfo info = docker.inspect(containers.get(0).id()).orElseThrow();
    JsonNode hc = info.raw().path("HostConfig");
    assertEquals(JSON.readTree("[\"ALL\"]"), hc.path("CapDrop"));
    assertEquals(JSON.readTree("[\"no-new-privileges\"]"), hc.path("SecurityOpt"));
    assertTrue(hc.path("ReadonlyRootfs").asBoolean());
    assertEquals("none", hc.path("NetworkMode").asText());
    assertEquals(512L << 20, hc.path("Memory").asLong());
    assertEquals(512L << 20, hc.path("MemorySwap").asLong());
    assertEquals(1_000_000_000L, hc.path("NanoCpus").asLong());
    assertEquals(512, hc.path("PidsLimit").asInt());
    assertFalse(hc.path("Privileged").asBoolean());
    assertTrue(hc.path("Tmpfs").path("/tmp").asText().contains("size=64m"));
    assertEquals("1000:1000", info.raw().path("Config").path("User").asText());
    for (JsonNode m : info.raw().path("Mounts")) {
      assertFalse(m.path("RW").asBoolean(), "read-only mount " + m);
    }
    // ... and what the kernel says about the sandbox's PID 1, the supervisor
    assertEquals("1000\t1000\t1000\t1000", procStatus(info.pid(), "Uid"));
    assertEquals("0000000000000000", procStatus(info.pid(), "CapEff"));
    assertEquals("0000000000000000", procStatus(info.pid(), "CapBnd"));
    assertEquals("1", procStatus(info.pid(), "NoNewPrivs"));
    assertEquals(1, namespacePid(info.pid()));
    Map<Role, List<SandboxProcess>> roles = byRole("hello");
    assertEquals(1, roles.get(Role.SUPERVISOR).size());
    assertEquals(info.pid(), roles.get(Role.SUPERVISOR).get(0).pid());
    assertEquals(
        Set.of("greet", "shout"),
        new HashSet<>(
            roles.get(Role.GRAIN_WORKER).stream().map(SandboxProcess::grain).toList()));
  }

  @Test
  @Order(3)
  void everyEventIsAFreshForkOfTheGrainWorker() throws Exception {
    String probe = "import os, time\ndef handle(e, c):\n    time.sleep(e['s'])\n"
        + "    return {'pid': os.getpid(), 'ppid': os.getppid()}\n";
    manager.deploy(app("probe", "", Map.of("probe", ApplicationSpec.Code.py(probe))));
    awaitWorkersUp("probe", 3);
    List<String> runs = List.of(
        publish("probe", "probe", Map.of("s", 3)),
        publish("probe", "probe", Map.of("s", 3)),
        publish("probe", "probe", Map.of("s", 3)));
    SandboxProcess worker = byRole("probe").get(Role.GRAIN_WORKER).stream()
        .filter(p -> p.grain().equals("probe"))
        .findFirst()
        .orElseThrow();
    await(
        Duration.ofSeconds(10),
        () -> manager.instances("probe").stream()
                .filter(p -> p.grain().equals("probe"))
                .count()
            >= 3,
        "three running instances of probe");
    for (SandboxProcess p : manager.instances("probe")) {
      if (p.grain().equals("probe")) {
        assertEquals(worker.pid(), p.ppid(), "an instance is a child of its grain worker");
      }
    }
    Set<Integer> pids = new HashSet<>();
    int workerNsPid = namespacePid(worker.pid());
    for (String run : runs) {
      JsonNode out = endOutput(report("probe", run, "probe"));
      pids.add(out.path("pid").asInt());
      assertEquals(workerNsPid, out.path("ppid").asInt(), "forked by the probe grain worker");
    }
    assertEquals(3, pids.size(), "one process per event");
    assertEquals(2, docker.list(Map.of("sand.host", HOST)).size(), "one sandbox per application");
    assertTrue(manager.undeploy("probe"));
  }

  @Test
  @Order(4)
  void aKilledGrainWorkerIsRestartedAndAnEventPublishedMeanwhileIsProcessed() throws Exception {
    SandboxProcess greet = byRole("hello").get(Role.GRAIN_WORKER).stream()
        .filter(p -> p.grain().equals("greet"))
        .findFirst()
        .orElseThrow();
    assertTrue(
        ProcessHandle.of(greet.pid()).orElseThrow().destroyForcibly(),
        "SIGKILL the worker from the host");
    await(
        Duration.ofSeconds(5),
        () -> manager.logs("hello", 50).contains("grain worker greet was killed by SIGKILL"),
        "the supervisor to notice");
    assertTrue(
        byRole("hello").get(Role.GRAIN_WORKER).stream().noneMatch(p -> p.grain().equals("greet")),
        "greet must still be down when the event is published");
    String run = publish("hello", "greet", Map.of("name", "again"));
    JsonNode shout = report("hello", run, "shout");
    assertEquals("HELLO, AGAIN!", endOutput(shout).path("greeting").asText());
    SandboxProcess restarted = byRole("hello").get(Role.GRAIN_WORKER).stream()
        .filter(p -> p.grain().equals("greet"))
        .findFirst()
        .orElseThrow();
    assertNotEquals(greet.pid(), restarted.pid());
    assertTrue(manager.logs("hello", 50).contains("restarting in 2.0s"));
  }

  /**
   * A worker killed while it waits in a long poll: the bus sees its connection end and hands the next
   * message to nobody but the restarted worker (a reply it cannot write goes back to the queue's head).
   * Published once the worker is dead (reaped by the supervisor): a message the bus writes to a worker that is
   * still dying is read by nobody, and only the host agent's recovery (it hears of the worker's exit from the
   * supervisor, LocalRecovery.workerExited) runs it again; this test plays a host agent without one.
   */
  @Test
  @Order(9)
  void anEventPublishedRightAfterAWorkerDiedIsNotLost() throws Exception {
    SandboxProcess shout = byRole("hello").get(Role.GRAIN_WORKER).stream()
        .filter(p -> p.grain().equals("shout"))
        .findFirst()
        .orElseThrow();
    String died = "grain worker shout was killed by SIGKILL";
    int before = count(manager.logs("hello", 200), died);
    ProcessHandle.of(shout.pid()).orElseThrow().destroyForcibly();
    await(
        Duration.ofSeconds(5),
        () -> count(manager.logs("hello", 200), died) > before,
        "the supervisor to reap it");
    String run = publish("hello", "greet", Map.of("name", "quick"));
    assertEquals(
        "HELLO, QUICK!",
        endOutput(report("hello", run, "shout")).path("greeting").asText());
  }

  @Test
  @Order(5)
  void requirementsAreInstalledInAThrowAwayContainerFromThePackageIndex() throws Exception {
    byte[] zip = TestApps.zip(new LinkedHashMap<>(Map.of(
        "useslib.py",
            "import os, idna\ndef handle(e, c):\n    return [idna.__version__, idna.__file__, os.getuid()]\n",
        "requirements.txt", "idna==3.10\n")));
    manager.deploy(app("libapp", "", Map.of("useslib", ApplicationSpec.Code.zip(zip))));
    assertTrue(Files.isRegularFile(manager.appDir("libapp").resolve("lib/idna/__init__.py")));
    assertTrue(
        docker.list(Map.of("sand.component", "deps", "sand.host", HOST)).isEmpty(),
        "the install container is gone");
    awaitWorkersUp("libapp", 3);
    String run = publish("libapp", "useslib", Map.of());
    JsonNode out = endOutput(report("libapp", run, "useslib"));
    assertEquals("3.10", out.get(0).asText());
    assertEquals("/sand/app/lib/idna/__init__.py", out.get(1).asText());
    assertEquals(1000, out.get(2).asInt());
    assertTrue(manager.undeploy("libapp"));
  }

  @Test
  @Order(6)
  void aRequirementPipCannotInstallFailsTheDeployWithPipsError() throws Exception {
    ApplicationSpec bad = app("badreq", "sand-missing-package-" + RUN + "==1.0\n", Map.of());
    SandboxException e = assertThrows(SandboxException.class, () -> manager.deploy(bad));
    assertTrue(
        e.getMessage()
            .startsWith("application badreq: its requirements could not be installed: pip install "
                + "exited with 1:"),
        e.getMessage());
    assertTrue(
        e.getMessage()
            .contains("No matching distribution found for sand-missing-package-" + RUN + "==1.0"),
        e.getMessage());
    assertTrue(
        docker.inspect(manager.containerName("badreq")).isEmpty(),
        "no sandbox for a failed deploy");
    assertEquals(
        SandboxStatus.State.FAILED, manager.status("badreq").orElseThrow().state());
  }

  @Test
  @Order(6)
  void aPipOptionNeverReachesAContainer() throws Exception {
    ApplicationSpec bad = app("optreq", "-r /etc/passwd\n", Map.of());
    SandboxException e = assertThrows(SandboxException.class, () -> manager.deploy(bad));
    assertTrue(e.getMessage().contains("'-r /etc/passwd' is not accepted"), e.getMessage());
    assertTrue(!e.getMessage().contains("root:x:0:0"), "no host file in the error");
    assertTrue(docker.list(Map.of("sand.app", "optreq")).isEmpty());
  }

  @Test
  @Order(7)
  void aDeadSandboxIsRestartedByTheHostAgent() throws Exception {
    docker.kill(manager.containerName("hello"), "SIGKILL");
    await(
        Duration.ofSeconds(10),
        () -> !docker.inspect(manager.containerName("hello")).orElseThrow().running(),
        "the container to die");
    assertEquals(
        SandboxStatus.State.EXITED, manager.status("hello").orElseThrow().state());
    assertEquals(List.of("hello"), manager.restartDead());
    assertEquals(
        SandboxStatus.State.RUNNING, manager.status("hello").orElseThrow().state());
    String run = publish("hello", "greet", Map.of("name", "back"));
    assertEquals(
        "HELLO, BACK!",
        endOutput(report("hello", run, "shout")).path("greeting").asText());
  }

  @Test
  @Order(10)
  void undeployStopsAndRemovesTheSandbox() throws Exception {
    assertTrue(manager.undeploy("hello"));
    assertTrue(docker.inspect(manager.containerName("hello")).isEmpty());
    assertFalse(Files.exists(manager.appDir("hello")));
    assertTrue(docker.list(Map.of("sand.host", HOST)).isEmpty());
  }
}
