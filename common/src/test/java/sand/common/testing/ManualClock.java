package sand.common.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock tests move by hand (heartbeats, take-over timeouts, back-off, idle sandboxes): the one test clock of
 * every module, published in common's test-jar. Thread-safe, since the code under test reads it from its own
 * threads while the test moves it.
 */
public final class ManualClock extends Clock {
  private final AtomicReference<Instant> now;

  /** A clock at 2026-01-01T00:00:00Z. */
  public ManualClock() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  public ManualClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  /** Move the clock forward by {@code d} (backward when negative). */
  public void advance(Duration d) {
    now.updateAndGet(t -> t.plus(d));
  }

  public void set(Instant t) {
    now.set(t);
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public long millis() {
    return now.get().toEpochMilli();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  /** The same clock: tests care about the instant, not the zone. */
  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
