package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ApplicationSettingsTest {
  @Test
  void defaultsAreTheDocumentedOnes() {
    assertEquals(
        new ApplicationSettings(60, 0, 32, 512, 1.0, 512), ApplicationSettings.fromJson(""));
    assertEquals(
        ApplicationSettings.fromJson(
            "{\"timeout_s\": 60, \"instance_memory_mb\": 0, \"concurrency\": 32, "
                + "\"sandbox_memory_mb\": 512, \"sandbox_cpus\": 1.0, \"sandbox_pids\": 512}"),
        ApplicationSettings.defaults());
  }

  @Test
  void aHundredGrainsFitTheDefaultSandboxAndTooManyForItsMemoryAreRefusedWithTheNumbers() {
    ApplicationSettings.defaults().requireFits(100);
    ApplicationLimits.defaults().check(ApplicationSettings.defaults(), 128, 0);
    ApplicationSettings small = ApplicationSettings.fromJson("{\"sandbox_memory_mb\": 64}");
    small.requireFits(5);
    String why = assertThrows(IllegalArgumentException.class, () -> small.requireFits(20))
        .getMessage();
    assertEquals(
        "a sandbox of 20 grains needs at least 108 MB (48 MB + 3 MB per grain worker; what the grains "
            + "import comes on top) but sandbox_memory_mb is 64: raise sandbox_memory_mb or split the workflow",
        why);
    assertThrows(
        IllegalArgumentException.class, () -> ApplicationLimits.defaults().check(small, 20, 0));
    ApplicationSettings fewPids = ApplicationSettings.fromJson("{\"sandbox_pids\": 16}");
    assertEquals(
        "a sandbox of 10 grains needs at least 28 processes (a grain worker and a standby per grain) but "
            + "sandbox_pids is 16: raise sandbox_pids or split the workflow",
        assertThrows(IllegalArgumentException.class, () -> fewPids.requireFits(10))
            .getMessage());
  }

  @Test
  void missingKeysTakeTheirDefaults() {
    assertEquals(
        new ApplicationSettings(5, 0, 32, 512, 0.25, 512),
        ApplicationSettings.fromJson("{\"timeout_s\": 5, \"sandbox_cpus\": 0.25}"));
  }

  @Test
  void sessionLimitsHaveDefaultsAndBounds() {
    ApplicationSettings s =
        ApplicationSettings.fromJson("{\"session_timeout_s\": 90, \"session_functions_max\": 4}");
    assertEquals(90.0, s.sessionTimeoutS());
    assertEquals(4, s.sessionFunctionsMax());
    assertEquals(600.0, ApplicationSettings.defaults().sessionTimeoutS());
    assertEquals(64, ApplicationSettings.defaults().sessionFunctionsMax());
    assertEquals(
        "application setting session_functions_max=0 is invalid: must be in [1, 1000]",
        assertThrows(
                IllegalArgumentException.class,
                () -> ApplicationSettings.fromJson("{\"session_functions_max\": 0}"))
            .getMessage());
  }

  @Test
  void badSettingsNameTheKey() {
    assertEquals(
        "unknown application setting 'memory'; known: ",
        assertThrows(
                IllegalArgumentException.class,
                () -> ApplicationSettings.fromJson("{\"memory\": 1}"))
            .getMessage()
            .replaceAll("\\[.*]", ""));
    assertEquals(
        "application setting sandbox_pids=2 is invalid: must be >= 8",
        assertThrows(
                IllegalArgumentException.class,
                () -> ApplicationSettings.fromJson("{\"sandbox_pids\": 2}"))
            .getMessage());
    assertEquals(
        "application setting concurrency=\"many\" must be a number",
        assertThrows(
                IllegalArgumentException.class,
                () -> ApplicationSettings.fromJson("{\"concurrency\": \"many\"}"))
            .getMessage());
  }
}
