package sand.hostagent.sandbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.hostagent.sandbox.DockerEngine;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.DockerEngine.Mount;
import sand.hostagent.sandbox.FakeDockerEngine;
import sand.hostagent.sandbox.SandboxContainer;
import sand.hostagent.sandbox.SandboxSettings;
import sand.hostagent.sandbox.internal.DependencyInstaller.InstallFailed;
import sand.hostagent.sandbox.internal.DependencyInstaller.Requirements;

/** The throw-away dependency container, option by option, on a fake Docker Engine. */
class DependencyInstallerTest {
  @TempDir
  Path tmp;

  private final FakeDockerEngine docker = new FakeDockerEngine();

  private DependencyInstaller installer(Map<String, String> settings) {
    SandboxSettings s = SandboxSettings.with(tmp.resolve("state"), settings)
        .withPackageIndex(
            List.of("index.example:443", "files.example:443"),
            "https://index.example/simple",
            null);
    return new DependencyInstaller(docker, s, "h1", false);
  }

  private static final List<Requirements> SIX =
      List.of(new Requirements("app", "the app's requirements", "six==1.17.0\n"));

  @Test
  void theInstallRunsUnprivilegedWithoutNetworkAndWithLimits() throws Exception {
    docker.onStart("sand-deps-", c -> c.status = "exited");
    installer(Map.of()).install("shop", SIX, tmp.resolve("lib"), tmp.resolve("work"));

    FakeDockerEngine.Container c =
        docker.containers().isEmpty() ? null : docker.containers().get(0);
    assertEquals(null, c, "the container is removed after the install");
    String created =
        docker.calls().stream().filter(x -> x.startsWith("create ")).findFirst().orElseThrow();
    assertTrue(created.startsWith("create sand-deps-shop-h1-"), created);
  }

