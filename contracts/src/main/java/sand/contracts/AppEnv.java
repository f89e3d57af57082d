package sand.contracts;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * An application's environment as its grain instances see it (os.environ, context.get_config and
 * context.get_secret): the plain variables of {@code settings.env} and the decrypted secrets. The host agent
 * builds it at deploy, so a request never looks a secret up. Its rules (names as environment variables, the
 * platform's {@code SAND_} names refused, sizes and counts) are {@code application_env} and
 * {@code application_secrets} of contracts/rules.json, which the emulator applies too.
 *
 * @param config  settings.env: name -> value
 * @param secrets the application's secrets: name -> value (never printed: see {@link #toString})
 */
public record AppEnv(Map<String, String> config, Map<String, String> secrets) {
  public static final Rules.EnvRules RULES = Rules.APPLICATION_ENV;
  public static final AppEnv EMPTY = new AppEnv(Map.of(), Map.of());
  private static final Pattern NAME = Pattern.compile(RULES.namePattern());

  public AppEnv {
    config = Collections.unmodifiableMap(new TreeMap<>(config));
    secrets = Collections.unmodifiableMap(new TreeMap<>(secrets));
    Map<String, Integer> sizes = new LinkedHashMap<>();
    config.forEach((k, v) -> sizes.put(k, bytes(v)));
    secrets.forEach((k, v) -> sizes.put(k, bytes(v)));
    checkTotal(sizes);
  }

  /** A name of settings.env or of a secret ({@code what} says which), or an error saying what it must be. */
  public static String checkName(String what, String name) {
    if (name == null
        || name.isEmpty()
        || name.length() > RULES.maxNameChars()
        || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(what + " name '" + name + "' is invalid: must match "
          + RULES.namePattern() + ", at most " + RULES.maxNameChars() + " characters");
    }
    if (name.startsWith(RULES.reservedPrefix())) {
      throw new IllegalArgumentException(what + " name '" + name + "' is reserved: names starting "
          + RULES.reservedPrefix() + " are the platform's; choose another");
    }
    if (RULES.reservedNames().contains(name)) {
      throw new IllegalArgumentException(
          what + " name '" + name + "' is reserved: " + RULES.reservedNames()
              + " would change what code the grain worker runs; choose another");
    }
    return name;
  }

  /** A value of settings.env or of a secret, or an error naming its size and the cap. */
  public static String checkValue(String what, String name, String value) {
    if (value == null) {
      throw new IllegalArgumentException(what + " " + name + " must be a string");
    }
    if (value.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(
          what + " " + name + " contains a NUL character, which no environment variable can hold");
    }
    int n = bytes(value);
    if (n > RULES.maxValueBytes()) {
      throw new IllegalArgumentException(what + " " + name + " is " + n + " bytes: at most "
          + RULES.maxValueBytes() + " bytes; keep large data in the data layer");
    }
    return value;
  }

  /** The names and value sizes of settings.env and the secrets together fit {@code max_total_bytes}. */
  public static void checkTotal(Map<String, Integer> valueBytesByName) {
    long total = 0;
    for (var e : valueBytesByName.entrySet()) {
      total += bytes(e.getKey()) + e.getValue();
    }
    if (total > RULES.maxTotalBytes()) {
      throw new IllegalArgumentException("settings.env and the secrets take " + total
          + " bytes (names and values): at most " + RULES.maxTotalBytes()
          + "; remove some or keep large data in the data layer");
    }
  }

  /** {@code settings.env} (null or absent = none), checked: an object of at most max_names names to strings. */
  public static Map<String, String> parseEnv(JsonNode env) {
    if (env == null || env.isNull()) {
      return Map.of();
    }
    if (!env.isObject()) {
      throw new IllegalArgumentException(
          "settings.env must be an object of NAME -> string, e.g. {\"GREETING\": \"hello\"}");
    }
    if (env.size() > RULES.maxNames()) {
      throw new IllegalArgumentException(
          "settings.env has " + env.size() + " names: at most " + RULES.maxNames());
    }
    Map<String, String> out = new TreeMap<>();
    Map<String, Integer> sizes = new LinkedHashMap<>();
    env.fields().forEachRemaining(e -> {
      String name = checkName("settings.env", e.getKey());
      if (!e.getValue().isTextual()) {
        throw new IllegalArgumentException("settings.env " + name + "=" + e.getValue()
            + " must be a string (quote numbers: \"" + e.getValue().asText() + "\")");
      }
      out.put(name, checkValue("settings.env", name, e.getValue().asText()));
      sizes.put(name, bytes(e.getValue().asText()));
    });
    checkTotal(sizes);
    return Collections.unmodifiableMap(out);
  }

  /** The {@code env} member of an application's settings JSON (as stored in applications.settings). */
  public static Map<String, String> fromSettingsJson(String settingsJson) {
    if (settingsJson == null || settingsJson.isBlank()) {
      return Map.of();
    }
    try {
      return parseEnv(new com.fasterxml.jackson.databind.ObjectMapper()
          .readTree(settingsJson)
          .get("env"));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException(
          "application settings are not valid JSON: " + e.getOriginalMessage());
    }
  }

  static int bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /** Names only: a secret's value must never reach a log line. */
  @Override
  public String toString() {
    return "AppEnv[config=" + config.keySet() + ", secrets=" + secrets.keySet() + "]";
  }
}
