package sand.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static sand.common.ConfigDef.ABSOLUTE_PATH;
import static sand.common.ConfigDef.SECRET;
import static sand.common.ConfigDef.SOCKET_PATH;
import static sand.common.ConfigDef.Type.DOUBLE;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.above;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.emptyOr;
import static sand.common.ConfigDef.oneOf;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A check says what a value must be; the error message and the docs' table use its words. */
class ConfigDefTest {
  private final ConfigDef def = new ConfigDef("demo")
      .define("threads", INT, 4, between(1, 256), "worker threads")
      .define("timeout.s", DOUBLE, 1.5, above(0, 60), "seconds")
      .define("credential", STRING, "", emptyOr("random", SECRET), "a secret")
      .define("global", STRING, "memory", oneOf("cassandra", "memory"), "where data goes")
      .define("password.file", STRING, "", emptyOr("no login", ABSOLUTE_PATH), "a file")
      .define("socket", STRING, "", emptyOr("TCP only", SOCKET_PATH), "a Unix socket");

  private String error(String key, String value) {
    return assertThrows(
            ConfigDef.ConfigException.class, () -> def.parse(Map.of(), Map.of(key, value)))
        .getMessage();
  }

  @Test
  void checksWriteTheirOwnMustBe() {
    assertEquals("demo: threads=0 is invalid: must be an int in [1, 256]", error("threads", "0"));
    assertEquals("demo: threads='many' is not an int in [1, 256]", error("threads", "many"));
    assertEquals(
        "demo: timeout.s=0.0 is invalid: must be a number in (0, 60]", error("timeout.s", "0"));
    assertEquals(
        "demo: credential=short is invalid: must be empty (random) or at least 16 characters",
        error("credential", "short"));
    assertEquals(
        "demo: global=redis is invalid: must be cassandra or memory", error("global", "redis"));
    assertEquals(
        "demo: password.file=secrets/pw is invalid: must be empty (no login) or an absolute path",
        error("password.file", "secrets/pw"));
    assertEquals(
        "demo: socket=/" + "s".repeat(107)
            + " is invalid: must be empty (TCP only) or an absolute path of at " + "most 107 bytes",
        error("socket", "/" + "s".repeat(107)));
    assertEquals(
        "/run/sand/bus.sock",
        def.parse(Map.of(), Map.of("socket", "/run/sand/bus.sock")).getString("socket"));
    assertEquals(
        "0123456789abcdef",
        def.parse(Map.of(), Map.of("credential", "0123456789abcdef")).getString("credential"));
    assertEquals(
        List.of(
            "an int in [1, 256]",
            "a number in (0, 60]",
            "empty (random) or at least 16 characters",
            "cassandra or memory",
            "empty (no login) or an absolute path",
            "empty (TCP only) or an absolute path of at most 107 bytes"),
        def.keys().stream().map(ConfigDef.Key::expectation).toList());
    assertEquals(
        true,
        def.toMarkdown().contains("| an int in [1, 256] | worker threads |"),
        def.toMarkdown());
  }

  @Test
  void aMisspeltVariableIsNamedWithTheNearestSetting() {
    Map<String, String> env = Map.of(
        "SAND_DEMO_THRAEDS",
        "8",
        "SAND_DEMO_THREADS",
        "8",
        "SAND_DEMO_PORTS",
        "1",
        "SAND_OTHER_X",
        "1",
        "HOME",
        "/root",
        "SAND_DEMO_ZZZZZZZZZZ",
        "1");
    assertEquals(
        List.of(
            "SAND_DEMO_THRAEDS is not a setting (did you mean SAND_DEMO_THREADS?); it is ignored",
            "SAND_DEMO_ZZZZZZZZZZ is not a setting; it is ignored"),
        ConfigDef.unknownVariables(env, List.of(def), Set.of("SAND_DEMO_PORTS")));
  }
}
