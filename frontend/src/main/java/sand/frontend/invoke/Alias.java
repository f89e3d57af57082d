package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;
import sand.frontend.internal.Json;

/**
 * A named pointer at one of an application's versions (docs/api.md "Aliases"), optionally with a second version
 * taking a share of the requests (a canary): {@code POST /app/{app}@{alias}} runs {@code version}, or {@code canary}
 * with probability {@code weight}. Stored as the application's record of kind {@value #KIND}, id = the name, value
 * = {@code {"version": 3, "weights": {"4": 0.1}}} (Lambda's routing config: at most one extra version).
 *
 * @param canary the second version, 0 for none
 * @param weight the share of requests {@code canary} takes, 0..1 (0 when there is no canary)
 */
public record Alias(String name, int version, int canary, double weight) {
  public static final String KIND = "alias";
  /** Starts with a letter, so an alias never reads as a version number ({@code app@3}). */
  public static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,31}");

  public static final String NAME_RULE = "1-32 of a-z 0-9 _ -, starting with a letter";
  /** Most aliases of one application (each is read with the application on the request path). */
  public static final int MAX_PER_APP = 16;

  /** Throws IllegalArgumentException (the API's 400) when the alias cannot be. */
  public Alias {
    checkName(name);
    if (version < 1 || canary < 0) {
      throw new IllegalArgumentException("versions are 1, 2, 3, ...");
    }
    if (canary == version) {
      throw new IllegalArgumentException(
          "the canary version " + canary + " is the alias's version: name another one");
    }
    if (!(weight >= 0 && weight <= 1) || (canary == 0 && weight != 0)) {
      throw new IllegalArgumentException(
          "a weight is a share of the requests from 0 to 1, given with the version that takes it");
    }
  }

  public static String checkName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "alias name '" + (name == null ? "" : shorten(name)) + "' is invalid: " + NAME_RULE);
    }
    return name;
  }

  /** The versions this alias may send a request to. */
  public int[] versions() {
    return canary == 0 ? new int[] {version} : new int[] {version, canary};
  }

  /** The version for one request, given {@code r} uniform in [0, 1) (a random number; tests pass their own). */
  public int choose(double r) {
    return canary != 0 && r < weight ? canary : version;
  }

  public ObjectNode json() {
    ObjectNode o = Json.object().put("name", name).put("version", version);
    ObjectNode w = o.putObject("weights");
    if (canary != 0) {
      w.put(Integer.toString(canary), weight);
    }
    return o;
  }

  public byte[] encode() {
    ObjectNode o = json();
    o.remove("name");
    return Json.bytes(o);
  }

  /**
   * The alias {@code name} from a request body or a stored record: {@code {"version": n, "weights": {"m": w}}}
   * (weights optional, at most one entry). Throws IllegalArgumentException with what is wrong.
   */
  public static Alias of(String name, JsonNode body) {
    if (body == null
        || !body.isObject()
        || !body.path("version").canConvertToInt()
        || !body.path("version").isIntegralNumber()) {
      throw new IllegalArgumentException(
          "the body must be {\"version\": n} or {\"version\": n, \"weights\": {\"m\": 0.1}}");
    }
    JsonNode weights = body.path("weights");
    if (weights.isMissingNode() || weights.isNull() || weights.isEmpty() && weights.isObject()) {
      return new Alias(name, body.path("version").asInt(), 0, 0);
    }
    if (!weights.isObject() || weights.size() != 1) {
      throw new IllegalArgumentException(
          "weights names one more version and its share, e.g. {\"4\": 0.1}");
    }
    Iterator<Map.Entry<String, JsonNode>> it = weights.fields();
    Map.Entry<String, JsonNode> e = it.next();
    int canary;
    try {
      canary = Integer.parseInt(e.getKey());
    } catch (NumberFormatException x) {
      throw new IllegalArgumentException(
          "weights' key '" + shorten(e.getKey()) + "' is not a version number");
    }
    if (!e.getValue().isNumber()) {
      throw new IllegalArgumentException("the weight of version " + canary + " is not a number");
    }
    return new Alias(name, body.path("version").asInt(), canary, e.getValue().asDouble());
  }

  /** A stored alias record's value. */
  public static Alias decode(String name, byte[] value) {
    try {
      return of(name, Json.MAPPER.readTree(value));
    } catch (IOException e) {
      throw new IllegalStateException("alias record " + name + " is not JSON", e);
    }
  }

  private static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
