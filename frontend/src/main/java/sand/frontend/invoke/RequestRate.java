package sand.frontend.invoke;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import sand.frontend.internal.TokenBucket;

/**
 * An account's request-rate quota (requests per second, cluster-wide), as this frontend's share of it: a token
 * bucket per account refilled at the rate divided by the live frontends (nginx spreads requests evenly), holding
 * at most one second of that share (a burst of it is fine, a sustained excess is refused).
 */
final class RequestRate {
  private static final int MAX_ACCOUNTS = 100_000;

  private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();

  /** Take one request of {@code account} at {@code nowNanos} under a share of {@code perSecond}; false: refuse. */
  boolean take(String account, double perSecond, long nowNanos) {
    if (buckets.size() >= MAX_ACCOUNTS) {
      buckets.clear(); // bounded memory: forgetting buckets only lets a burst through
    }
    double burst = Math.max(1.0, perSecond);
    return buckets
            .computeIfAbsent(account, a -> new TokenBucket(burst, nowNanos))
            .take(nowNanos, burst, perSecond)
        == 0;
  }
}
