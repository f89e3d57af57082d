package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AppEnvTest {
  private static String refused(String settingsJson) {
    return assertThrows(
            IllegalArgumentException.class, () -> ApplicationSettings.fromJson(settingsJson))
        .getMessage();
  }

  @Test
  void settingsEnvIsAcceptedAndRead() {
    String json = "{\"timeout_s\": 5, \"env\": {\"GREETING\": \"hello\", \"_x1\": \"\"}}";
    assertEquals(5, ApplicationSettings.fromJson(json).timeoutS());
    assertEquals(Map.of("GREETING", "hello", "_x1", ""), AppEnv.fromSettingsJson(json));
    assertEquals(Map.of(), AppEnv.fromSettingsJson("{\"timeout_s\": 5}"));
  }

  @Test
  void theUnknownSettingMessageListsEveryKeyTheApiAccepts() {
    String m = refused("{\"memory\": 1}");
    for (String k :
        new String[] {"timeout_s", "sandbox_pids", "env", "hosts", "request_timeout_s"}) {
      assertTrue(m.contains(k), m);
    }
    // the frontend strips hosts and request_timeout_s before the agent's parser; it tolerates them
    // anyway
    ApplicationSettings.fromJson("{\"hosts\": [], \"request_timeout_s\": 10}");
  }

  @Test
  void badNamesAndValuesAreRefusedWithTheRule() {
    assertEquals(
        "settings.env name '1X' is invalid: must match [A-Za-z_][A-Za-z0-9_]*, at most 128 characters",
        refused("{\"env\": {\"1X\": \"v\"}}"));
    assertEquals(
        "settings.env name 'SAND_X' is reserved: names starting SAND_ are the platform's; choose another",
        refused("{\"env\": {\"SAND_X\": \"v\"}}"));
    assertTrue(refused("{\"env\": {\"PYTHONPATH\": \"/x\"}}").contains("reserved"));
    assertTrue(refused("{\"env\": {\"N\": 3}}").contains("must be a string"));
    assertTrue(refused("{\"env\": [\"N\"]}").startsWith("settings.env must be an object"));
    String big = "x".repeat(AppEnv.RULES.maxValueBytes() + 1);
    assertEquals(
        "settings.env BIG is " + big.length() + " bytes: at most " + AppEnv.RULES.maxValueBytes()
            + " bytes; keep large data in the data layer",
        refused("{\"env\": {\"BIG\": \"" + big + "\"}}"));
    assertTrue(AppEnv.checkName("secret", "TOKEN").equals("TOKEN"));
    assertThrows(IllegalArgumentException.class, () -> AppEnv.checkName("secret", "A".repeat(129)));
    assertThrows(IllegalArgumentException.class, () -> AppEnv.checkValue("secret", "A", "a\0b"));
  }

  @Test
  void countsAndTotalsAreCapped() {
    StringBuilder many = new StringBuilder("{\"env\": {");
    for (int i = 0; i <= AppEnv.RULES.maxNames(); i++) {
      many.append(i == 0 ? "" : ",").append("\"N").append(i).append("\": \"v\"");
    }
    assertTrue(
        refused(many.append("}}").toString()).contains("at most " + AppEnv.RULES.maxNames()));
    String v = "x".repeat(AppEnv.RULES.maxValueBytes());
    Map<String, String> secrets = new java.util.TreeMap<>();
    for (int i = 0; i * v.length() <= AppEnv.RULES.maxTotalBytes(); i++) {
      secrets.put("S" + i, v);
    }
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new AppEnv(Map.of(), secrets))
        .getMessage()
        .contains("at most " + AppEnv.RULES.maxTotalBytes()));
  }

  @Test
  void printingNeverShowsAValue() {
    AppEnv env = new AppEnv(Map.of("MODE", "fast"), Map.of("TOKEN", "hunter2"));
    assertFalse(env.toString().contains("hunter2"));
    assertTrue(env.toString().contains("TOKEN"));
  }
}
