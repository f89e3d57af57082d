package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.Optional;
import sand.common.ConfigDef;

/**
 * The application settings {@code min_hosts}, {@code max_hosts} and {@code scale_in_after_s} (contracts/rules.json;
 * docs/operations.md "Elastic placement"): with {@code max_hosts} the application is placed by the cluster's
 * scheduler, on {@code min_hosts} hosts at first and on more while its events queue, down to {@code min_hosts}
 * again once it has been idle for {@code scale_in_after_s}. Without it the application runs on every live host (or
 * the hosts it names), as before. Checked where settings are stored ({@link ApplicationSettings#fromJson}); the
 * frontend reads it for the first placement, the scheduler for every later one.
 *
 * @param minHosts     hosts it keeps however idle (1 or more: {@code scale_to_zero_after_s} stops the sandbox on the
 *                     last one)
 * @param maxHosts     most hosts it is spread on when it queues (the operator's {@code hosts.max} caps it)
 * @param scaleInAfter how long it must be idle before one host more than {@code minHosts} is taken away
 */
public record ElasticPlacement(int minHosts, int maxHosts, Duration scaleInAfter) {
  public static final String MIN_HOSTS = "min_hosts";
  public static final String MAX_HOSTS = "max_hosts";
  public static final String SCALE_IN_AFTER_S = "scale_in_after_s";
  public static final int HOSTS_LIMIT = 10_000;
  /** The application record ({@code sand.cluster.ApplicationRecords}) of the scheduler's last decision. */
  public static final String RECORD_KIND = "placement";

  public static final String RECORD_ID = "current";
  public static final double SCALE_IN_DEFAULT_S = 60;
  public static final double SCALE_IN_MAX_S = 86_400;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The settings' placement: empty when the application is not placed by the scheduler (no {@code max_hosts}). */
  public static Optional<ElasticPlacement> parse(JsonNode settings) {
    JsonNode max = settings == null ? null : settings.get(MAX_HOSTS);
    JsonNode min = settings == null ? null : settings.get(MIN_HOSTS);
    JsonNode in = settings == null ? null : settings.get(SCALE_IN_AFTER_S);
    if (max == null || max.isNull()) {
      if ((min != null && !min.isNull()) || (in != null && !in.isNull())) {
        throw new IllegalArgumentException("application settings " + MIN_HOSTS + " and "
            + SCALE_IN_AFTER_S + " need " + MAX_HOSTS
            + " (the most hosts the scheduler may spread the application on)");
      }
      return Optional.empty();
    }
    int maxHosts = hosts(MAX_HOSTS, max);
    int minHosts = min == null || min.isNull() ? 1 : hosts(MIN_HOSTS, min);
    if (minHosts > maxHosts) {
      throw new IllegalArgumentException("application setting " + MIN_HOSTS + "=" + minHosts
          + " is above " + MAX_HOSTS + "=" + maxHosts);
    }
    double s = SCALE_IN_DEFAULT_S;
    if (in != null && !in.isNull()) {
      s = in.isNumber() ? in.asDouble() : Double.NaN;
      if (!(s >= 1 && s <= SCALE_IN_MAX_S)) {
        throw new IllegalArgumentException("application setting " + SCALE_IN_AFTER_S + "=" + in
            + " is invalid: must be from 1 to " + ConfigDef.plain(SCALE_IN_MAX_S) + " seconds");
      }
    }
    return Optional.of(
        new ElasticPlacement(minHosts, maxHosts, Duration.ofMillis(Math.round(s * 1000))));
  }

  private static int hosts(String key, JsonNode v) {
    if (!v.isIntegralNumber() || v.asLong() < 1 || v.asLong() > HOSTS_LIMIT) {
      throw new IllegalArgumentException("application setting " + key + "=" + v
          + " is invalid: must be a whole number of hosts from 1 to " + HOSTS_LIMIT);
    }
    return v.asInt();
  }

  /** The placement in stored settings JSON; settings that do not parse (stored before the rule): none. */
  public static Optional<ElasticPlacement> of(String settingsJson) {
    if (settingsJson == null || settingsJson.isBlank()) {
      return Optional.empty();
    }
    try {
      return parse(JSON.readTree(settingsJson));
    } catch (JsonProcessingException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** This placement with {@code maxHosts} within the operator's cap ({@code hosts.max}; 0 = none). */
  public ElasticPlacement capped(int hostsMax) {
    if (hostsMax <= 0 || maxHosts <= hostsMax) {
      return this;
    }
    return new ElasticPlacement(Math.min(minHosts, hostsMax), hostsMax, scaleInAfter);
  }
}