  @Test
  void requirementsInstalledBeforeAreTakenFromTheCacheWithoutPip() throws Exception {
    docker.onStart("sand-deps-", c -> {
      c.status = "exited";
      try { // what pip wrote into the library folder (mounted at /deps/target)
        java.nio.file.Files.writeString(
            java.nio.file.Files.createDirectories(tmp.resolve("lib1/six")).resolve("__init__.py"),
            "x");
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    DependencyInstaller deps = installer(Map.of());
    deps.install("shop", SIX, tmp.resolve("lib1"), tmp.resolve("work1"));
    long pipRuns = docker.calls().stream().filter(x -> x.startsWith("create ")).count();

    deps.install("shop", SIX, tmp.resolve("lib2"), tmp.resolve("work2")); // a rollback, a redeploy
    assertEquals(
        pipRuns,
        docker.calls().stream().filter(x -> x.startsWith("create ")).count(),
        "pip not run");
    assertEquals("x", java.nio.file.Files.readString(tmp.resolve("lib2/six/__init__.py")));

    List<Requirements> other =
        List.of(new Requirements("app", "the app's requirements", "six==1.16.0\n"));
    docker.onStart("sand-deps-", c -> c.status = "exited");
    deps.install("shop", other, tmp.resolve("lib3"), tmp.resolve("work3"));
    assertEquals(
        pipRuns + 1,
        docker.calls().stream().filter(x -> x.startsWith("create ")).count(),
        "new ones: pip");
  }

  @Test
  void theIndexCredentialsAreNeitherOnTheCommandLineNorInTheEnvironment() throws Exception {
    ContainerSpec[] seen = new ContainerSpec[1];
    docker.onStart("sand-deps-", c -> {
      seen[0] = c.spec;
      c.status = "exited";
    });
    SandboxSettings s = SandboxSettings.with(tmp.resolve("state"), Map.of())
        .withPackageIndex(
            List.of("index.example:443", "files.example:443"),
            "https://ops:t0ken-s3cret@index.example/simple",
            null);
    new DependencyInstaller(docker, s, "h1", false)
        .install("shop", SIX, tmp.resolve("lib"), tmp.resolve("work"));
    ContainerSpec c = seen[0];
    assertEquals(
        List.of("--index-url", "http://127.0.0.1:9/simple"),
        c.cmd().subList(c.cmd().indexOf("--index-url"), c.cmd().indexOf("--index-url") + 2),
        "pip is given the proxy's origin; the proxy adds the credentials");
    assertTrue(
        !c.toString().contains("t0ken") && !c.env().toString().contains("t0ken"), c.toString());
    try (var files = Files.walk(tmp.resolve("work"))) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        assertTrue(
            !Files.readString(f).contains("t0ken"),
            "nothing mounted into the container holds them: " + f);
      }
    }
  }

  @Test
  void everyIsolationOptionOfTheContainer() throws Exception {
    ContainerSpec[] seen = new ContainerSpec[1];
    docker.onStart("sand-deps-", c -> {
      seen[0] = c.spec;
      c.status = "exited";
    });
    installer(Map.of(
            SandboxSettings.PIP_MEMORY_MB,
            "300",
            SandboxSettings.PIP_TMP_MB,
            "200",
            SandboxSettings.PIP_OUTPUT_MAX_MB,
            "100",
            SandboxSettings.LOG_MAX_MB,
            "2",
            SandboxSettings.LOG_MAX_FILES,
            "4"))
        .install("shop", SIX, tmp.resolve("lib"), tmp.resolve("work"));
    ContainerSpec s = seen[0];
    assertEquals("sand-sandbox:latest", s.image());
    assertEquals("1000:1000", s.user(), "never root");
    assertEquals("none", s.networkMode(), "no network: only the proxy socket");
    assertEquals(List.of("ALL"), s.capDrop());
    assertEquals(List.of("no-new-privileges"), s.securityOpt());
    assertTrue(s.readonlyRootfs());
    assertEquals(
        Map.of(
            "/tmp",
            "rw,nosuid,nodev,size=200m,mode=1777",
            "/deps/target",
            "rw,nosuid,nodev,size=100m,mode=1777"),
        s.tmpfs());
    assertEquals(300L << 20, s.memoryBytes());
    assertEquals(300L << 20, s.memorySwapBytes(), "no swap");
    assertEquals(256, s.pidsLimit());
    assertEquals(1_000_000_000L, s.nanoCpus());
    assertEquals(Map.of(), s.env(), "no credential, nothing from the host");
    assertEquals(
        new DockerEngine.LogLimits(2L << 20, 4),
        s.logs(),
        "pip's (and build code's) output is rotated");
    assertEquals(
        List.of(
            new Mount(tmp.resolve("work/in").toString(), "/deps/in", true),
            new Mount(tmp.resolve("lib").toString(), "/deps/out", false)),
        s.mounts().subList(0, 2),
        "the output folder is the only writable host folder");
    assertEquals("/deps/proxy", s.mounts().get(2).target());
    assertTrue(
        s.mounts().get(2).readOnly() && s.mounts().get(2).source().contains("sand-deps-"),
        "the proxy's socket, read-only: " + s.mounts().get(2));
    assertEquals(
        Map.of(
            "sand.host",
            "h1",
            "sand.state",
            SandboxContainer.stateLabel(tmp.resolve("state")),
            "sand.component",
            "deps",
            "sand.app",
            "shop"),
        s.labels());
    assertEquals(
        List.of(
            "python3",
            "-m",
            "grainworker._deps",
            "--out",
            "/deps/out",
            "--target",
            "/deps/target",
            "--proxy-socket",
            "/deps/proxy/proxy.sock",
            "-r",
            "/deps/in/app.txt",
            "--index-url",
            "https://index.example/simple"),
        s.cmd());
    assertEquals("six==1.17.0\n", Files.readString(tmp.resolve("work/in/app.txt")));
  }

  @Test
  void pipsOwnErrorIsWhatTheDeveloperSees() {
    docker.onStart("sand-deps-", c -> {
      c.status = "exited";
      c.exitCode = 1;
      c.logs = "Collecting nosuch==1\nERROR: No matching distribution found for nosuch==1\n";
    });
    InstallFailed e = assertThrows(
        InstallFailed.class,
        () -> installer(Map.of())
            .install(
                "shop",
                List.of(new Requirements("app", "r", "nosuch==1\n")),
                tmp.resolve("lib"),
                tmp.resolve("work")));
    assertEquals(
        "pip install exited with 1:\nCollecting nosuch==1\nERROR: No matching distribution found for nosuch==1",
        e.getMessage());
    assertTrue(docker.containers().isEmpty(), "removed after a failure too");
  }

  @Test
  void anInstallPastItsDeadlineIsKilledAndRemoved() {
    docker.onStart("sand-deps-", c -> c.logs = "Collecting bigpkg\n"); // it keeps running
    InstallFailed e = assertThrows(
        InstallFailed.class,
        () -> installer(Map.of(SandboxSettings.PIP_TIMEOUT_S, "1"))
            .install("shop", SIX, tmp.resolve("lib"), tmp.resolve("work")));
    assertTrue(
        e.getMessage().startsWith("pip did not finish within 1 s (sandbox.pip.timeout.s)"),
        e.getMessage());
    assertTrue(docker.calls().stream()
        .anyMatch(x -> x.startsWith("kill sand-deps-shop-h1-") && x.endsWith("SIGKILL")));
    assertTrue(docker.containers().isEmpty());
  }

  @Test
  void aBuildStepWritingPastTheOutputLimitIsStopped() {
    docker.onStart(
        "sand-deps-",
        c -> { // a malicious setup.py writes straight into the mounted output folder
          try {
            Files.write(tmp.resolve("lib/filler"), new byte[2 << 20]);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
    InstallFailed e = assertThrows(
        InstallFailed.class,
        () -> installer(Map.of(SandboxSettings.PIP_OUTPUT_MAX_MB, "1"))
            .install("shop", SIX, tmp.resolve("lib"), tmp.resolve("work")));
    assertTrue(
        e.getMessage()
            .startsWith("the install wrote more than 1 MB into the application's library folder"),
        e.getMessage());
    assertTrue(docker.calls().stream().anyMatch(x -> x.startsWith("kill sand-deps-shop-h1-")));
    assertTrue(docker.containers().isEmpty());
  }

  @Test
  void aRefusedLineStartsNoContainerAndLeaksNothing() {
    InstallFailed e = assertThrows(
        InstallFailed.class,
        () -> installer(Map.of())
            .install(
                "shop",
                List.of(new Requirements("app", "requirements.txt of grain g", "-r /etc/passwd\n")),
                tmp.resolve("lib"),
                tmp.resolve("work")));
    assertTrue(
        e.getMessage()
            .startsWith("requirements.txt of grain g line 1: '-r /etc/passwd' is not accepted"),
        e.getMessage());
    assertTrue(!e.getMessage().contains("root:"));
    assertTrue(docker.calls().isEmpty(), "Docker was never called");
  }

  @Test
  void leftoverInstallContainersOfThisHostAreRemoved() {
    ContainerSpec spec = new ContainerSpec(
        "img",
        List.of(),
        Map.of(),
        "1000:1000",
        "/",
        Map.of(
            "sand.host",
            "h1",
            "sand.state",
            SandboxContainer.stateLabel(tmp.resolve("state")),
            "sand.component",
            "deps",
            "sand.app",
            "x"),
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
        5);
    docker.preexisting("sand-deps-x-h1-aaaa", spec, "running");
    assertEquals(List.of("sand-deps-x-h1-aaaa"), installer(Map.of()).removeLeftovers());
    assertTrue(docker.containers().isEmpty());
  }
}
