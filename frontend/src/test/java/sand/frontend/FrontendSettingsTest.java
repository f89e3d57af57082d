package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.common.ConfigDef;

/** The frontend's settings read typed: the defaults docs/config.md lists, and the checks across keys. */
class FrontendSettingsTest {
  @Test
  void theDefaultsAreTheDocumentedOnes() {
    FrontendSettings s = FrontendSettings.of(Map.of());
    assertEquals("fe-8081", s.frontendId());
    assertEquals("127.0.0.1", s.host());
    assertEquals(10_485_760L, s.maxBodyBytes());
    assertEquals(64L << 20, s.bodyBudgetBytes());
    assertEquals(2, s.loginHashSlots());
    assertEquals(Duration.ofSeconds(10), s.hostMaxAge());
    assertEquals(Duration.ofSeconds(2), s.heartbeat());
    assertEquals(Duration.ofDays(7), s.executionTtl());
    assertTrue(s.gate() && s.openSignup());
  }

  @Test
  void aKeyIsReadUnderItsConstant() {
    FrontendSettings s = FrontendSettings.of(
        Map.of(FrontendSettings.ID, "fe-a", FrontendSettings.QUOTA_GRAINS, "7"));
    assertEquals("fe-a", s.frontendId());
    assertEquals(7, s.quotaGrains());
  }

  @Test
  void aHeartbeatNoShorterThanTheDeadAgeFailsNamingBothKeys() {
    ConfigDef.ConfigException e = assertThrows(
        ConfigDef.ConfigException.class,
        () -> FrontendSettings.of(Map.of(
            FrontendSettings.HEARTBEAT_MS,
            "10000",
            FrontendSettings.FRONTEND_MAX_AGE_MS,
            "10000")));
    assertTrue(
        e.getMessage().contains("heartbeat.ms=10000 must be less than frontend.max.age.ms=10000"),
        e.getMessage());
  }
}
