package sand.hostagent.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.common.testing.ManualClock;
import sand.contracts.ApplicationSettings;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.DockerEngine.Mount;
import sand.hostagent.sandbox.DockerEngine.ProcessEntry;
import sand.hostagent.sandbox.SandboxStatus.State;

class SandboxManagerTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path tmp;

  private final TestApps apps = TestApps.create();
  private final FakeDockerEngine docker = new FakeDockerEngine();
  private final ManualClock clock = new ManualClock(Instant.parse("2024-01-01T00:00:00Z"));
  private Path sockets;
  private final List<ContainerSpec> installs = new CopyOnWriteArrayList<>();
  private SandboxManager manager;

  @BeforeEach
  void setUp() throws IOException {
    sockets = apps.socketDir(tmp);
    TestApps.fakeInstalls(docker, installs, null);
    manager = manager();
  }

  @AfterEach
  void tearDown() throws IOException {
    apps.close();
  }

  private SandboxManager manager() {
    SandboxSettings s =
        SandboxSettings.defaults(tmp.resolve("state")).withPackageIndex(TestApps.INDEX, "", null);
    return new SandboxManager("h1", s, docker, clock);
  }

  @Test
  void deployStartsOneContainerWithTheRequiredOptions() throws Exception {
    SandboxStatus status = manager.deploy(TestApps.hello(sockets));

    assertEquals(State.RUNNING, status.state());
    assertEquals(
        List.of(
            "inspect sand-hello-h1",
            "list {sand.app=hello, sand.component=sandbox, sand.host=h1, sand.state="
                + tmp.resolve("state").toAbsolutePath().normalize() + "}",
            "create sand-hello-h1",
            "start " + status.containerId()),
        docker.calls().subList(0, 4));
    assertEquals(1, docker.containers().size());
    ContainerSpec c = docker.container("sand-hello-h1").spec;
    assertEquals("sand-sandbox:latest", c.image());
    assertEquals(
        List.of("python3", "-m", "grainworker.supervisor", "--config", "/sand/app/sandbox.json"),
        c.cmd());
    assertEquals(
        Map.of("SAND_GRAINWORKER_CREDENTIAL", TestApps.CREDENTIAL),
        c.env(),
        "the credential and nothing else");
    assertEquals("1000:1000", c.user());
    assertEquals("none", c.networkMode());
    assertEquals(List.of("ALL"), c.capDrop());
    assertEquals(List.of("no-new-privileges"), c.securityOpt());
    assertTrue(c.readonlyRootfs());
    assertEquals(Map.of("/tmp", "rw,nosuid,nodev,size=64m,mode=1777"), c.tmpfs());
    assertEquals(512L << 20, c.memoryBytes());
    assertEquals(512L << 20, c.memorySwapBytes(), "no swap beyond the memory limit");
    assertEquals(1_000_000_000L, c.nanoCpus());
    assertEquals(512, c.pidsLimit());
    assertEquals(
        Map.of(
            "sand.host",
            "h1",
            "sand.state",
            SandboxContainer.stateLabel(tmp.resolve("state")),
            "sand.app",
            "hello",
            "sand.component",
            "sandbox"),
        c.labels());
    assertEquals(
        List.of(
            new Mount(manager.appDir("hello").toString(), "/sand/app", true),
            new Mount(sockets.toAbsolutePath().toString(), "/sand/sockets", true)),
        c.mounts());
    assertEquals(20, c.stopTimeoutSecs());
    assertEquals(
        new DockerEngine.LogLimits(10L << 20, 3),
        c.logs(),
        "what a grain writes to fd 1 is rotated");
    assertFalse(
        c.toString().contains(TestApps.CREDENTIAL), "the credential never reaches a log line");
  }

  @Test
  void applicationSettingsBecomeLimitsAndWorkerSettings() throws Exception {
    ApplicationSettings settings =
        ApplicationSettings.fromJson("{\"timeout_s\": 5, \"instance_memory_mb\": 32, "
            + "\"concurrency\": 3, \"sandbox_memory_mb\": 256, \"sandbox_cpus\": 0.5, \"sandbox_pids\": 64, "
            + "\"session_timeout_s\": 90, \"session_functions_max\": 4}");
    manager.deploy(TestApps.hello(sockets, "", settings));

    ContainerSpec c = docker.container("sand-hello-h1").spec;
    assertEquals(256L << 20, c.memoryBytes());
    assertEquals(500_000_000L, c.nanoCpus());
    assertEquals(64, c.pidsLimit());
    JsonNode sandbox =
        JSON.readTree(manager.appDir("hello").resolve("sandbox.json").toFile());
    assertEquals(
        JSON.readTree(
            "{\"concurrency\": 3, \"timeout_s\": 5.0, \"memory_mb\": 32, \"standby\": true, "
                + "\"session_timeout_s\": 90.0, \"session_functions_max\": 4}"),
        sandbox.path("grains").path("greet"));
    assertEquals("unix:/sand/sockets/bus.sock", sandbox.path("bus").asText());
    assertEquals("unix:/sand/sockets/data.sock", sandbox.path("data").asText());
    assertEquals("/sand/app/code", sandbox.path("code").asText());
    assertEquals(
        "/sand/app/reload.json",
        sandbox.path("reload_file").asText(),
        "the supervisor reads what sand " + "update wrote where the host agent says");
    assertEquals("/sand/app/lib", sandbox.path("lib").asText());
    assertEquals(JSON.readTree("[\"greet\", \"shout\"]"), sandbox.path("local_grains"));
    assertEquals(15, sandbox.path("stop_grace_s").asInt());
  }

  @Test
  void withoutTheLocalShortcutTheSandboxHasNoLocalGrains() throws Exception {
    SandboxManager far = new SandboxManager(
        "h1",
        SandboxSettings.with(tmp.resolve("state"), Map.of(SandboxSettings.LOCAL_SHORTCUT, "false")),
        docker,
        clock);
    far.deploy(TestApps.hello(sockets));
    JsonNode sandbox = JSON.readTree(far.appDir("hello").resolve("sandbox.json").toFile());
    assertEquals(
        JSON.readTree("[]"),
        sandbox.path("local_grains"),
        "every hop through the host agent and Kafka");
  }

  @Test
  void theApplicationFolderIsReadableByTheSandboxUser() throws Exception {
    manager.deploy(TestApps.hello(sockets));
    Path dir = manager.appDir("hello");
    assertTrue(Files.readString(dir.resolve("code/greet.py")).contains("def handle"));
    assertEquals(TestApps.HELLO_WORKFLOW, Files.readString(dir.resolve("workflow.json")));
    assertTrue(Files.isDirectory(dir.resolve("lib")));
    assertEquals(
        "rw-r--r--",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("code/greet.py"))));
    assertEquals(
        "rwxr-xr-x",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("code"))));
    assertEquals(List.of(), installs, "no requirements: no install container");
  }

  @Test
  void socketsAreMadeUsableByTheSandboxUser() throws Exception {
    manager.deploy(TestApps.hello(sockets));
    assertTrue(Files.getPosixFilePermissions(sockets).contains(PosixFilePermission.OTHERS_EXECUTE));
    Set<PosixFilePermission> sock = Files.getPosixFilePermissions(sockets.resolve("bus.sock"));
    assertTrue(sock.contains(PosixFilePermission.OTHERS_READ)
        && sock.contains(PosixFilePermission.OTHERS_WRITE));
  }

  @Test
  void aZipResourceIsUnpackedAndItsRequirementsInstalled() throws Exception {
    byte[] zip = TestApps.zip(Map.of(
        "shout.py",
        "def handle(e, c):\n    return e\n",
        "data/words.txt",
        "HELLO",
        "requirements.txt",
        "# pinned\nsomething==1.0\n"));
    ApplicationSpec spec = TestApps.withCode(
        TestApps.hello(sockets, "other==2.0\n", ApplicationSettings.defaults()),
        Map.of(
            "greet",
            ApplicationSpec.Code.py("def handle(e, c):\n    return e\n"),
            "shout",
            ApplicationSpec.Code.zip(zip)));
    manager.deploy(spec);

    Path dir = manager.appDir("hello");
    assertEquals("HELLO", Files.readString(dir.resolve("code/data/words.txt")));
    assertFalse(
        Files.exists(dir.resolve("code/requirements.txt")),
        "requirements go to pip, not to the code");
    assertEquals(1, installs.size(), "one install container for both files");
    List<String> cmd = installs.get(0).cmd();
    assertEquals(List.of("python3", "-m", "grainworker._deps"), cmd.subList(0, 3));
    assertEquals(
        "-r /deps/in/app.txt -r /deps/in/shout.txt",
        String.join(" ", cmd.subList(cmd.indexOf("-r"), cmd.indexOf("-r") + 4)));
    assertEquals(
        "something==1.0",
        Files.readString(dir.resolve("requirements/shout.txt")).lines().toList().get(1));
    assertEquals(
        "VALUE = 1\n",
        Files.readString(dir.resolve("lib/fakepkg/__init__.py")),
        "the install's output");
    assertTrue(
        docker.list(Map.of("sand.component", "deps")).isEmpty(),
        "the install container is removed");
  }

  @Test
  void aRequirementPipCannotInstallFailsTheDeployWithPipsError() throws Exception {
    TestApps.fakeInstalls(
        docker, installs, "ERROR: No matching distribution found for nosuchpkg==9.9");
    SandboxManager failing = manager();
    SandboxException e = assertThrows(
        SandboxException.class,
        () -> failing.deploy(
            TestApps.hello(sockets, "nosuchpkg==9.9\n", ApplicationSettings.defaults())));

    assertTrue(
        e.getMessage()
            .startsWith("application hello: its requirements could not be installed: pip install "
                + "exited with 1:"),
        e.getMessage());
    assertTrue(
        e.getMessage()
            .endsWith("Collecting stuff\nERROR: No matching distribution found for nosuchpkg==9.9"),
        e.getMessage());
    assertTrue(docker.containers().isEmpty(), "no sandbox for a failed deploy");
    assertEquals(State.FAILED, failing.status("hello").orElseThrow().state());
    assertEquals(e.getMessage(), failing.status("hello").orElseThrow().error());
    assertFalse(Files.exists(failing.appDir("hello")));
    try (var left = Files.list(tmp.resolve("state/build"))) {
      assertEquals(0, left.count(), "the failed build is cleaned up");
    }
  }

  @Test
  void aRequirementLineThatIsNotAPackagePinFailsBeforeAnyContainerStarts() throws Exception {
    SandboxException e = assertThrows(
        SandboxException.class,
        () -> manager.deploy(TestApps.hello(
            sockets, "six==1.17.0\n-r /etc/passwd\n", ApplicationSettings.defaults())));
    assertTrue(
        e.getMessage()
            .contains(
                "the application's requirements line 2: '-r /etc/passwd' is not accepted: pip "
                    + "options are not allowed"),
        e.getMessage());
    assertEquals(List.of(), installs);
    assertTrue(docker.containers().isEmpty());
  }

  @Test
  void withoutAnAllowedPackageIndexRequirementsAreRefused() throws Exception {
    SandboxManager closed =
        new SandboxManager("h1", SandboxSettings.defaults(tmp.resolve("state")), docker, clock);
    SandboxException e = assertThrows(
        SandboxException.class,
        () -> closed.deploy(
            TestApps.hello(sockets, "six==1.17.0\n", ApplicationSettings.defaults())));
    assertTrue(
        e.getMessage()
            .contains("the operator allowed no package index (host agent setting "
                + "sandbox.pip.allowed.hosts is empty)"),
        e.getMessage());
    assertEquals(List.of(), installs);
  }

  @Test
  void aFailedRedeployLeavesTheRunningSandboxAlone() throws Exception {
    String id = manager.deploy(TestApps.hello(sockets)).containerId();
    SandboxManager failing = manager();
    failing.deploy(TestApps.hello(sockets));
    TestApps.fakeInstalls(docker, installs, "ERROR: nope");
    assertThrows(
        SandboxException.class,
        () -> failing.deploy(TestApps.hello(sockets, "x==1\n", ApplicationSettings.defaults())));
    assertEquals("running", docker.container("sand-hello-h1").status);
    assertNotEquals(
        id,
        docker.container("sand-hello-h1").id,
        "the second manager replaced the first's container");
    assertTrue(Files.isRegularFile(failing.appDir("hello").resolve("code/greet.py")));
  }

  @Test
  void zipPathTraversalIsRefused() throws Exception {
    for (String evil :
        List.of("../evil.py", "/etc/evil.py", "code/../../evil.py", "..\\evil.py", "C:/evil.py")) {
      byte[] zip = TestApps.zip(Map.of("shout.py", "def handle(e, c): return e\n", evil, "boom"));
      ApplicationSpec spec = TestApps.withCode(
          TestApps.hello(sockets),
          Map.of(
              "greet",
              ApplicationSpec.Code.py("def handle(e, c): return e\n"),
              "shout",
              ApplicationSpec.Code.zip(zip)));
      SandboxException e = assertThrows(SandboxException.class, () -> manager.deploy(spec), evil);
      assertTrue(
          e.getMessage()
              .startsWith("application hello: resource shout: refused: entry '" + evil + "'"),
          e.getMessage());
    }
    assertFalse(Files.exists(tmp.resolve("state/evil.py"))
        || Files.exists(tmp.resolve("state/build/evil.py")));
    assertTrue(docker.containers().isEmpty());
  }

  @Test
  void codeThatUnpacksBeyondTheLimitIsRefused() throws Exception {
    SandboxManager small = new SandboxManager(
        "h1",
        SandboxSettings.with(
            tmp.resolve("state"),
            Map.of(SandboxSettings.CODE_MAX_BYTES, "10000", SandboxSettings.ZIP_MAX_ENTRIES, "3")),
        docker,
        clock);
    byte[] bomb = TestApps.zip(Map.of("shout.py", "x = '" + "a".repeat(50_000) + "'\n"));
    ApplicationSpec big = TestApps.withCode(
        TestApps.hello(sockets),
        Map.of(
            "greet",
            ApplicationSpec.Code.py("def handle(e, c): return e\n"),
            "shout",
            ApplicationSpec.Code.zip(bomb)));
    assertTrue(assertThrows(SandboxException.class, () -> small.deploy(big))
        .getMessage()
        .contains("goes over the application's code size limit"));
    byte[] many = TestApps.zip(Map.of("shout.py", "", "a", "", "b", "", "c", ""));
    ApplicationSpec crowded = TestApps.withCode(
        TestApps.hello(sockets),
        Map.of("greet", ApplicationSpec.Code.py(""), "shout", ApplicationSpec.Code.zip(many)));
    assertTrue(assertThrows(SandboxException.class, () -> small.deploy(crowded))
        .getMessage()
        .contains("more than 3 entries"));
  }

  @Test
  void aGrainWithoutCodeOrABadWorkflowFailsBeforeDocker() throws Exception {
    ApplicationSpec noShout = TestApps.withCode(
        TestApps.hello(sockets),
        Map.of("greet", ApplicationSpec.Code.py("def handle(e, c): return e\n")));
    assertEquals(
        "application hello: grain shout runs code 'shout' but neither shout.py nor shout/__init__.py was "
            + "uploaded (resources: [greet])",
        assertThrows(SandboxException.class, () -> manager.deploy(noShout)).getMessage());
    ApplicationSpec badWorkflow = new ApplicationSpec(
        "hello",
        "{\"name\": \"hello\", \"functions\": []}",
        Map.of(),
        "",
        null,
        TestApps.CREDENTIAL,
        sockets,
        Set.of());
    assertTrue(assertThrows(SandboxException.class, () -> manager.deploy(badWorkflow))
        .getMessage()
        .contains("'functions' must be a non-empty list"));
    assertTrue(docker.calls().isEmpty());
  }

  @Test
  void aMissingSocketFolderFailsTheDeploy() {
    ApplicationSpec spec = TestApps.hello(tmp.resolve("nowhere"));
    assertTrue(assertThrows(SandboxException.class, () -> manager.deploy(spec))
        .getMessage()
        .contains("socket folder " + tmp.resolve("nowhere") + " does not exist"));
  }

  @Test
  void aContainerLeftByAnEarlierRunIsReplaced() throws Exception {
    ContainerSpec old =
        SandboxContainer.spec(TestApps.hello(sockets), "h1", tmp, SandboxSettings.defaults(tmp));
    String oldId = docker.preexisting("sand-hello-h1", old, "running").id;
    SandboxStatus status = manager.deploy(TestApps.hello(sockets));

    List<String> calls = docker.calls();
    assertTrue(
        calls.indexOf("stop " + oldId + " 20s") < calls.indexOf("remove " + oldId + " force"));
    assertTrue(calls.indexOf("remove " + oldId + " force") < calls.indexOf("create sand-hello-h1"));
    assertNotEquals(oldId, status.containerId());
    assertEquals(1, docker.containers().size());
  }

  @Test
  void undeployStopsAndRemovesTheContainerAndTheFolder() throws Exception {
    String id = manager.deploy(TestApps.hello(sockets)).containerId();
    assertTrue(manager.undeploy("hello"));

    assertTrue(docker.calls().contains("stop " + id + " 20s"), "SIGTERM with a bounded wait");
    assertTrue(docker.calls().contains("remove " + id + " force"));
    assertTrue(docker.containers().isEmpty());
    assertFalse(Files.exists(manager.appDir("hello")));
    assertTrue(manager.status("hello").isEmpty());
    assertFalse(manager.undeploy("hello"), "nothing left to remove");
  }

  @Test
  void aDeadSandboxIsRestartedWithBackOff() throws Exception {
    manager.deploy(TestApps.hello(sockets));
    assertEquals(List.of(), manager.restartDead(), "running: nothing to do");

    docker.die("sand-hello-h1", 137, true);
    assertEquals(State.EXITED, manager.status("hello").orElseThrow().state());
    assertTrue(manager.status("hello").orElseThrow().oomKilled());
    assertEquals(List.of("hello"), manager.restartDead());
    assertEquals("running", docker.container("sand-hello-h1").status);

    docker.die("sand-hello-h1", 1, false);
    assertEquals(List.of(), manager.restartDead(), "within the first back-off (1 s)");
    clock.advance(Duration.ofMillis(1000));
    assertEquals(List.of("hello"), manager.restartDead());
    docker.die("sand-hello-h1", 1, false);
    clock.advance(Duration.ofMillis(1500));
    assertEquals(List.of(), manager.restartDead(), "the back-off doubled to 2 s");
    clock.advance(Duration.ofMillis(500));
    assertEquals(List.of("hello"), manager.restartDead());
    assertEquals(3, manager.status("hello").orElseThrow().restarts());
  }

  @Test
  void aRestartCheckThatWaitedForAnUndeployDoesNotBringTheSandboxBack() throws Exception {
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    DockerEngine slowStop = (DockerEngine) Proxy.newProxyInstance(
        DockerEngine.class.getClassLoader(),
        new Class<?>[] {DockerEngine.class},
        (proxy, method, args) -> {
          if (method.getName().equals("stop")) {
            stopping.countDown();
            release.await(10, TimeUnit.SECONDS);
          }
          try {
            return method.invoke(docker, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    SandboxManager m = new SandboxManager(
        "h1",
        SandboxSettings.defaults(tmp.resolve("state")).withPackageIndex(TestApps.INDEX, "", null),
        slowStop,
        clock);
    m.deploy(TestApps.hello(sockets));
    docker.die("sand-hello-h1", 1, false);

    Thread undeploy = new Thread(() -> m.undeploy("hello"));
    undeploy.start();
    assertTrue(stopping.await(10, TimeUnit.SECONDS), "the undeploy is stopping the sandbox");
    AtomicReference<List<String>> restarted = new AtomicReference<>();
    Thread check =
        new Thread(() -> restarted.set(m.restartDead())); // as the host agent's timer, meanwhile
    check.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (check.getState() != Thread.State.BLOCKED && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertEquals(
        Thread.State.BLOCKED, check.getState(), "the restart check waits for the undeploy");
    release.countDown();
    undeploy.join(10_000);
    check.join(10_000);

    assertEquals(List.of(), restarted.get());
    assertNull(docker.container("sand-hello-h1"), "an undeployed application's sandbox stays gone");
  }

  @Test
  void aVanishedSandboxIsCreatedAgainWithTheSameOptions() throws Exception {
    manager.deploy(TestApps.hello(sockets));
    ContainerSpec before = docker.container("sand-hello-h1").spec;
    docker.vanish("sand-hello-h1");
    assertEquals(State.MISSING, manager.status("hello").orElseThrow().state());
    assertEquals(List.of("hello"), manager.restartDead());
    assertEquals(before, docker.container("sand-hello-h1").spec);
    assertEquals("running", docker.container("sand-hello-h1").status);
  }

  @Test
  void instancesAreTheChildrenOfGrainWorkers() throws Exception {
    manager.deploy(TestApps.hello(sockets));
    String worker = "python3 -m grainworker --app hello --grain ";
    docker.setProcesses(
        "sand-hello-h1",
        List.of(
            new ProcessEntry(
                500,
                480,
                "Ss",
                "python3 -m grainworker.supervisor --config /sand/app/sandbox.json"),
            new ProcessEntry(510, 500, "S", worker + "greet --code /sand/app/code"),
            new ProcessEntry(511, 500, "S", worker + "shout --code /sand/app/code"),
            new ProcessEntry(520, 510, "S", worker + "greet --code /sand/app/code"),
            new ProcessEntry(521, 511, "R", worker + "shout --code /sand/app/code"),
            new ProcessEntry(530, 500, "S", "sleep 100")));

    List<SandboxProcess> instances = manager.instances("hello");
    assertEquals(List.of(520, 521), instances.stream().map(SandboxProcess::pid).toList());
    assertEquals(
        List.of("greet", "shout"), instances.stream().map(SandboxProcess::grain).toList());
    assertEquals(
        List.of(
            SandboxProcess.Role.SUPERVISOR,
            SandboxProcess.Role.GRAIN_WORKER,
            SandboxProcess.Role.GRAIN_WORKER,
            SandboxProcess.Role.GRAIN_INSTANCE,
            SandboxProcess.Role.GRAIN_INSTANCE,
            SandboxProcess.Role.OTHER),
        manager.processes("hello").stream().map(SandboxProcess::role).toList());
  }

  @Test
  void listShowsLeftoversAndRemoveOthersClearsThem() throws Exception {
    manager.deploy(TestApps.hello(sockets));
    ApplicationSpec other = new ApplicationSpec(
        "other",
        TestApps.HELLO_WORKFLOW,
        Map.of(),
        "",
        null,
        TestApps.CREDENTIAL,
        sockets,
        Set.of());
    docker.preexisting(
        "sand-other-h1",
        SandboxContainer.spec(other, "h1", tmp, SandboxSettings.defaults(tmp.resolve("state"))),
        "exited");
    assertEquals(
        List.of("hello", "other"),
        manager.list().stream().map(SandboxStatus::app).toList());
    assertEquals(List.of("other"), manager.removeOthers(Set.of("hello")));
    assertEquals(
        List.of("sand-hello-h1"), docker.containers().stream().map(c -> c.name).toList());
  }

  @Test
  void anUnreachableDockerFailsTheDeployNamingDocker() {
    docker.setReachable(false);
    SandboxException e =
        assertThrows(SandboxException.class, () -> manager.deploy(TestApps.hello(sockets)));
    assertTrue(
        e.getMessage()
            .startsWith("application hello: Docker could not run sandbox sand-hello-h1: Docker "
                + "Engine on /fake/docker.sock: connection refused"),
        e.getMessage());
  }
}
