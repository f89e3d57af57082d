package sand.contracts;

import static sand.common.ConfigDef.plain;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The defaults and rules both languages apply, read from {@code contracts/rules.json} (in this jar as
 * {@code sand/contracts/rules.json}); the grain worker reads the same file (grainworker/rules.py). Nothing here
 * is typed twice: {@link ApplicationSettings} and {@link Workflow} take their numbers and words from it.
 */
public final class Rules {
  /** One application setting: its default and bounds (null = unbounded on that side). */
  public record Setting(
      String key, double defaultValue, Double min, Double minExclusive, Double max, String doc) {
    public boolean accepts(double v) {
      return (min == null || v >= min)
          && (minExclusive == null || v > minExclusive)
          && (max == null || v <= max);
    }

    /** What a value must be, in the words of the error message: "in (0, 86400]", "in [1, 10000]", ">= 8". */
    public String mustBe() {
      if (max == null) {
        return minExclusive != null ? "> " + plain(minExclusive) : ">= " + plain(min);
      }
      return "in " + (minExclusive != null ? "(" + plain(minExclusive) : "[" + plain(min)) + ", "
          + plain(max) + "]";
    }
  }

  private static final JsonNode DOC = load();

  /** The application settings, in the file's order. */
  public static final Map<String, Setting> APPLICATION_SETTINGS = settings();
  /**
   * Every key of an application's {@code settings} the API accepts, in the file's order: the numeric
   * {@link #APPLICATION_SETTINGS} and then {@code application_setting_keys} (env, hosts, request_timeout_s).
   */
  public static final List<String> APPLICATION_SETTING_KEYS = settingKeys();

  /** The rules of {@code settings.env} and of secrets (names, sizes, counts). */
  public record EnvRules(
      String namePattern,
      String reservedPrefix,
      List<String> reservedNames,
      int maxNames,
      int maxNameChars,
      int maxValueBytes,
      int maxTotalBytes,
      int maxSecrets) {}

  public static final EnvRules APPLICATION_ENV = envRules();

  /** The workflow's exit: a grain's next may name it; no grain may be called so. */
  public static final String WORKFLOW_END = DOC.path("workflow").path("end").asText();
  /** What workflow, grain and resource names must match. */
  public static final String WORKFLOW_NAME_PATTERN =
      DOC.path("workflow").path("name_pattern").asText();
  /** The fields a workflow's function may have. */
  public static final List<String> WORKFLOW_FUNCTION_FIELDS =
      strings(DOC.path("workflow").path("function_fields"));

  /** Triggerable buckets: a write of key K into bucket B is an entry K of the writer's map BUCKET_MAP_PREFIX + B. */
  public static final String BUCKET_MAP_PREFIX =
      DOC.path("triggerable_buckets").path("map_prefix").asText();
  /** What a triggerable bucket's name must match. */
  public static final String BUCKET_NAME_PATTERN =
      DOC.path("triggerable_buckets").path("name_pattern").asText();
  /** The {@code trigger_type} of the event a bucket write starts (KNIX's). */
  public static final String BUCKET_TRIGGER_TYPE =
      DOC.path("triggerable_buckets").path("trigger_type").asText();

  private Rules() {}

  private static JsonNode load() {
    try (InputStream in = Rules.class.getResourceAsStream("rules.json")) {
      if (in == null) {
        throw new IllegalStateException("sand/contracts/rules.json is missing from the classpath");
      }
      return new ObjectMapper().readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException("reading sand/contracts/rules.json", e);
    }
  }

  private static Map<String, Setting> settings() {
    Map<String, Setting> out = new LinkedHashMap<>();
    DOC.path("application_settings").fields().forEachRemaining(e -> {
      JsonNode s = e.getValue();
      out.put(
          e.getKey(),
          new Setting(
              e.getKey(),
              s.path("default").asDouble(),
              num(s, "min"),
              num(s, "min_exclusive"),
              num(s, "max"),
              s.path("doc").asText()));
    });
    return Collections.unmodifiableMap(out);
  }

  private static List<String> settingKeys() {
    List<String> out = new ArrayList<>(APPLICATION_SETTINGS.keySet());
    DOC.path("application_setting_keys").fieldNames().forEachRemaining(out::add);
    return List.copyOf(out);
  }

  private static EnvRules envRules() {
    JsonNode e = DOC.path("application_env");
    return new EnvRules(
        e.path("name_pattern").asText(),
        e.path("reserved_prefix").asText(),
        strings(e.path("reserved_names")),
        e.path("max_names").asInt(),
        e.path("max_name_chars").asInt(),
        e.path("max_value_bytes").asInt(),
        e.path("max_total_bytes").asInt(),
        DOC.path("application_secrets").path("max_secrets").asInt());
  }

  private static Double num(JsonNode n, String key) {
    return n.has(key) ? n.get(key).asDouble() : null;
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(v -> out.add(v.asText()));
    return List.copyOf(out);
  }
}
