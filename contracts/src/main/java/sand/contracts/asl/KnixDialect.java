package sand.contracts.asl;

import static sand.contracts.asl.AslText.show;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.Map;

/**
 * KNIX's dialect of Amazon States Language, as the validator sees it: a machine with {@code "SandDialect": "knix"}
 * (the KNIX door adds it) may carry {@code EnableCheckpoints}, {@code AllowImmediateMessages} and a Parallel's {@code WaitForNumBranches}, and its
 * error names are literal (no name is reserved); a Map's Parameters name the item value before any path into the
 * Map's input. The checks and messages of grainworker/asl_knix.py, which also
 * says what the dialect means at run time; docs/knix.md sets it beside the specification.
 */
public final class KnixDialect {
  /** The top-level field naming a machine's dialect. */
  public static final String FIELD = "SandDialect";
  /** Its one value. */
  public static final String KNIX = "knix";

  /** KNIX's top-level switches: accepted, no effect (grainworker/asl_knix.py says why). */
  private static final String[] SWITCHES = {"EnableCheckpoints", "AllowImmediateMessages"};

  private static final String NAME_PREFIX = "knix:";

  private static final String ITEM_VALUE = "$$.Map.Item.Value";

  private KnixDialect() {}

  /** Is {@code doc} a machine in KNIX's dialect? */
  public static boolean isKnix(JsonNode doc) {
    return doc != null && doc.isObject() && KNIX.equals(doc.path(FIELD).textValue());
  }

  /**
   * The machine the specification's checks see for {@code doc}: {@code doc} itself without {@code SandDialect};
   * in KNIX's dialect, its extensions checked here and removed and its error names made ordinary.
   */
  static JsonNode forValidation(JsonNode doc) {
    if (doc == null || !doc.isObject() || !doc.has(FIELD)) {
      return doc;
    }
    if (!KNIX.equals(doc.get(FIELD).textValue())) {
      throw new AslValidator.Invalid(FIELD + ": " + show(doc.get(FIELD))
          + " is not a dialect SAND knows; write \"" + KNIX + "\" or remove it");
    }
    ObjectNode out = (ObjectNode) doc.deepCopy();
    out.remove(FIELD);
    for (String key : SWITCHES) {
      JsonNode value = out.remove(key);
      if (value != null && !value.isBoolean()) {
        throw new AslValidator.Invalid(key + ": must be true or false, got " + show(value));
      }
    }
    machine(out, "");
    return out;
  }

  private static void machine(JsonNode machine, String prefix) {
    JsonNode states = machine.path("States");
    if (!states.isObject()) {
      return; // the specification's checks say what is wrong
    }
    for (Map.Entry<String, JsonNode> e : AslText.entries(states)) {
      if (!e.getValue().isObject()) {
        continue;
      }
      ObjectNode state = (ObjectNode) e.getValue();
      String where = prefix + "States." + e.getKey();
      for (String kind : new String[] {"Retry", "Catch"}) {
        for (JsonNode h : state.path(kind)) {
          if (h.path("ErrorEquals").isArray()) {
            ArrayNode names = (ArrayNode) h.get("ErrorEquals");
            for (int i = 0; i < names.size(); i++) {
              if (names.get(i).isTextual() && !names.get(i).asText().isEmpty()) {
                names.set(i, TextNode.valueOf(NAME_PREFIX + names.get(i).asText()));
              }
            }
          }
        }
      }
      String early = pathBeforeItemValue(state);
      if (early != null) {
        throw new AslValidator.Invalid(
            where + ".Parameters: " + show(early) + " comes before the entry for " + ITEM_VALUE
                + "; in KNIX's dialect a path into the Map's input must follow it");
      }
      if (state.has("WaitForNumBranches")
          && "Parallel".equals(state.path("Type").textValue())) {
        waitFor(
            state.remove("WaitForNumBranches"),
            state.path("Branches"),
            where + ".WaitForNumBranches");
      }
      JsonNode branches = state.path("Branches");
      for (int i = 0; branches.isArray() && i < branches.size(); i++) {
        machine(branches.get(i), where + ".Branches[" + i + "].");
      }
      for (String key : new String[] {"Iterator", "ItemProcessor"}) {
        if (state.has(key)) {
          machine(state.get(key), where + "." + key + ".");
        }
      }
    }
  }

  /**
   * The entry of a Map's Parameters with a path into the Map's input that comes before the item value's entry (KNIX
   * fails there: "item value is not set"), or null.
   */
  private static String pathBeforeItemValue(ObjectNode state) {
    if (!"Map".equals(state.path("Type").textValue())
        || !state.path("Parameters").isObject()) {
      return null;
    }
    for (Map.Entry<String, JsonNode> p : AslText.entries(state.get("Parameters"))) {
      String key = p.getKey();
      String value = p.getValue().textValue();
      if (key.endsWith(".$") && ITEM_VALUE.equals(value)) {
        return null;
      }
      if (key.endsWith(".$") && value != null && value.startsWith("$.")) {
        return key;
      }
    }
    return null;
  }

  private static void waitFor(JsonNode counts, JsonNode branches, String where) {
    int n = branches.isArray() ? branches.size() : 0;
    boolean ok = counts.isArray() && !counts.isEmpty();
    int last = 0;
    for (JsonNode c : ok ? counts : TextNode.valueOf("")) {
      ok &= c.isInt() && c.intValue() >= 1 && c.intValue() <= n && c.intValue() >= last;
      last = c.intValue();
    }
    if (!ok) {
      throw new AslValidator.Invalid(
          where + ": must be an ascending list of branch counts from 1 to the "
              + "number of Branches (" + n + "), e.g. [" + n + "]; got " + show(counts));
    }
  }
}
