package sand.frontend.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * A limit of attempts per key (a client address, an account, an e-mail) per minute, with a burst of one minute's
 * worth: a token bucket per key. Beyond it, 429 with Retry-After. Used where a stranger's attempt costs the
 * platform or a victim something: sign-ups, logins (issue 26, finding 8). Memory is bounded: past
 * {@link #MAX_KEYS} keys the buckets are forgotten (which only lets one more burst through).
 */
public final class Throttle {
  private static final int MAX_KEYS = 100_000;

  private final String what;
  private final String setting;
  private final int perMinute;
  private final LongSupplier nanos;
  private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();
  private long refused;

  /**
   * @param what      what is limited, per what ("sign-ups per client address"): the refusal's message
   * @param setting   the frontend setting that sets it (the refusal names it)
   * @param perMinute attempts per key per minute (and the burst); 0: no limit
   */
  public Throttle(String what, String setting, int perMinute, LongSupplier nanos) {
    this.what = what;
    this.setting = setting;
    this.perMinute = perMinute;
    this.nanos = nanos;
  }

  public Throttle(String what, String setting, int perMinute) {
    this(what, setting, perMinute, System::nanoTime);
  }

  /** Take one attempt of {@code key}, or throw 429 (too_many_requests) saying when to try again. */
  public void take(String key) {
    if (perMinute <= 0) {
      return;
    }
    if (buckets.size() >= MAX_KEYS) {
      buckets.clear();
    }
    long now = nanos.getAsLong();
    double wait = buckets
        .computeIfAbsent(key, k -> new TokenBucket(perMinute, now))
        .take(now, perMinute, perMinute / 60.0);
    if (wait == 0) {
      return;
    }
    synchronized (this) {
      refused++;
    }
    long retryS = Math.max(1, (long) Math.ceil(wait));
    throw new ApiException(
        429,
        "too_many_requests",
        "too many " + what + ": at most " + perMinute + " a minute " + "(frontend setting "
            + setting + "); try again in " + retryS + " s",
        Map.of(Reply.RETRY_AFTER_S, Long.toString(retryS)));
  }

  /** Attempts refused so far (metrics). */
  public synchronized long refused() {
    return refused;
  }
}
