package sand.contracts;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import sand.contracts.asl.AslValidator;

/**
 * Amazon States Language workflows as SAND grains (docs/workflows.md): every state of the machine, and of its
 * Parallel branches and Map iterators, is a grain named after the state; a Task's grain runs the uploaded grain its
 * {@code Resource} names, every other state SAND's built-in ASL code (no resource: {@code ""}). The sandbox's runtime
 * (grainworker/asl.py) does what each state says and picks the next grain per event, so every grain may send to
 * every other: there is no static {@code next} to check here.
 *
 * <p>The grain names are grainworker/workflow.py's, character for character (both are tested on
 * contracts/src/test/resources/asl-grains.json): the state's name with every character outside
 * {@code [A-Za-z0-9_.-]} as '_' ({@code s_} in front when it does not start with a letter or digit, at most 100
 * characters), nested states prefixed with their Parallel's grain and {@code .b<i>.}, or their Map's grain and
 * {@code .it.}; a name already taken (or "end") gets {@code _2}, {@code _3}, ... Names are given machine by
 * machine, each machine's states in document order before the machines nested in them.
 */
final class AslWorkflow {
  private static final Pattern OUTSIDE = Pattern.compile("[^A-Za-z0-9_.-]");
  private static final Pattern NAME = Pattern.compile(Rules.WORKFLOW_NAME_PATTERN);
  static final int MAX_BASE = 100;

  private AslWorkflow() {}

  /** KNIX's rule: {@code StartAt} and a {@code States} object. */
  static boolean isAsl(JsonNode doc) {
    return doc != null
        && doc.isObject()
        && doc.has("StartAt")
        && doc.path("States").isObject();
  }

  static Workflow parse(JsonNode doc) {
    try {
      AslValidator.validate(doc);
    } catch (AslValidator.Invalid e) {
      throw new Workflow.Invalid(e.getMessage());
    }
    Map<String, String> grains = new LinkedHashMap<>();
    String entry = flatten(doc, "", "", new HashSet<>(), grains);
    JsonNode n = doc.get("name");
    String name =
        n != null && n.isTextual() && NAME.matcher(n.asText()).matches() ? n.asText() : "asl";
    return new Workflow(name, entry, grains);
  }

  /** Name the grains of one machine and the machines nested in it; returns the grain of its StartAt. */
  private static String flatten(
      JsonNode machine,
      String prefix,
      String where,
      Set<String> taken,
      Map<String, String> grains) {
    JsonNode states = machine.path("States");
    if (!states.isObject() || states.isEmpty()) {
      throw bad(where + "States: must be an object of at least one state");
    }
    JsonNode start = machine.path("StartAt");
    if (!start.isTextual() || !states.has(start.asText())) {
      throw bad(where + "StartAt: "
          + (start.isTextual()
              ? "\"" + start.asText() + "\" is not a state of States"
              : "must name the first state"));
    }
    Map<String, String> names = new LinkedHashMap<>();
    List<Map.Entry<String, JsonNode>> order = new ArrayList<>();
    states.fields().forEachRemaining(order::add);
    for (Map.Entry<String, JsonNode> s : order) {
      String grain = unique(prefix + base(s.getKey()), taken);
      if (!NAME.matcher(grain).matches()) {
        throw bad(where + "States." + s.getKey() + ": nested too deep for a grain name ("
            + grain.length() + " characters; at most 128)");
      }
      names.put(s.getKey(), grain);
      JsonNode state = s.getValue();
      String type = state.path("Type").asText("");
      String resource = "";
      if (type.equals("Task")) {
        JsonNode r = state.path("Resource");
        if (!r.isTextual() || !NAME.matcher(r.asText()).matches()) {
          throw bad(where + "States." + s.getKey()
              + ".Resource: must name an uploaded grain (letters, digits, " + "'_', '.', '-'), got "
              + (r.isMissingNode() ? "nothing" : r.toString()));
        }
        resource = r.asText();
      }
      grains.put(grain, resource);
    }
    for (Map.Entry<String, JsonNode> s : order) {
      JsonNode state = s.getValue();
      String here = where + "States." + s.getKey() + ".";
      String type = state.path("Type").asText("");
      if (type.equals("Parallel")) {
        JsonNode branches = state.path("Branches");
        if (!branches.isArray() || branches.isEmpty()) {
          throw bad(here + "Branches: must be a list of at least one state machine");
        }
        for (int i = 0; i < branches.size(); i++) {
          flatten(
              branches.get(i),
              names.get(s.getKey()) + ".b" + i + ".",
              here + "Branches[" + i + "].",
              taken,
              grains);
        }
      } else if (type.equals("Map")) {
        String field = state.has("ItemProcessor") ? "ItemProcessor" : "Iterator";
        flatten(
            state.path(field), names.get(s.getKey()) + ".it.", here + field + ".", taken, grains);
      }
    }
    return names.get(start.asText());
  }

  /** A state's name as a grain name's last part. */
  static String base(String state) {
    String s = OUTSIDE.matcher(state).replaceAll("_");
    if (s.isEmpty() || !Character.isLetterOrDigit(s.charAt(0)) || s.charAt(0) > 127) {
      s = "s_" + s;
    }
    return s.length() > MAX_BASE ? s.substring(0, MAX_BASE) : s;
  }

  private static String unique(String name, Set<String> taken) {
    String n = name;
    for (int k = 2; taken.contains(n) || n.equals(Workflow.END); k++) {
      n = name + "_" + k;
    }
    taken.add(n);
    return n;
  }

  private static Workflow.Invalid bad(String message) {
    return new Workflow.Invalid(message);
  }
}
