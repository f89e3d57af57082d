package sand.common;

import java.time.Duration;

/**
 * An exponential back-off: the pause after the first failure in a row is {@code first}, each further failure
 * doubles it, and it never exceeds {@code max}. One rule for every retry loop (Kafka sends, execution records,
 * sandbox restarts, deploy retries, partition deliveries), so they back off alike.
 */
public record Backoff(Duration first, Duration max) {
  public Backoff {
    if (first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
      throw new IllegalArgumentException(
          "a back-off needs 0 < first <= max, not " + first + " and " + max);
    }
  }

  public static Backoff ofMillis(long firstMs, long maxMs) {
    return new Backoff(Duration.ofMillis(firstMs), Duration.ofMillis(Math.max(firstMs, maxMs)));
  }

  /** The pause in ms after {@code failures} failures in a row (1 is the first; less than 1 counts as 1). */
  public long afterMs(int failures) {
    long f = first.toMillis();
    long m = max.toMillis();
    int doublings = Math.max(0, failures - 1);
    if (doublings >= 62 || f > (m >> doublings)) { // the doubled pause would pass max (or overflow)
      return m;
    }
    return f << doublings;
  }

  /** {@link #afterMs} as a Duration. */
  public Duration after(int failures) {
    return Duration.ofMillis(afterMs(failures));
  }
}
