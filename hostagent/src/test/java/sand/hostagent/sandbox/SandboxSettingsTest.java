package sand.hostagent.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.common.ConfigDef;

/** The host agent's sandbox settings (docs/config.md, component hostagent, keys sandbox.*). */
class SandboxSettingsTest {

  @Test
  void sandboxSettingsComeFromTheHostAgentsConfigWithEnvironmentDefaults() {
    ConfigDef def = SandboxSettings.declare(new ConfigDef("hostagent"), "sandbox.");
    SandboxSettings s = SandboxSettings.from(
        def.parse(Map.of("SAND_HOSTAGENT_SANDBOX_IMAGE", "img:1"), Map.of()),
        "sandbox.",
        Map.of("SAND_VENV", "/opt/venv", "SAND_HOME", "/srv/sand"));
    assertEquals("img:1", s.image());
    assertEquals(List.of(), s.pipAllowedHosts(), "no package index unless the operator allows one");
    assertEquals(Path.of("/srv/sand/sandboxes"), s.stateDir());
    assertEquals("1000:1000", s.user());
    SandboxSettings idx = SandboxSettings.from(
        def.parse(
            Map.of(), Map.of("sandbox.pip.allowed.hosts", "Index.Example:443, files.example:443")),
        "sandbox.",
        Map.of());
    assertEquals(List.of("index.example:443", "files.example:443"), idx.pipAllowedHosts());
    assertThrows(
        ConfigDef.ConfigException.class,
        () -> def.parse(Map.of(), Map.of("sandbox.pip.allowed.hosts", "index.example")),
        "host:port, not a host (fails at parse, naming the key)");
    assertThrows(
        ConfigDef.ConfigException.class, () -> def.parse(Map.of(), Map.of("sandbox.user", "0:0")));
  }
}
