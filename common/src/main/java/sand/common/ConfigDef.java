package sand.common;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;

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
  public enum Type {
    STRING,
    INT,
    LONG,
    DOUBLE,
    BOOLEAN
  }

  /** One declared setting; {@link #expectation()} is what its check says a value must be. */
  public record Key(String name, Type type, Object defaultValue, Check check, String doc) {
    public String expectation() {
      return check.mustBe(type);
    }
  }

  /**
   * What a value must be: the test and the words for it in one object (as Kafka's {@code ConfigDef.Validator}s
   * carry their own description), so the "must be" of an error message and of docs/config.md is never typed
   * beside a check it could drift from. Ranges write their own bounds.
   */
  public interface Check {
    boolean test(Object value);

    /** What a value of {@code type} must be, as it ends "... is invalid: must be ___". */
    String mustBe(Type type);

    /** A check of one kind whose words are fixed (a form, not a range). */
    static Check of(Predicate<Object> test, String mustBe) {
      return new Described(test, type -> mustBe);
    }
  }

  /** A check from its test and its words for a type: every check here is one. */
  private record Described(Predicate<Object> accepts, Function<Type, String> words)
      implements Check {
    @Override
    public boolean test(Object value) {
      return accepts.test(value);
    }

    @Override
    public String mustBe(Type type) {
      return words.apply(type);
    }
  }

  /** No check beyond the type: "a string", "an int", ... */
  public static final Check ANY = new Described(v -> true, ConfigDef::noun);

  /** host:port (a Kafka bootstrap server, a Cassandra contact point). */
  public static final Check HOST_PORT = matches("[^\\s:,]+:\\d{1,5}", "host:port");

  /** One or more host:port, comma-separated (Kafka bootstrap servers). */
  public static final Check HOST_PORTS =
      matches("[^\\s:,]+:\\d{1,5}(,[^\\s:,]+:\\d{1,5})*", "host:port[,host:port...]");

  /** A TCP port; 0 lets the system pick a free one. */
  public static final Check PORT = Check.of(between(0, 65_535)::test, "a port in [0, 65535]");

  /** A Cassandra keyspace name (CQL: letters, digits, _, at most 48). */
  public static final Check KEYSPACE = matches(
      "[a-z][a-z0-9_]{0,47}", "a lower-case letter, then up to 47 lower-case letters, digits or _");

  /** An absolute file path: a relative one would depend on the directory the process happened to start in. */
  public static final Check ABSOLUTE_PATH = matches("/[^\\x00]*", "an absolute path");

  /** A Unix socket's path: absolute, and short enough for sockaddr_un (108 bytes with the terminating NUL). */
  public static final Check SOCKET_PATH = Check.of(
      v -> ((String) v).startsWith("/")
          && ((String) v).getBytes(StandardCharsets.UTF_8).length <= 107,
      "an absolute path of at most 107 bytes");

  /** A credential or key a person chooses: long enough not to be guessed. */
  public static final int SECRET_MIN_CHARS = 16;

  public static final Check SECRET = Check.of(
      v -> ((String) v).length() >= SECRET_MIN_CHARS,
      "at least " + SECRET_MIN_CHARS + " characters");

  /** An int, long or double in [min, max]. */
  public static Check between(long min, long max) {
    return new Described(
        v -> ((Number) v).doubleValue() >= min && ((Number) v).doubleValue() <= max, type -> {
          if (max == Integer.MAX_VALUE || max == Long.MAX_VALUE) { // no upper bound but the type's
            return min == 1
                ? "a positive " + noun(type).substring(noun(type).indexOf(' ') + 1)
                : noun(type) + " >= " + min;
          }
          return noun(type) + " in [" + min + ", " + max + "]";
        });
  }

  /** A number in (min, max]: more than {@code min} (a timeout of 0 is no timeout), at most {@code max}. */
  public static Check above(double min, double max) {
    return new Described(
        v -> ((Number) v).doubleValue() > min && ((Number) v).doubleValue() <= max,
        type -> noun(type) + " in (" + plain(min) + ", " + plain(max) + "]");
  }

  /** A string matching {@code regex} (whole), described as {@code form}. */
  public static Check matches(String regex, String form) {
    Pattern p = Pattern.compile(regex);
    return Check.of(v -> p.matcher((String) v).matches(), form);
  }

  /** A string that is not blank, described as {@code what} ("a host name or IP address"). */
  public static Check nonBlank(String what) {
    return Check.of(v -> !((String) v).isBlank(), what);
  }

  /** One of {@code values}. */
  public static Check oneOf(String... values) {
    List<String> all = List.of(values);
    return Check.of(all::contains, String.join(" or ", all));
  }

  /** Empty (which means {@code meaning}) or what {@code check} accepts. */
  public static Check emptyOr(String meaning, Check check) {
    return new Described(
        v -> ((String) v).isEmpty() || check.test(v),
        type -> "empty (" + meaning + ") or " + check.mustBe(type));
  }

  /** {@code value} itself (which means {@code meaning}) or what {@code check} accepts. */
  public static Check or(long value, String meaning, Check check) {
    return new Described(
        v -> ((Number) v).longValue() == value || check.test(v),
        type -> check.mustBe(type) + ", or " + value + " (" + meaning + ")");
  }

  private static String noun(Type type) {
    return switch (type) {
      case STRING -> "a string";
      case INT -> "an int";
      case LONG -> "a long";
      case DOUBLE -> "a number";
      case BOOLEAN -> "true or false";
    };
  }

  /** A number as a person writes it: 30, not 30.0; 0.5 stays 0.5 (bounds and values in messages and docs). */
  public static String plain(double d) {
    return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
  }

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
    return define(name, type, defaultValue, ANY, doc);
  }

  /** Declare a setting whose value must pass {@code check} (which also says what it must be). */
  public ConfigDef define(String name, Type type, Object defaultValue, Check check, String doc) {
    if (keys.containsKey(name)) {
      throw new IllegalArgumentException("setting " + name + " declared twice");
    }
    keys.put(name, new Key(name, type, defaultValue, check, doc));
    return this;
  }

  /** The environment variable that overrides {@code name}. */
  public String envName(String name) {
    return ("SAND_" + component + "_" + name)
        .toUpperCase(Locale.ROOT)
        .replace('.', '_')
        .replace('-', '_');
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
        throw new ConfigException(
            component + ": unknown setting '" + o + "'; known: " + keys.keySet());
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
        throw new ConfigException(
            component + ": " + source + "=" + value + " is invalid: must be " + k.expectation());
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
      throw new ConfigException(
          component + ": " + source + "='" + raw + "' is not " + k.expectation());
    }
  }

  /**
   * Environment variables that look like settings of {@code defs} ({@code SAND_<COMPONENT>_...}) but name none,
   * with the nearest declared name: a misspelt variable would otherwise be ignored without a word. Names in
   * {@code knownElsewhere} (read by the deploy scripts, not the process) are not reported.
   */
  public static List<String> unknownVariables(
      Map<String, String> env, List<ConfigDef> defs, Set<String> knownElsewhere) {
    List<String> declared = new ArrayList<>();
    List<String> prefixes = new ArrayList<>();
    for (ConfigDef d : defs) {
      prefixes.add(("SAND_" + d.component + "_").toUpperCase(Locale.ROOT));
      d.keys.keySet().forEach(k -> declared.add(d.envName(k)));
    }
    List<String> out = new ArrayList<>();
    for (String var : new TreeSet<>(env.keySet())) {
      if (prefixes.stream().noneMatch(var::startsWith)
          || declared.contains(var)
          || knownElsewhere.contains(var)) {
        continue;
      }
      out.add(var + " is not a setting"
          + Suggest.nearest(var, declared)
              .map(d -> " (did you mean " + d + "?)")
              .orElse("") + "; it is ignored");
    }
    return out;
  }

  /** The reference table of this component's settings, in Markdown. */
  public String toMarkdown() {
    StringBuilder sb = new StringBuilder();
    sb.append("| setting | environment | type | default | must be | what it does |\n");
    sb.append("|---|---|---|---|---|---|\n");
    for (Key k : keys.values()) {
      sb.append("| `")
          .append(k.name())
          .append("` | `")
          .append(envName(k.name()))
          .append("` | ")
          .append(k.type().name().toLowerCase(Locale.ROOT))
          .append(" | `")
          .append(k.defaultValue())
          .append("` | ")
          .append(k.expectation())
          .append(" | ")
          .append(k.doc())
          .append(" |\n");
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
