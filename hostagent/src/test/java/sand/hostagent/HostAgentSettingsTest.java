package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.common.ConfigDef.ConfigException;

class HostAgentSettingsTest {
  @TempDir
  Path tmp;

  @Test
  void typedSettingsKeepTheirDefaultsAndSocketsFollowTheStateFolder() {
    HostAgentSettings s = HostAgentSettings.from(
        HostAgentSettings.DEF.parse(Map.of(), Map.of("host.id", "h1")),
        Map.of("SAND_HOME", tmp.toString()));
    assertEquals("h1", s.hostId());
    assertEquals(9192, s.gatePort());
    assertEquals(Duration.ofSeconds(60), s.deploy().workersTimeout());
    assertEquals(Duration.ofSeconds(15), s.deploy().partitionsWait());
    assertEquals(Duration.ofHours(168), s.logTtl());
    assertEquals(tmp.resolve("sandboxes").resolve("sockets").toAbsolutePath(), s.socketsDir());
    assertEquals("h1", s.bridge().hostId());
  }

  @Test
  void foldersUrlsAndFilesAreCheckedAtParse() throws Exception {
    Path file = Files.writeString(tmp.resolve("f"), "x");
    ConfigException e = assertThrows(
        ConfigException.class,
        () -> HostAgentSettings.DEF.parse(Map.of(), Map.of("sockets.dir", file.toString())));
    assertTrue(e.getMessage().contains("sockets.dir"), e.getMessage());
    assertThrows(
        ConfigException.class,
        () -> HostAgentSettings.DEF.parse(Map.of(), Map.of("sandbox.pip.index.url", "not a url")));
    assertThrows(
        ConfigException.class,
        () -> HostAgentSettings.DEF.parse(
            Map.of(), Map.of("sandbox.pip.cert", tmp.resolve("none").toString())));
    HostAgentSettings.DEF.parse(
        Map.of(),
        Map.of(
            "sockets.dir",
            tmp.resolve("new").toString(),
            "sandbox.pip.index.url",
            "https://pypi.example/simple",
            "sandbox.pip.cert",
            file.toString()));
  }
}
