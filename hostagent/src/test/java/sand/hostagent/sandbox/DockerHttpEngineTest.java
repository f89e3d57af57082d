package sand.hostagent.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.DockerEngine.ProcessEntry;

/** The Engine API mapping, without an Engine: request bodies and answers as the v1.41 API documents them. */
class DockerHttpEngineTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void createBodyCarriesEveryIsolationOption() throws Exception {
    ContainerSpec spec = SandboxContainer.spec(
        TestApps.hello(Path.of("/run/sand/apps/hello")),
        "h1",
        Path.of("/var/lib/sand/apps/hello"),
        SandboxSettings.defaults(Path.of("/var/lib/sand")));
    JsonNode body =
        JSON.readTree(DockerHttpEngine.createBody(spec).toString()); // as the Engine reads it

    assertEquals(JSON.readTree("""
        {"Image": "sand-sandbox:latest",
         "Cmd": ["python3", "-m", "grainworker.supervisor", "--config", "/sand/app/sandbox.json"],
         "Env": ["SAND_GRAINWORKER_CREDENTIAL=app-credential-0123456789"],
         "User": "1000:1000", "WorkingDir": "/tmp",
         "Labels": {"sand.app": "hello", "sand.component": "sandbox", "sand.host": "h1",
                    "sand.state": "/var/lib/sand"},
         "StopTimeout": 20, "NetworkDisabled": true,
         "HostConfig": {
           "NetworkMode": "none", "CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"],
           "ReadonlyRootfs": true, "Privileged": false, "Init": false, "IpcMode": "private",
           "Tmpfs": {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"},
           "Memory": 536870912, "MemorySwap": 536870912, "NanoCpus": 1000000000, "PidsLimit": 512,
           "RestartPolicy": {"Name": "no"},
           "LogConfig": {"Type": "json-file", "Config": {"max-size": "10485760", "max-file": "3"}},
           "Mounts": [
             {"Type": "bind", "Source": "/var/lib/sand/apps/hello", "Target": "/sand/app", "ReadOnly": true},
             {"Type": "bind", "Source": "/run/sand/apps/hello", "Target": "/sand/sockets", "ReadOnly": true}]}}
        """), body);
  }

  @Test
  void topKeepsTheWholeCommandInItsLastColumn() throws Exception {
    JsonNode top = JSON.readTree("""
        {"Titles": ["PID", "PPID", "STAT", "COMMAND"],
         "Processes": [["4100", "4080", "Ss", "python3 -m grainworker.supervisor --config /sand/app/sandbox.json"],
                       ["4120", "4100", "S", "python3 -m grainworker --app hello --grain greet"]]}
        """);
    assertEquals(
        List.of(
            new ProcessEntry(
                4100,
                4080,
                "Ss",
                "python3 -m grainworker.supervisor --config /sand/app/sandbox.json"),
            new ProcessEntry(4120, 4100, "S", "python3 -m grainworker --app hello --grain greet")),
        DockerHttpEngine.parseTop(top));
  }

  @Test
  void logsAreDemultiplexed() throws Exception {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    frame(b, 1, "worker up\n");
    frame(b, 2, "Traceback ...\n");
    assertEquals("worker up\nTraceback ...\n", DockerHttpEngine.demultiplex(b.toByteArray()));
    assertEquals(
        "plain text", DockerHttpEngine.demultiplex("plain text".getBytes(StandardCharsets.UTF_8)));
  }

  private static void frame(ByteArrayOutputStream b, int stream, String text) {
    byte[] payload = text.getBytes(StandardCharsets.UTF_8);
    b.write(stream);
    b.writeBytes(new byte[] {0, 0, 0});
    b.writeBytes(new byte[] {0, 0, (byte) (payload.length >> 8), (byte) payload.length});
    b.writeBytes(payload);
  }
}
