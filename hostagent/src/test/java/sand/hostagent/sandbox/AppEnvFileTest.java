package sand.hostagent.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.common.testing.ManualClock;
import sand.contracts.AppEnv;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;

/** settings.env and the secrets reach the sandbox as a file of its folder, never as the container's environment. */
class AppEnvFileTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path tmp;

  private final TestApps apps = TestApps.create();

  @AfterEach
  void tearDown() throws IOException {
    apps.close();
  }

  @Test
  void theEnvironmentIsAFileOfTheAppFolderAndNotInTheContainerSpec() throws Exception {
    FakeDockerEngine docker = new FakeDockerEngine();
    List<ContainerSpec> installs = new CopyOnWriteArrayList<>();
    TestApps.fakeInstalls(docker, installs, null);
    SandboxSettings s =
        SandboxSettings.defaults(tmp.resolve("state")).withPackageIndex(TestApps.INDEX, "", null);
    SandboxManager manager =
        new SandboxManager("h1", s, docker, new ManualClock(Instant.parse("2024-01-01T00:00:00Z")));
    ApplicationSpec hello = TestApps.hello(apps.socketDir(tmp));
    AppEnv env = new AppEnv(Map.of("GREETING", "hi"), Map.of("API_TOKEN", "hunter2"));
    ApplicationSpec spec = new ApplicationSpec(
        hello.appId(),
        hello.workflowJson(),
        hello.code(),
        hello.requirements(),
        hello.settings(),
        hello.credential(),
        hello.socketDir(),
        hello.grains(),
        env);
    manager.deploy(spec);

    Path dir = manager.appDir("hello");
    JsonNode file = JSON.readTree(dir.resolve("env.json").toFile());
    assertEquals("hi", file.path("config").path("GREETING").asText());
    assertEquals("hunter2", file.path("secrets").path("API_TOKEN").asText());
    JsonNode sandbox = JSON.readTree(dir.resolve("sandbox.json").toFile());
    assertEquals("/sand/app/env.json", sandbox.path("env_file").asText());
    ContainerSpec c = docker.container("sand-hello-h1").spec;
    assertFalse(c.env().toString().contains("hunter2"), "docker inspect shows the environment");
    assertFalse(c.cmd().toString().contains("hunter2"));
    assertFalse(Files.readString(dir.resolve("sandbox.json")).contains("hunter2"));
    assertFalse(spec.toString().contains("hunter2"), "the spec is logged");
  }
}
