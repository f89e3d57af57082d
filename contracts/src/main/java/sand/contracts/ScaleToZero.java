package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import sand.common.ConfigDef;

/**
 * The application setting {@code scale_to_zero_after_s} (contracts/rules.json): how long a host waits with no event
 * of the application before it stops its sandbox there; the next event starts it again. Zero: never (the default).
 * Checked where settings are stored ({@link ApplicationSettings#fromJson}); the host agent reads it.
 */
public final class ScaleToZero {
  public static final String SETTING = "scale_to_zero_after_s";
  /** A sandbox stopped sooner would be started again by the next request of a steady stream. */
  public static final double MIN_S = 1;

  public static final double MAX_S = 7 * 86_400;
  private static final ObjectMapper JSON = new ObjectMapper();

  private ScaleToZero() {}

  /** The setting's value in {@code settings} (absent or null: never); a bad one is refused with what to write. */
  public static Duration parse(JsonNode settings) {
    JsonNode v = settings == null ? null : settings.get(SETTING);
    if (v == null || v.isNull()) {
      return Duration.ZERO;
    }
    if (!v.isNumber()) {
      throw new IllegalArgumentException(
          "application setting " + SETTING + "=" + v + " must be a number of seconds");
    }
    double s = v.asDouble();
    if (s != 0 && (s < MIN_S || s > MAX_S || Double.isNaN(s))) {
      throw new IllegalArgumentException("application setting " + SETTING + "="
          + ConfigDef.plain(s) + " is invalid: must be 0 (never) or from "
          + ConfigDef.plain(MIN_S) + " to " + ConfigDef.plain(MAX_S) + " seconds");
    }
    return Duration.ofMillis(Math.round(s * 1000));
  }

  /** The setting in stored settings JSON; settings that do not parse (stored before the rule): never. */
  public static Duration of(String settingsJson) {
    if (settingsJson == null || settingsJson.isBlank()) {
      return Duration.ZERO;
    }
    try {
      return parse(JSON.readTree(settingsJson));
    } catch (JsonProcessingException | IllegalArgumentException e) {
      return Duration.ZERO;
    }
  }
}
