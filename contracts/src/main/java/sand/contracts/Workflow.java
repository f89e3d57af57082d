package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A workflow description (paper §4.1; the shape KNIX uses), validated with the rules of contracts/rules.json and
 * the same messages as grainworker/workflow.py (both are tested on contracts/src/test/resources/workflow-cases.json): {@code {"name", "entry", "functions": [{"name", "next", "potentialNext",
 * "resource"}]}} with "end" as the exit.
 *
 * <p>A description with {@code StartAt} and {@code States} is Amazon States Language: {@link AslWorkflow}.
 *
 * @param grains grain name → the code (resource) it runs, in the workflow's order ("" for an ASL built-in state)
 */
public record Workflow(String name, String entry, Map<String, String> grains) {
  public static final String END = Rules.WORKFLOW_END;
  private static final Pattern NAME = Pattern.compile(Rules.WORKFLOW_NAME_PATTERN);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> FIELDS = Set.copyOf(Rules.WORKFLOW_FUNCTION_FIELDS);

  /** The resources (uploaded grains) the workflow runs, each once (an ASL workflow's built-in states run none). */
  public Set<String> resources() {
    Set<String> out = new LinkedHashSet<>(grains.values());
    out.remove("");
    return out;
  }

  /**
   * The grain of an ASL machine's top-level state {@code state} (where a trigger may start it), when no other state's
   * name comes out the same after {@link AslWorkflow}'s renaming (else that one has a {@code _2}).
   */
  public static String stateGrain(String state) {
    return AslWorkflow.base(state);
  }

  /** Whether the description is Amazon States Language (StartAt + States) rather than SAND's native form. */
  public static boolean isAsl(JsonNode doc) {
    return AslWorkflow.isAsl(doc);
  }

  /** A workflow description that cannot run; the message says what is wrong and where. */
  public static final class Invalid extends IllegalArgumentException {
    Invalid(String message) {
      super(message);
    }
  }

  /**
   * A session function (docs/sessions.md): {@code "sessionFunction": true}, optionally with its
   * {@code "sessionFunctionParameters"} object (heartbeat settings), which only a session function may have.
   */
  private static void checkSession(JsonNode f, String where) {
    JsonNode flag = f.get("sessionFunction");
    if (flag != null && !flag.isBoolean()) {
      throw bad(where + ".sessionFunction " + repr(flag) + " must be true or false");
    }
    JsonNode params = f.get("sessionFunctionParameters");
    if (params != null && !params.isObject()) {
      throw bad(
          where + ".sessionFunctionParameters must be an object, e.g. "
              + "{\"heartbeat_method\": \"function\", \"heartbeat_function\": \"hb\", \"heartbeat_interval_ms\": 10000}");
    }
    if (params != null && (flag == null || !flag.asBoolean())) {
      throw bad(where + ".sessionFunctionParameters is only for a session function: add "
          + "\"sessionFunction\": true or remove it");
    }
  }

  /** Parse and validate a workflow given as JSON text; throws {@link Invalid}. */
  public static Workflow parse(String json) {
    JsonNode doc;
    try {
      doc = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw bad("workflow is not valid JSON: " + e.getOriginalMessage());
    }
    return parse(doc);
  }

