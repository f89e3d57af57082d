package sand.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
  @Test
  void theFirstPauseIsFirstAndEachFailureDoublesItUpToMax() {
    Backoff b = Backoff.ofMillis(250, 5000);
    assertEquals(250, b.afterMs(1));
    assertEquals(500, b.afterMs(2));
    assertEquals(4000, b.afterMs(5));
    assertEquals(5000, b.afterMs(6));
    assertEquals(5000, b.afterMs(1_000_000));
    assertEquals(250, b.afterMs(0), "no failure yet counts as the first");
    assertEquals(Duration.ofMillis(1000), b.after(3));
  }

  @Test
  void aLongRunOfFailuresNeverOverflowsPastMax() {
    Backoff b = new Backoff(Duration.ofMillis(3), Duration.ofDays(365));
    for (int i = 1; i < 200; i++) {
      long ms = b.afterMs(i);
      assertEquals(
          true, ms > 0 && ms <= Duration.ofDays(365).toMillis(), "failure " + i + ": " + ms);
    }
  }

  @Test
  void aBackoffThatCannotBeMetIsRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)));
    assertThrows(
        IllegalArgumentException.class,
        () -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
  }
}
