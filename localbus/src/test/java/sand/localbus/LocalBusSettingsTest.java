package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.common.ConfigDef;

class LocalBusSettingsTest {

  @Test
  void defaultsAreTheDocumentedOnes() {
    assertEquals(
        new LocalBusSettings(
            "127.0.0.1",
            9190,
            "",
            4096,
            10_000,
            100_000,
            16 << 20,
            64L << 20,
            512L << 20,
            256,
            10_000,
            256),
        LocalBusSettings.defaults());
  }

  @Test
  void aRecordBuiltInCodeMeetsTheDeclaredBounds() {
    IllegalArgumentException e = assertThrows(
        IllegalArgumentException.class,
        () -> new LocalBusSettings(
            "127.0.0.1",
            9190,
            "",
            2_000_000,
            10_000,
            100_000,
            16 << 20,
            64L << 20,
            512L << 20,
            256,
            10_000,
            256));
    assertEquals(
        "localbus: max.connections=2000000 is invalid: must be an int in [1, 1000000]",
        e.getMessage());
  }

  @Test
  void environmentOverridesUseTheLocalbusPrefix() {
    ConfigDef def = LocalBusSettings.definition();
    assertEquals(
        "SAND_LOCALBUS_HA_QUEUE_CAPACITY", def.envName(LocalBusSettings.HA_QUEUE_CAPACITY));
    ConfigDef.Config config = def.parse(
        Map.of(
            "SAND_LOCALBUS_PORT",
            "0",
            "SAND_LOCALBUS_QUEUE_CAPACITY",
            "7",
            "SAND_LOCALBUS_UNIX_SOCKET",
            "/run/sand/bus.sock",
            "SAND_LOCALBUS_CREDENTIAL",
            "secret"),
        Map.of());
    LocalBusSettings s = LocalBusSettings.from(config);
    assertEquals(0, s.port());
    assertEquals(7, s.queueCapacity());
    assertEquals("/run/sand/bus.sock", s.unixSocket());
    assertEquals("secret", config.getString(LocalBusSettings.CREDENTIAL));
  }

  @Test
  void badValuesFailNamingKeyValueAndExpectation() {
    ConfigDef def = LocalBusSettings.definition();
    ConfigDef.ConfigException e = assertThrows(
        ConfigDef.ConfigException.class,
        () -> def.parse(Map.of("SAND_LOCALBUS_QUEUE_CAPACITY", "0"), Map.of()));
    assertTrue(
        e.getMessage().contains("SAND_LOCALBUS_QUEUE_CAPACITY=0")
            && e.getMessage().contains("positive"),
        e.getMessage());
    assertThrows(
        ConfigDef.ConfigException.class,
        () -> def.parse(
            Map.of("SAND_LOCALBUS_MESSAGE_MAX_BYTES", String.valueOf(200 << 20)), Map.of()));
    assertThrows(
        ConfigDef.ConfigException.class,
        () -> def.parse(Map.of("SAND_LOCALBUS_PORT", "http"), Map.of()));
  }

  @Test
  void aHostAgentDeclaresTheSameSettingsUnderItsPrefix() {
    ConfigDef def = LocalBusSettings.declare(new ConfigDef("hostagent"), "bus.");
    LocalBusSettings s = LocalBusSettings.from(
        def.parse(Map.of("SAND_HOSTAGENT_BUS_PORT", "9999"), Map.of()), "bus.");
    assertEquals(9999, s.port());
    assertEquals(LocalBusSettings.defaults().withPort(9999), s);
  }

  @Test
  void settingsBuiltInCodeAreCheckedToo() {
    assertThrows(
        IllegalArgumentException.class, () -> LocalBusSettings.defaults().withQueueCapacity(0));
    assertThrows(
        IllegalArgumentException.class, () -> LocalBusSettings.defaults().withPort(70000));
  }
}