  /** Validate; throws {@link Invalid}, whose message says what is wrong and where. */
  public static Workflow parse(JsonNode doc) {
    if (doc == null || !doc.isObject()) {
      throw bad("workflow must be a JSON object with name, entry and functions");
    }
    if (AslWorkflow.isAsl(doc)) {
      return AslWorkflow.parse(doc);
    }
    JsonNode name = doc.get("name");
    if (name == null || !name.isTextual() || !NAME.matcher(name.asText()).matches()) {
      throw bad("workflow name " + repr(name)
          + " is missing or invalid: use letters, digits, '_', '.', '-'");
    }
    JsonNode dialect = doc.get(sand.contracts.asl.KnixDialect.FIELD);
    if (dialect != null && !sand.contracts.asl.KnixDialect.KNIX.equals(dialect.textValue())) {
      // the message of the ASL side (KnixDialect): one field, one rule, for both formats
      throw bad(sand.contracts.asl.KnixDialect.FIELD + ": " + repr(dialect)
          + " is not a dialect SAND knows; write \"knix\" or remove it");
    }
    JsonNode functions = doc.get("functions");
    if (functions == null || !functions.isArray() || functions.isEmpty()) {
      throw bad("workflow 'functions' must be a non-empty list");
    }
    Map<String, String> grains = new LinkedHashMap<>();
    Map<String, List<List<String>>> targets = new LinkedHashMap<>();
    for (int i = 0; i < functions.size(); i++) {
      String where = "functions[" + i + "]";
      JsonNode f = functions.get(i);
      if (!f.isObject()) {
        throw bad(where + " must be an object with at least 'name'");
      }
      Set<String> unknown = new TreeSet<>();
      f.fieldNames().forEachRemaining(k -> {
        if (!FIELDS.contains(k)) {
          unknown.add(k);
        }
      });
      if (!unknown.isEmpty()) {
        throw bad(where + " has unknown field(s) " + unknown);
      }
      JsonNode g = f.get("name");
      if (g == null
          || !g.isTextual()
          || !NAME.matcher(g.asText()).matches()
          || g.asText().equals(END)) {
        throw bad(where + ".name " + repr(g) + " is invalid: letters, digits, '_', '.', '-', not '"
            + END + "'");
      }
      String gname = g.asText();
      if (grains.containsKey(gname)) {
        throw bad(where + ": duplicate grain name '" + gname + "'");
      }
      JsonNode r = f.get("resource");
      String resource = r == null || r.isNull() ? "" : r.isTextual() ? r.asText() : null;
      if (resource == null || (!resource.isEmpty() && !NAME.matcher(resource).matches())) {
        throw bad(where + ".resource " + repr(r) + " is invalid");
      }
      grains.put(gname, resource.isEmpty() ? gname : resource);
      checkSession(f, where);
      targets.put(
          gname,
          List.of(
              names(f.get("next"), where + ".next"),
              names(f.get("potentialNext"), where + ".potentialNext")));
    }
    JsonNode entry = doc.get("entry");
    if (entry == null || !entry.isTextual() || entry.asText().isEmpty()) {
      throw bad("workflow 'entry' is missing: name the grain that receives the request");
    }
    if (!grains.containsKey(entry.asText())) {
      throw bad("entry '" + entry.asText() + "' is not a grain of the workflow; grains: "
          + new TreeSet<>(grains.keySet()));
    }
    int i = 0;
    for (var e : targets.entrySet()) {
      String[] kinds = {"next", "potentialNext"};
      for (int k = 0; k < 2; k++) {
        for (String t : e.getValue().get(k)) {
          if (!t.equals(END) && !grains.containsKey(t)) {
            throw bad("functions[" + i + "] (" + e.getKey() + ")." + kinds[k]
                + " names unknown grain '" + t + "'");
          }
        }
      }
      i++;
    }
    if (!reachesEnd(entry.asText(), targets)) {
      throw bad(NO_END.replace("{entry}", entry.asText()));
    }
    return new Workflow(name.asText(), entry.asText(), grains);
  }

  /** A workflow none of whose paths from the entry reaches {@code end} would never answer a request. */
  static final String NO_END =
      "no grain reachable from entry '{entry}' leads to 'end' (through next or "
          + "potentialNext): no request would ever be answered; give the grain whose return value is the answer "
          + "\"next\": [\"end\"]";

  private static boolean reachesEnd(String entry, Map<String, List<List<String>>> targets) {
    Deque<String> todo = new ArrayDeque<>(List.of(entry));
    Set<String> seen = new HashSet<>(todo);
    while (!todo.isEmpty()) {
      for (List<String> kind : targets.get(todo.pop())) {
        for (String t : kind) {
          if (t.equals(END)) {
            return true;
          }
          if (seen.add(t)) {
            todo.push(t);
          }
        }
      }
    }
    return false;
  }

  private static List<String> names(JsonNode v, String where) {
    List<String> out = new ArrayList<>();
    if (v == null || v.isNull()) {
      return out;
    }
    if (!v.isArray()) {
      throw bad(where + " must be a list of grain names");
    }
    for (JsonNode n : v) {
      if (!n.isTextual()) {
        throw bad(where + " must be a list of grain names");
      }
      out.add(n.asText());
    }
    return out;
  }

  private static String repr(JsonNode n) {
    return n == null ? "null" : n.toString();
  }

  private static Invalid bad(String message) {
    return new Invalid(message);
  }
}
