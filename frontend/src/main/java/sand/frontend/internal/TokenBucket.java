package sand.frontend.internal;

/**
 * A token bucket, full at first; one request takes one token. Its size and refill rate are given at each take (a
 * frontend's share of an account's rate changes with the number of live frontends). Shared by the per-account
 * request rate and the sign-up/login throttles.
 */
public final class TokenBucket {
  private double tokens;
  private long refilledAt;

  public TokenBucket(double capacity, long nowNanos) {
    this.tokens = capacity;
    this.refilledAt = nowNanos;
  }

  /** Take a token at {@code nowNanos}: 0 when taken, else the seconds until one is there (nothing taken). */
  public synchronized double take(long nowNanos, double capacity, double perSecond) {
    tokens = Math.min(capacity, tokens + (nowNanos - refilledAt) / 1e9 * perSecond);
    refilledAt = nowNanos;
    if (tokens >= 1.0) {
      tokens -= 1.0;
      return 0;
    }
    return (1.0 - tokens) / perSecond;
  }
}
