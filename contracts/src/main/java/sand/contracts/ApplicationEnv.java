package sand.contracts;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * An application's environment: the plain variables of {@code settings.env} and the names of its secrets
 * (docs/api.md "Configuration and secrets"), both given to every grain instance as environment variables. The
 * rules (name form, the reserved prefix, the caps) are {@code contracts/rules.json}'s {@code application_env},
 * which the emulator applies too.
 */
public final class ApplicationEnv {
  private static final JsonNode RULE = Rules.APPLICATION_ENV;
  public static final Pattern NAME = Pattern.compile(RULE.path("name_pattern").asText());
  public static final String RESERVED_PREFIX = RULE.path("reserved_prefix").asText();
  public static final int MAX_VARIABLES = RULE.path("max_variables").asInt();
  public static final int MAX_VALUE_BYTES = RULE.path("max_value_bytes").asInt();
  public static final int MAX_TOTAL_BYTES = RULE.path("max_total_bytes").asInt();
  public static final int MAX_SECRETS = RULE.path("max_secrets").asInt();
  public static final int MAX_SECRET_BYTES = RULE.path("max_secret_bytes").asInt();

  private ApplicationEnv() {}

  /** Refuse a variable or secret name that is not an environment variable's, or is the platform's own. */
  public static String checkName(String what, String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(what + " name '" + name + "' is invalid: it must match "
          + NAME.pattern() + " (letters, digits and _, not starting with a digit)");
    }
    if (name.startsWith(RESERVED_PREFIX)) {
      throw new IllegalArgumentException(what + " name '" + name
          + "' is reserved: names starting with " + RESERVED_PREFIX + " are the platform's own");
    }
    return name;
  }

  /** The value of {@code settings.env}: an object of names to strings, within the caps; null = none. */
  public static Map<String, String> parse(JsonNode env) {
    if (env == null || env.isNull() || env.isMissingNode()) {
      return Map.of();
    }
    if (!env.isObject()) {
      throw new IllegalArgumentException(
          "settings.env must be an object of names to strings, e.g. {\"GREETING\": \"hi\"}");
    }
    if (env.size() > MAX_VARIABLES) {
      throw new IllegalArgumentException("settings.env has " + env.size() + " variables; at most "
          + MAX_VARIABLES + " are allowed");
    }
    Map<String, String> out = new LinkedHashMap<>();
    long total = 0;
    for (Iterator<Map.Entry<String, JsonNode>> it = env.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      checkName("settings.env variable", e.getKey());
      JsonNode v = e.getValue();
      if (!v.isTextual()) {
        throw new IllegalArgumentException("settings.env." + e.getKey() + "=" + v
            + " must be a string (environment variables are text: write \"" + v.asText() + "\")");
      }
      int bytes = v.asText().getBytes(StandardCharsets.UTF_8).length;
      if (bytes > MAX_VALUE_BYTES) {
        throw new IllegalArgumentException("settings.env." + e.getKey() + " is " + bytes
            + " bytes; at most " + MAX_VALUE_BYTES + " are allowed");
      }
      total += bytes + e.getKey().length();
      out.put(e.getKey(), v.asText());
    }
    if (total > MAX_TOTAL_BYTES) {
      throw new IllegalArgumentException(
          "settings.env holds " + total + " bytes; at most " + MAX_TOTAL_BYTES + " are allowed");
    }
    return Collections.unmodifiableMap(out);
  }

  /** Refuse a secret's value above the cap (it is kept encrypted; the name was checked by {@link #checkName}). */
  public static void checkSecretValue(String name, String value) {
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_SECRET_BYTES) {
      throw new IllegalArgumentException("secret " + name + " is " + bytes + " bytes; at most "
          + MAX_SECRET_BYTES + " are allowed");
    }
  }
}
