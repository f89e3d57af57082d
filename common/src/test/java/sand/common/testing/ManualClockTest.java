package sand.common.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

class ManualClockTest {
  @Test
  void movesOnlyWhenTold() {
    ManualClock clock = new ManualClock(Instant.ofEpochMilli(1_000_000));
    assertEquals(1_000_000, clock.millis());
    assertEquals(Instant.ofEpochMilli(1_000_000), clock.instant());
    clock.advance(Duration.ofMillis(1500));
    assertEquals(1_001_500, clock.millis());
    clock.set(Instant.parse("2026-11-23T10:00:00Z"));
    assertEquals(Instant.parse("2026-11-23T10:00:00Z"), clock.instant());
    assertSame(clock, clock.withZone(ZoneId.of("Europe/Paris")));
    assertEquals(Instant.parse("2026-01-01T00:00:00Z"), new ManualClock().instant());
  }
}
