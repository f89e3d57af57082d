package sand.common;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A component's settings, each declared once: key, type, default, check, one line of doc.
 *
 * <p>Values come from (highest first) explicit overrides, the environment ({@code SAND_<COMPONENT>_<KEY>},
 * key upper-cased with dots as underscores: {@code bus.port} of the host agent is
 * {@code SAND_HOSTAGENT_BUS_PORT}), then the default. A bad value fails at start-up, before any
 * socket opens, naming the key, the value and what it must be. {@link #toMarkdown()} renders the
 * reference table for docs/config.md, so the docs cannot drift from the code.
 */
public final class ConfigDef {

  /** Setting types. */
  public enum Type { STRING, INT, LONG, DOUBLE, BOOLEAN }

  /** One declared setting. */
  public record Key(String name, Type type, Object defaultValue, Predicate<Object> check,
                    String expectation, String doc) {}

  /** Thrown when a value does not parse or fails its check. */
  public static final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
      super(message);
    }
  }

  private final String component;
  private final Map<String, Key> keys = new LinkedHashMap<>();

  public ConfigDef(String component) {
    this.component = component;
  }

  public String component() {
    return component;
  }

  /** Declare a setting with no check beyond its type. */
  public ConfigDef define(String name, Type type, Object defaultValue, String doc) {
    return define(name, type, defaultValue, v -> true, "a " + type.name().toLowerCase(Locale.ROOT), doc);
  }

  /** Declare a setting whose value must pass {@code check}; {@code expectation} says what it must be. */
  public ConfigDef define(String name, Type type, Object defaultValue, Predicate<Object> check,
                          String expectation, String doc) {
    if (keys.containsKey(name)) {
      throw new IllegalArgumentException("setting " + name + " declared twice");
    }
    keys.put(name, new Key(name, type, defaultValue, check, expectation, doc));
    return this;
  }

  /** Check for an int in [min, max]. */
  public static Predicate<Object> between(long min, long max) {
    return v -> ((Number) v).longValue() >= min && ((Number) v).longValue() <= max;
  }

  /** The environment variable that overrides {@code name}. */
  public String envName(String name) {
    return ("SAND_" + component + "_" + name).toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  /** Parse from the process environment and explicit overrides (overrides win). */
  public Config parse(Map<String, String> overrides) {
    return parse(System.getenv(), overrides);
  }

  /** Parse from a given environment (tests) and explicit overrides (overrides win). */
  public Config parse(Map<String, String> env, Map<String, String> overrides) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (String o : overrides.keySet()) {
      if (!keys.containsKey(o)) {
        throw new ConfigException(component + ": unknown setting '" + o + "'; known: " + keys.keySet());
      }
    }
    for (Key k : keys.values()) {
      String raw = overrides.get(k.name());
      String source = k.name();
      if (raw == null && env.get(envName(k.name())) != null) {
        raw = env.get(envName(k.name()));
        source = envName(k.name());
      }
      Object value = raw == null ? k.defaultValue() : convert(k, source, raw);
      if (value != null && !k.check().test(value)) {
        throw new ConfigException(component + ": " + source + "=" + value + " is invalid: must be " + k.expectation());
      }
      values.put(k.name(), value);
    }
    return new Config(component, Collections.unmodifiableMap(values));
  }

  private Object convert(Key k, String source, String raw) {
    String s = raw.trim();
    try {
      return switch (k.type()) {
        case STRING -> raw;
        case INT -> Integer.parseInt(s);
        case LONG -> Long.parseLong(s);
        case DOUBLE -> {
          double d = Double.parseDouble(s);
          if (!Double.isFinite(d)) {
            throw new NumberFormatException();
          }
          yield d;
        }
        case BOOLEAN -> {
          if (!s.equalsIgnoreCase("true") && !s.equalsIgnoreCase("false")) {
            throw new NumberFormatException();
          }
          yield Boolean.parseBoolean(s);
        }
      };
    } catch (NumberFormatException e) {
      throw new ConfigException(component + ": " + source + "='" + raw + "' is not " + k.expectation());
    }
  }

  /** The reference table of this component's settings, in Markdown. */
  public String toMarkdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("| setting | environment | type | default | must be | what it does |\n");
    sb.append("|---|---|---|---|---|---|\n");
    for (Key k : keys.values()) {
      sb.append("| `").append(k.name()).append("` | `").append(envName(k.name())).append("` | ")
          .append(k.type().name().toLowerCase(Locale.ROOT)).append(" | `").append(k.defaultValue())
          .append("` | ").append(k.expectation()).append(" | ").append(k.doc()).append(" |\n");
    }
    return sb.toString();
  }

  public List<Key> keys() {
    return new ArrayList<>(keys.values());
  }

  /** Parsed, checked values of one component. */
  public record Config(String component, Map<String, Object> values) {
    public String getString(String key) {
      return (String) get(key);
    }

    public int getInt(String key) {
      return (Integer) get(key);
    }

    public long getLong(String key) {
      return ((Number) get(key)).longValue();
    }

    public double getDouble(String key) {
      return ((Number) get(key)).doubleValue();
    }

    public boolean getBoolean(String key) {
      return (Boolean) get(key);
    }

    private Object get(String key) {
      if (!values.containsKey(key)) {
        throw new IllegalArgumentException(component + ": no setting named " + key);
      }
      return values.get(key);
    }
  }
}
