package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.localbus.TestClient.buf;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.localbus.thrift.HostAgentMessage;

/** The standalone server as a harness runs it: a separate JVM configured by the environment. */
class StandaloneServerTest {
  private static final String CREDENTIAL = "standalone-host-agent-credential";
  private static final Pattern READY =
      Pattern.compile("localbus listening on 127\\.0\\.0\\.1:(\\d+)");

  @TempDir
  Path dir;

  private ProcessBuilder bus(String credential) {
    ProcessBuilder pb = new ProcessBuilder(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp",
        System.getProperty("java.class.path"),
        LocalBusServer.class.getName());
    pb.environment().keySet().removeIf(k -> k.startsWith("SAND_LOCALBUS_"));
    pb.environment().put("SAND_LOCALBUS_CREDENTIAL", credential);
    pb.environment().put("SAND_LOCALBUS_PORT", "0");
    pb.environment().put("SAND_LOCALBUS_UNIX_SOCKET", dir.resolve("bus.sock").toString());
    return pb.redirectError(dir.resolve("stderr.txt").toFile());
  }

  @Test
  void servesOnTheAnnouncedPortAndStopsOnSigterm() throws Exception {
    Process p = bus(CREDENTIAL).start();
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      assertNotNull(line, "no ready line; stderr: " + Files.readString(dir.resolve("stderr.txt")));
      Matcher m = READY.matcher(line);
      assertTrue(m.matches(), line);
      int port = Integer.parseInt(m.group(1));
      assertTrue(port > 0);
      try (TestClient c = TestClient.tcp(port);
          TestClient u = TestClient.unix(dir.resolve("bus.sock"))) {
        c.bus.grantApplication(CREDENTIAL, "app", "credential-of-application-app");
        u.bus.publish("credential-of-application-app", "__ha__", buf("hello"));
        List<HostAgentMessage> got = c.bus.pollHostAgent(CREDENTIAL, 10, 5000);
        assertEquals("app", got.get(0).application);
        assertEquals("hello", TestClient.str(got.get(0).payload));
      }
      p.destroy(); // SIGTERM
      assertTrue(p.waitFor(20, TimeUnit.SECONDS), "the bus did not stop on SIGTERM");
      assertFalse(
          Files.exists(dir.resolve("bus.sock")), "the Unix socket is removed on the way out");
    } finally {
      p.destroyForcibly();
    }
  }

  @Test
  void refusesToStartWithoutACredential() throws Exception {
    Process p = bus("").start();
    assertTrue(p.waitFor(20, TimeUnit.SECONDS));
    assertEquals(2, p.exitValue());
    String err = Files.readString(dir.resolve("stderr.txt"));
    assertTrue(err.contains("Error: localbus: SAND_LOCALBUS_CREDENTIAL is empty"), err);
    assertEquals(
        "", new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8), "no ready line");
  }
}
