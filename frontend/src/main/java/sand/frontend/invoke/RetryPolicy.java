package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Set;

/**
 * How often an event that no caller waits for (an asynchronous request, a trigger's event) is run before it goes to
 * the application's dead letters (docs/triggers.md): {@code settings.retry} = {"attempts": 3, "backoff_s": 1,
 * "max_backoff_s": 60}. Attempt n+1 starts backoff_s * 2^(n-1) seconds (at most max_backoff_s) after attempt n
 * ended with an error or a timeout; as Lambda's asynchronous invocations do, 3 attempts unless set.
 */
public record RetryPolicy(int attempts, double backoffS, double maxBackoffS) {
  public static final RetryPolicy DEFAULT = new RetryPolicy(3, 1, 60);
  public static final String SETTING = "retry";
  public static final int MAX_ATTEMPTS = 10;
  public static final double MAX_BACKOFF_S = 3600;
  private static final Set<String> KEYS = Set.of("attempts", "backoff_s", "max_backoff_s");

  /** The pause after attempt {@code n} (1-based) failed. */
  public Duration backoff(int n) {
    double s = Math.min(maxBackoffS, backoffS * Math.pow(2, Math.max(0, n - 1)));
    return Duration.ofMillis((long) (s * 1000));
  }

  /** {@code settings.retry} (null or absent: the default); IllegalArgumentException naming the rule. */
  public static RetryPolicy parse(JsonNode n) {
    if (n == null || n.isNull() || n.isMissingNode()) {
      return DEFAULT;
    }
    if (!n.isObject()) {
      throw new IllegalArgumentException(
          "settings.retry must be an object, e.g. {\"attempts\": 3, \"backoff_s\": 1}");
    }
    n.fieldNames().forEachRemaining(k -> {
      if (!KEYS.contains(k)) {
        throw new IllegalArgumentException(
            "settings.retry has no field '" + k + "'; known: attempts, backoff_s, max_backoff_s");
      }
    });
    int attempts = n.has("attempts") ? whole(n.get("attempts"), "attempts") : DEFAULT.attempts;
    double backoff = n.has("backoff_s") ? num(n.get("backoff_s"), "backoff_s") : DEFAULT.backoffS;
    double max =
        n.has("max_backoff_s") ? num(n.get("max_backoff_s"), "max_backoff_s") : DEFAULT.maxBackoffS;
    if (attempts < 1 || attempts > MAX_ATTEMPTS) {
      throw new IllegalArgumentException("settings.retry.attempts=" + attempts + " must be in 1.."
          + MAX_ATTEMPTS + " (1: no retry)");
    }
    if (backoff < 0 || backoff > MAX_BACKOFF_S || max < 0 || max > MAX_BACKOFF_S) {
      throw new IllegalArgumentException("settings.retry backoff_s and max_backoff_s must be in 0.."
          + (int) MAX_BACKOFF_S + " seconds");
    }
    return new RetryPolicy(attempts, backoff, Math.max(backoff, max));
  }

  private static int whole(JsonNode v, String key) {
    if (!v.canConvertToInt() || !v.isIntegralNumber()) {
      throw new IllegalArgumentException("settings.retry." + key + "=" + v + " must be an integer");
    }
    return v.asInt();
  }

  private static double num(JsonNode v, String key) {
    if (!v.isNumber()) {
      throw new IllegalArgumentException("settings.retry." + key + "=" + v + " must be a number");
    }
    return v.asDouble();
  }
}
