package sand.contracts;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Validation of an Amazon States Language state machine, the Java port of {@code validate} in grainworker/asl.py
 * (both are tested on contracts/src/test/resources/asl-cases.json): the same checks in the same order and the same
 * messages, which start with where the fault is ({@code States.<State>.<Field>: ...}, nested machines prefixed
 * with their place, top-level fields bare) and say what to write instead. The frontend refuses such a machine at
 * upload.
 *
 * <p>Paths, intrinsic function calls, timestamps and StringMatches patterns are read by hand-written scanners that
 * accept exactly what asl.py's regular expressions accept (Python's {@code \s} and {@code \d} are Unicode, as here).
 * Values in messages are shown as Python's {@code repr} shows them, and "did you mean" suggestions are difflib's
 * {@code get_close_matches}, so that both sides say the same.
 */
final class AslValidator {
  static final List<String> STATE_TYPES =
      List.of("Task", "Choice", "Pass", "Wait", "Succeed", "Fail", "Parallel", "Map");
  /** The spec's Appendix A, plus the names AWS Step Functions adds. */
  static final Set<String> KNOWN_ERRORS = Set.of(
      "States.ALL", "States.HeartbeatTimeout", "States.Timeout", "States.TaskFailed", "States.Permissions",
      "States.ResultPathMatchFailure", "States.ParameterPathFailure", "States.BranchFailed",
      "States.NoChoiceMatched", "States.IntrinsicFailure", "States.ExceedToleratedFailureThreshold",
      "States.ItemReaderFailed", "States.ResultWriterFailed", "States.Runtime", "States.DataLimitExceeded");

  private static final Set<String> COMMON = Set.of("Type", "Comment", "QueryLanguage");
  private static final Set<String> IO = Set.of("InputPath", "OutputPath");
  private static final Set<String> FLOW = Set.of("Next", "End");
  private static final Set<String> RESULT = Set.of("Parameters", "ResultSelector", "ResultPath", "Retry", "Catch");
  /** The spec's table of the fields each state type may have. */
  private static final Map<String, Set<String>> FIELDS = new LinkedHashMap<>();
  private static final Set<String> ALL_FIELDS = new HashSet<>();

  static {
    FIELDS.put("Task", union(List.of(COMMON, IO, FLOW, RESULT), "Resource", "TimeoutSeconds", "TimeoutSecondsPath",
        "HeartbeatSeconds", "HeartbeatSecondsPath", "Credentials"));
    FIELDS.put("Parallel", union(List.of(COMMON, IO, FLOW, RESULT), "Branches"));
    FIELDS.put("Map", union(List.of(COMMON, IO, FLOW, RESULT), "Iterator", "ItemProcessor", "ItemsPath",
        "ItemSelector", "MaxConcurrency", "MaxConcurrencyPath"));
    FIELDS.put("Pass", union(List.of(COMMON, IO, FLOW), "Parameters", "ResultPath", "Result"));
    FIELDS.put("Wait", union(List.of(COMMON, IO, FLOW), "Seconds", "SecondsPath", "Timestamp", "TimestampPath"));
    FIELDS.put("Choice", union(List.of(COMMON, IO), "Choices", "Default"));
    FIELDS.put("Succeed", union(List.of(COMMON, IO)));
    FIELDS.put("Fail", union(List.of(COMMON), "Error", "Cause", "ErrorPath", "CausePath"));
    FIELDS.values().forEach(ALL_FIELDS::addAll);
  }

  private static final Set<String> UNSUPPORTED = Set.of("ItemReader", "ItemBatcher", "ResultWriter",
      "ToleratedFailurePercentage", "Label", "ToleratedFailurePercentagePath", "ToleratedFailureCount",
      "ToleratedFailureCountPath", "Arguments", "Output", "Assign");
  private static final Map<String, Set<String>> HANDLER_FIELDS = Map.of(
      "Retrier", Set.of("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds",
          "JitterStrategy", "Comment"),
      "Catcher", Set.of("ErrorEquals", "Next", "ResultPath", "Comment"));
  private static final Map<String, Set<String>> MACHINE_FIELDS = Map.of(
      // "name" at the top: SAND's, the workflow's name (docs/workflows.md); the rest the specification's
      "top", Set.of("StartAt", "States", "Comment", "Version", "TimeoutSeconds", "QueryLanguage", "name"),
      "branch", Set.of("StartAt", "States", "Comment"),
      "processor", Set.of("StartAt", "States", "Comment", "ProcessorConfig"));
  private static final List<String> WAIT_FIELDS = List.of("Seconds", "SecondsPath", "Timestamp", "TimestampPath");
  /**
   * How a field is checked wherever it appears (machine, state, Retrier, Catcher, Choice Rule): an Integer is the
   * least integer allowed; "path"/"result" may be null; "result" is a Reference Path outside the context object;
   * "ref" a Reference Path; "dynamic" a Reference Path or an intrinsic call.
   */
  private static final Map<String, Object> CHECKS = Map.ofEntries(
      Map.entry("TimeoutSeconds", 1), Map.entry("HeartbeatSeconds", 1), Map.entry("Seconds", 0),
      Map.entry("MaxConcurrency", 0), Map.entry("IntervalSeconds", 1), Map.entry("MaxAttempts", 0),
      Map.entry("MaxDelaySeconds", 1), Map.entry("Comment", "str"), Map.entry("Version", "str"),
      Map.entry("Error", "str"), Map.entry("Cause", "str"), Map.entry("End", "bool"),
      Map.entry("Credentials", "object"), Map.entry("ProcessorConfig", "object"), Map.entry("InputPath", "path"),
      Map.entry("OutputPath", "path"), Map.entry("ResultPath", "result"), Map.entry("TimeoutSecondsPath", "ref"),
      Map.entry("HeartbeatSecondsPath", "ref"), Map.entry("SecondsPath", "ref"), Map.entry("TimestampPath", "ref"),
      Map.entry("ItemsPath", "ref"), Map.entry("MaxConcurrencyPath", "ref"), Map.entry("ErrorPath", "dynamic"),
      Map.entry("CausePath", "dynamic"), Map.entry("Parameters", "template"), Map.entry("ResultSelector", "template"),
      Map.entry("ItemSelector", "template"), Map.entry("Timestamp", "timestamp"), Map.entry("BackoffRate", "rate"),
      Map.entry("JitterStrategy", "jitter"), Map.entry("QueryLanguage", "jsonpath"));
  /** Pairs of fields that exclude each other; a message names the second. */
  private static final List<List<String>> EXCLUSIVE = List.of(
      List.of("TimeoutSeconds", "TimeoutSecondsPath"), List.of("HeartbeatSeconds", "HeartbeatSecondsPath"),
      List.of("Error", "ErrorPath"), List.of("Cause", "CausePath"), List.of("MaxConcurrency", "MaxConcurrencyPath"),
      List.of("ItemProcessor", "Iterator"), List.of("Parameters", "ItemSelector"));

  /** A comparison operator: its family (String, Numeric, Timestamp, Boolean, Matches, Is); is its operand a Path? */
  private record Op(String family, boolean isPath) {}

  private static final Map<String, Op> OPS = new LinkedHashMap<>();

  static {
    for (String family : List.of("String", "Numeric", "Timestamp")) {
      for (String name : List.of("Equals", "LessThan", "GreaterThan", "LessThanEquals", "GreaterThanEquals")) {
        OPS.put(family + name, new Op(family, false));
        OPS.put(family + name + "Path", new Op(family, true));
      }
    }
    OPS.put("BooleanEquals", new Op("Boolean", false));
    OPS.put("BooleanEqualsPath", new Op("Boolean", true));
    OPS.put("StringMatches", new Op("Matches", false));
    for (String kind : List.of("Null", "Present", "Numeric", "String", "Boolean", "Timestamp")) {
      OPS.put("Is" + kind, new Op("Is", false));
    }
  }

  private static final Set<String> RULE_FIELDS = Set.of("And", "Or", "Not", "Variable", "Next", "Comment");
  private static final Map<String, String> DESCRIBE = Map.of("String", "a string", "Numeric", "a number",
      "Boolean", "true or false", "Timestamp", "an RFC 3339 timestamp such as \"2016-03-14T01:59:00Z\"");
  /**
   * The intrinsic functions and their argument kinds (s string, i integer, n number, a array, o object, b boolean,
   * * anything; an uppercase kind is optional, "+" means any number of further arguments).
   */
  private static final Map<String, String> INTRINSICS = new LinkedHashMap<>();

  static {
    String[][] table = {{"States.Format", "s+"}, {"States.StringToJson", "s"}, {"States.JsonToString", "*"},
        {"States.Array", "+"}, {"States.ArrayPartition", "ai"}, {"States.ArrayContains", "a*"},
        {"States.ArrayRange", "iii"}, {"States.ArrayGetItem", "ai"}, {"States.ArrayLength", "a"},
        {"States.ArrayUnique", "a"}, {"States.Base64Encode", "s"}, {"States.Base64Decode", "s"},
        {"States.Hash", "ss"}, {"States.JsonMerge", "oob"}, {"States.MathRandom", "iiI"}, {"States.MathAdd", "nn"},
        {"States.StringSplit", "ss"}, {"States.UUID", ""}};
    for (String[] row : table) {
      INTRINSICS.put(row[0], row[1]);
    }
  }

  /** Intrinsic calls nested deeper than this are refused (Python would fail with a RecursionError). */
  static final int MAX_CALL_DEPTH = 100;
  /** CPython's int() refuses decimal strings with more digits than this (sys.get_int_max_str_digits()). */
  private static final int MAX_INT_DIGITS = 4300;

  /** State name → where it is defined: names are unique in the whole machine, branches and iterators included. */
  private final Map<String, String> names = new HashMap<>();

  private AslValidator() {}

  /** Validate an ASL document; throws {@link Workflow.Invalid} naming the place ({@code States.<State>.<Field>}). */
  static void validate(JsonNode doc) {
    new AslValidator().machine(doc, "", "top");
  }

  // ---------------------------------------------------------------------------------------------- machines

  private void machine(JsonNode doc, String prefix, String kind) {
    if (doc == null || !doc.isObject()) {
      throw bad((prefix.isEmpty() ? "StartAt" : prefix)
          + ": a state machine must be a JSON object with StartAt and States");
    }
    Set<String> allowed = MACHINE_FIELDS.get(kind);
    for (String key : keys(doc)) {
      if (!allowed.contains(key)) {
        throw bad(at(prefix, key) + ": unknown field" + suggest(key, allowed) + "; remove it");
      }
    }
    JsonNode start = doc.get("StartAt");
    JsonNode states = doc.get("States");
    if (start == null || !start.isTextual()) {
      throw bad(at(prefix, "StartAt") + ": missing or not a string; write \"StartAt\": \"<name of the first state>\"");
    }
    if (states == null || !states.isObject() || states.isEmpty()) {
      throw bad(at(prefix, "States") + ": must be a non-empty object of states, e.g. \"States\": {\""
          + start.asText() + "\": {\"Type\": \"Pass\", \"End\": true}}");
    }
    if (!states.has(start.asText())) {
      throw bad(at(prefix, "StartAt") + ": " + repr(start.asText()) + " is not a state of States"
          + suggest(start.asText(), keys(states)));
    }
    checkFields(doc, prefix);
    for (Map.Entry<String, JsonNode> e : entries(states)) {
      String name = e.getKey();
      String where = at(prefix, "States." + name);
      if (names.containsKey(name)) {
        throw bad(where + ": the name " + repr(name) + " is already used at " + names.get(name) + "; state names "
            + "must be unique in the whole machine, branches and iterators included - rename one");
      }
      if (name.isEmpty() || name.codePointCount(0, name.length()) > 80) {
        throw bad(where + ": a state name must have 1 to 80 characters; shorten it");
      }
      names.put(name, where);
      state(e.getValue(), where, states);
    }
    String first = start.asText();
    Set<String> reached = new HashSet<>(List.of(first));
    List<String> todo = new ArrayList<>(List.of(first));
    while (!todo.isEmpty()) {
      for (String target : targets(states.get(todo.remove(todo.size() - 1)))) {
        if (reached.add(target)) {
          todo.add(target);
        }
      }
    }
    for (String name : keys(states)) {
      if (!reached.contains(name)) {
        throw bad(at(prefix, "States." + name) + ": unreachable from StartAt " + repr(first) + "; add a Next, "
            + "Default or Catch leading to it, or remove it");
      }
    }
    boolean terminal = false;
    for (JsonNode s : states) {
      String type = s.get("Type").asText();
      terminal |= s.path("End").isBoolean() && s.get("End").booleanValue() || type.equals("Succeed")
          || type.equals("Fail");
    }
    if (!terminal) {
      throw bad(at(prefix, "States") + ": no terminal state; give one state \"End\": true or add a Succeed state");
    }
  }

  /** The states a (valid) state may go to next: Next, Choices[].Next, Default, Catch[].Next. */
  private static List<String> targets(JsonNode state) {
    List<String> out = new ArrayList<>();
    if (state.has("Next")) {
      out.add(state.get("Next").asText());
    }
    for (JsonNode rule : state.path("Choices")) {
      out.add(rule.get("Next").asText());
    }
    if (state.has("Default")) {
      out.add(state.get("Default").asText());
    }
    for (JsonNode catcher : state.path("Catch")) {
      out.add(catcher.get("Next").asText());
    }
    return out;
  }

  private static void next(JsonNode target, String where, JsonNode states) {
    if (isNone(target)) {
      throw bad(where + ": missing; write \"Next\": \"<state name>\"");
    }
    if (!target.isTextual() || !states.has(target.asText())) {
      throw bad(where + ": " + repr(target) + " is not a state of this machine" + suggest(str(target), keys(states))
          + " (states in a Parallel branch or Map iterator only reach each other); one of: "
          + String.join(", ", keys(states)));
    }
  }

  // ------------------------------------------------------------------------------------------------ states

  private void state(JsonNode state, String where, JsonNode states) {
    if (!state.isObject()) {
      throw bad(where + ".Type: a state must be a JSON object, e.g. {\"Type\": \"Pass\", \"End\": true}");
    }
    JsonNode type = state.get("Type");
    if (type == null || !type.isTextual() || !FIELDS.containsKey(type.asText())) {
      String what = isNone(type) ? "missing"
          : repr(type) + " is not a state type" + suggest(str(type), STATE_TYPES);
      throw bad(where + ".Type: " + what + "; write one of " + String.join(", ", STATE_TYPES));
    }
    String kind = type.asText();
    Set<String> allowed = FIELDS.get(kind);
    for (String key : keys(state)) {
      if (FLOW.contains(key) && !allowed.contains(key)) {
        String why = kind.equals("Choice") ? "continues through Choices[].Next and Default" : "ends its machine";
        throw bad(where + "." + key + ": not allowed, a " + kind + " state " + why + "; remove " + repr(key));
      }
      if (UNSUPPORTED.contains(key)) {
        throw bad(where + "." + key + ": " + repr(key) + " is not supported by SAND's ASL; remove it");
      }
      if (!allowed.contains(key)) {
        boolean known = ALL_FIELDS.contains(key);
        throw bad(where + "." + key + ": " + (known ? "not allowed in a " + kind + " state"
            : "unknown field" + suggest(key, allowed)) + "; remove it");
      }
    }
    checkFields(state, where);
    if (allowed.contains("Next")) {
      boolean end = state.path("End").booleanValue();
      if (state.has("Next") && end) {
        throw bad(where + ".End: a state has either \"Next\" or \"End\": true, not both; remove one");
      }
      if (!state.has("Next") && !end) {
        throw bad(where + ".Next: missing; write \"Next\": \"<state name>\" or \"End\": true");
      }
      if (state.has("Next")) {
        next(state.get("Next"), where + ".Next", states);
      }
    }
    for (String key : List.of("Retry", "Catch")) {
      if (state.has(key)) {
        handlers(state.get(key), where + "." + key, states);
      }
    }
    switch (kind) {
      case "Task" -> checkTask(state, where);
      case "Wait" -> checkWait(state, where);
      case "Choice" -> checkChoice(state, where, states);
      case "Parallel" -> checkParallel(state, where);
      case "Map" -> checkMap(state, where);
      default -> { } // Pass, Succeed and Fail: their fields are all checked by checkFields
    }
  }

  private static void checkTask(JsonNode state, String where) {
    JsonNode resource = state.get("Resource");
    if (resource == null || !resource.isTextual() || strip(resource.asText()).isEmpty()) {
      String what = isNone(resource) ? "missing" : "must be a non-empty string, got " + repr(resource);
      throw bad(where + ".Resource: " + what + "; write the SAND grain to call, e.g. \"Resource\": \"resize\"");
    }
    if (state.has("TimeoutSeconds")) {
      BigInteger timeout = state.get("TimeoutSeconds").bigIntegerValue();
      BigInteger heartbeat = state.has("HeartbeatSeconds") ? state.get("HeartbeatSeconds").bigIntegerValue()
          : BigInteger.ZERO;
      if (heartbeat.compareTo(timeout) >= 0) {
        throw bad(where + ".HeartbeatSeconds: must be smaller than TimeoutSeconds (" + timeout + "); lower it or "
            + "raise TimeoutSeconds");
      }
    }
  }

  private static void checkWait(JsonNode state, String where) {
    List<String> given = WAIT_FIELDS.stream().filter(state::has).toList();
    if (given.size() != 1) {
      throw bad(where + "." + (given.isEmpty() ? "Seconds" : given.get(1)) + ": a Wait state takes exactly one of "
          + String.join(", ", WAIT_FIELDS) + "; " + (given.isEmpty() ? "add e.g. \"Seconds\": 10" : "keep one"));
    }
  }

  private void checkParallel(JsonNode state, String where) {
    JsonNode branches = state.get("Branches");
    if (branches == null || !branches.isArray() || branches.isEmpty()) {
      throw bad(where + ".Branches: must be a non-empty array of machines, e.g. [{\"StartAt\": \"A\", "
          + "\"States\": {\"A\": {\"Type\": \"Pass\", \"End\": true}}}]");
    }
    for (int i = 0; i < branches.size(); i++) {
      machine(branches.get(i), where + ".Branches[" + i + "]", "branch");
    }
  }

  private void checkMap(JsonNode state, String where) {
    String key = state.has("ItemProcessor") ? "ItemProcessor" : "Iterator";
    if (!state.has(key)) {
      throw bad(where + ".ItemProcessor: missing; a Map state needs \"ItemProcessor\" (or the older "
          + "\"Iterator\"): {\"StartAt\": ..., \"States\": {...}}");
    }
    machine(state.get(key), where + "." + key, "processor");
  }

  // ------------------------------------------------------------------------------------------- Retry/Catch

  private static void handlers(JsonNode items, String where, JsonNode states) {
    String kind = where.endsWith("Retry") ? "Retrier" : "Catcher";
    String example = "{\"ErrorEquals\": [\"States.ALL\"]" + (kind.equals("Catcher") ? ", \"Next\": \"Recover\"}" : "}");
    boolean objects = items.isArray();
    for (JsonNode h : items) {
      objects &= h.isObject();
    }
    if (!objects) {
      throw bad(where + ": must be an array of " + kind + "s, e.g. [" + example + "]");
    }
    Set<String> allowed = HANDLER_FIELDS.get(kind);
    for (int i = 0; i < items.size(); i++) {
      JsonNode handler = items.get(i);
      String w = where + "[" + i + "]";
      for (String key : keys(handler)) {
        if (!allowed.contains(key)) {
          throw bad(w + "." + key + ": unknown " + kind + " field" + suggest(key, allowed) + "; remove it");
        }
      }
      JsonNode errors = handler.get("ErrorEquals");
      boolean ok = errors != null && errors.isArray() && !errors.isEmpty();
      for (JsonNode name : ok ? errors : List.<JsonNode>of()) {
        ok &= name.isTextual() && !name.asText().isEmpty();
      }
      if (!ok) {
        throw bad(w + ".ErrorEquals: must be a non-empty array of error names, e.g. [\"States.ALL\"]");
      }
      boolean all = false;
      for (JsonNode node : errors) {
        String name = node.asText();
        if (name.startsWith("States.") && !KNOWN_ERRORS.contains(name)) {
          throw bad(w + ".ErrorEquals: " + repr(name) + " is not a predefined error" + suggest(name, KNOWN_ERRORS)
              + "; names starting with 'States.' are reserved");
        }
        all |= name.equals("States.ALL");
      }
      if (all && (errors.size() > 1 || i < items.size() - 1)) {
        throw bad(w + ".ErrorEquals: States.ALL must appear alone and in the last " + kind + "; move the other "
            + "names to an earlier " + kind + ", or this " + kind + " to the end");
      }
      checkFields(handler, w);
      if (kind.equals("Catcher")) {
        next(handler.get("Next"), w + ".Next", states);
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ Choice

  private static void checkChoice(JsonNode state, String where, JsonNode states) {
    JsonNode rules = state.get("Choices");
    if (rules == null || !rules.isArray() || rules.isEmpty()) {
      throw bad(where + ".Choices: must be a non-empty array of Choice Rules, e.g. [{\"Variable\": \"$.x\", "
          + "\"NumericEquals\": 1, \"Next\": \"One\"}]");
    }
    for (int i = 0; i < rules.size(); i++) {
      rule(rules.get(i), where + ".Choices[" + i + "]", true, states);
    }
    if (state.has("Default")) {
      next(state.get("Default"), where + ".Default", states);
    }
  }

  private static void rule(JsonNode rule, String where, boolean top, JsonNode states) {
    if (!rule.isObject()) {
      throw bad(where + ": a Choice Rule must be an object, e.g. {\"Variable\": \"$.x\", \"IsNull\": true}");
    }
    if (top) {
      if (!rule.has("Next")) {
        throw bad(where + ".Next: missing; a top-level Choice Rule needs \"Next\": \"<state name>\"");
      }
      next(rule.get("Next"), where + ".Next", states);
    } else if (rule.has("Next")) {
      throw bad(where + ".Next: a rule inside And/Or/Not must not have Next; put Next on the top-level rule");
    }
    for (String key : keys(rule)) {
      if (!OPS.containsKey(key) && !RULE_FIELDS.contains(key)) {
        throw bad(where + "." + key + ": unknown comparison operator" + suggest(key, OPS.keySet()) + "; use one of "
            + "the spec's operators (StringEquals, NumericLessThan, IsPresent, ...) or And/Or/Not");
      }
    }
    if (rule.has("Comment")) {
      checkField("Comment", rule.get("Comment"), where);
    }
    List<String> combinators = List.of("And", "Or", "Not").stream().filter(rule::has).toList();
    List<String> ops = keys(rule).stream().filter(OPS::containsKey).toList();
    if (!combinators.isEmpty()) {
      String key = combinators.get(0);
      if (combinators.size() > 1 || !ops.isEmpty() || rule.has("Variable")) {
        throw bad(where + "." + key + ": a rule is either one of And/Or/Not or a Variable with one comparison, "
            + "not both; nest the parts in separate rules");
      }
      if (key.equals("Not")) {
        rule(rule.get("Not"), where + ".Not", false, states);
        return;
      }
      JsonNode subs = rule.get(key);
      if (!subs.isArray() || subs.isEmpty()) {
        throw bad(where + "." + key + ": must be a non-empty array of Choice Rules");
      }
      for (int i = 0; i < subs.size(); i++) {
        rule(subs.get(i), where + "." + key + "[" + i + "]", false, states);
      }
      return;
    }
    if (!rule.has("Variable")) {
      throw bad(where + ".Variable: missing; write \"Variable\": \"$.field\" and one comparison operator, "
          + "or use And/Or/Not");
    }
    checkPath(rule.get("Variable"), where + ".Variable", false, true);
    if (ops.size() != 1) {
      throw bad(where + ": " + (ops.isEmpty() ? "no" : "more than one") + " comparison operator; a rule takes "
          + "exactly one, e.g. \"StringEquals\": \"x\" (combine several with And)");
    }
    String op = ops.get(0);
    JsonNode value = rule.get(op);
    String w = where + "." + op;
    Op spec = OPS.get(op);
    String family = spec.family();
    String kind = family.equals("Is") ? "Boolean" : family.equals("Matches") ? "String" : family;
    if (spec.isPath()) {
      checkPath(value, w, false, true);
    } else if (!typeOk(kind, value)) {
      String hint = family.equals("Is") || family.equals("Matches") ? ""
          : "; to compare with another field use " + op + "Path";
      throw bad(w + ": must be " + DESCRIBE.get(kind) + ", got " + repr(value) + hint);
    } else if (family.equals("Matches")) {
      String problem = wildcardProblem(value.asText());
      if (problem != null) {
        throw bad(w + ": " + problem + "; write \\\\* for a literal star and \\\\\\\\ for a backslash");
      }
    }
  }

  private static boolean typeOk(String kind, JsonNode value) {
    return switch (kind) {
      case "String" -> value.isTextual();
      case "Numeric" -> value.isNumber();
      case "Boolean" -> value.isBoolean();
      case "Timestamp" -> isTimestamp(value);
      default -> throw new IllegalArgumentException(kind);
    };
  }

  /** StringMatches: '*' matches any characters; only '\*' and '\\' may follow a backslash. Null when fine. */
  static String wildcardProblem(String pattern) {
    for (int i = 0; i < pattern.length(); i++) {
      if (pattern.charAt(i) == '\\') {
        if (i + 1 < pattern.length() && (pattern.charAt(i + 1) == '*' || pattern.charAt(i + 1) == '\\')) {
          i++;
        } else {
          return "open escape: only \\* and \\\\ may follow a backslash";
        }
      }
    }
    return null;
  }

  // ------------------------------------------------------------------------------------------------ fields

  /** Check the fields of {@code obj} that CHECKS knows, and the pairs of fields that exclude each other. */
  private static void checkFields(JsonNode obj, String where) {
    for (Map.Entry<String, JsonNode> e : entries(obj)) {
      checkField(e.getKey(), e.getValue(), where);
    }
    for (List<String> pair : EXCLUSIVE) {
      if (obj.has(pair.get(0)) && obj.has(pair.get(1))) {
        throw bad(where + "." + pair.get(1) + ": cannot be used together with " + pair.get(0) + "; keep one of them");
      }
    }
  }

  private static void checkField(String key, JsonNode value, String where) {
    Object check = CHECKS.get(key);
    String w = where.isEmpty() ? key : where + "." + key;
    if (check == null) {
      return;
    }
    if (check instanceof Integer least) {
      if (!(value.isIntegralNumber() && value.bigIntegerValue().compareTo(BigInteger.valueOf(least)) >= 0)) {
        throw bad(w + ": must be an integer >= " + least + ", got " + repr(value));
      }
      return;
    }
    switch ((String) check) {
      case "str" -> require(value.isTextual(), w + ": must be a string, got " + repr(value));
      case "bool" -> require(value.isBoolean(), w + ": must be true or false, got " + repr(value));
      case "object" -> require(value.isObject(), w + ": must be a JSON object, got " + repr(value));
      case "path", "result" -> {
        if (!value.isNull()) {
          checkPath(value, w, !check.equals("path"), !check.equals("result"));
        }
      }
      case "ref" -> checkPath(value, w, true, true);
      case "dynamic" -> checkDynamic(value, w, true);
      case "template" -> checkTemplate(value, w, true);
      case "timestamp" -> require(isTimestamp(value), w + ": " + repr(value) + " is not an RFC 3339 timestamp; "
          + "write e.g. \"2016-03-14T01:59:00Z\"");
      case "rate" -> require(atLeastOne(value), w + ": must be a number >= 1.0, got " + repr(value));
      case "jitter" -> require(value.isTextual() && (value.asText().equals("FULL") || value.asText().equals("NONE")),
          w + ": must be \"FULL\" or \"NONE\", got " + repr(value));
      case "jsonpath" -> require(value.isTextual() && value.asText().equals("JSONPath"),
          w + ": only \"JSONPath\" is supported (not JSONata); remove the field");
      default -> throw new IllegalStateException(key);
    }
  }

  private static boolean atLeastOne(JsonNode value) {
    if (!value.isNumber()) {
      return false;
    }
    if (value.isIntegralNumber()) {
      return value.bigIntegerValue().signum() > 0;
    }
    if (value.isBigDecimal()) {
      return value.decimalValue().compareTo(BigDecimal.ONE) >= 0;
    }
    return value.doubleValue() >= 1.0;
  }

  // ------------------------------------------------------------------------------------------------- paths

  private static void checkPath(JsonNode value, String where, boolean ref, boolean contextOk) {
    String kind = ref ? "Reference Path" : "Path";
    if (!value.isTextual()) {
      throw bad(where + ": must be a " + kind + " (a string beginning with \"$\", e.g. \"$.items\"), got "
          + repr(value));
    }
    String path = value.asText();
    Parsed parsed;
    try {
      parsed = parsePath(path);
    } catch (Problem p) {
      throw bad(where + ": " + repr(path) + " is not a valid " + kind + " (" + p.getMessage() + "); write e.g. "
          + "\"$.a.b\", \"$.list[0]\" or \"$['a b']\"");
    }
    if (parsed.context() && !contextOk) {
      throw bad(where + ": " + repr(path) + " must not begin with \"$$\" (the context object is read-only); "
          + "write a path into the state input such as \"$.result\"");
    }
    if (ref && !parsed.definite()) {
      throw bad(where + ": " + repr(path) + " must be a Reference Path selecting a single node (no [*], [a,b], "
          + "[a:b] or .*); write e.g. \"$.items\" or \"$.items[0]\"");
    }
  }

  /** A parsed Path: whether it applies to the context object ($$) and whether it selects one node at most. */
  record Parsed(boolean context, boolean definite) {}

  /** One step of a Path: where it ends, whether it is definite, and the integers it holds (checked by the caller). */
  private record Token(int end, boolean definite, List<String> integers) {}

  /** Parse a Path: asl.py's {@code _parse_path}, which says what is wrong. */
  static Parsed parsePath(String path) throws Problem {
    if (!path.startsWith("$")) {
      throw new Problem("a path must begin with '$'");
    }
    boolean context = path.startsWith("$$");
    boolean definite = true;
    int i = context ? 2 : 1;
    while (i < path.length()) {
      Token t = token(path, i);
      if (t == null) {
        throw new Problem(pathProblem(path, i));
      }
      for (String integer : t.integers()) {
        checkInt(integer);
      }
      definite &= t.definite();
      i = t.end();
    }
    return new Parsed(context, definite);
  }

  /**
   * One step of a Path at {@code i}, as asl.py's {@code _TOKEN} reads it, or null: {@code .name} (a backslash escapes
   * any character), {@code .*} (before '.', '[' or the end), {@code ['a']}, {@code ["a", 'b']}, {@code [*]},
   * {@code [1:3]}, {@code [0]}, {@code [0, -1]}.
   */
  private static Token token(String s, int i) {
    int n = s.length();
    if (i >= n) {
      return null;
    }
    if (s.charAt(i) == '.') {
      int j = i + 1;
      if (j < n && s.charAt(j) == '*' && (atEnd(s, j + 1) || s.charAt(j + 1) == '.' || s.charAt(j + 1) == '[')) {
        return new Token(j + 1, false, List.of());
      }
      int k = j;
      while (k < n) {
        int c = s.codePointAt(k);
        if (c == '\\') {
          if (k + 1 < n && s.charAt(k + 1) != '\n') {
            k += 1 + Character.charCount(s.codePointAt(k + 1));
            continue;
          }
          break;
        }
        if (".[]@?,:*'\"()".indexOf(c) >= 0) {
          break;
        }
        k += Character.charCount(c);
      }
      return k > j ? new Token(k, true, List.of()) : null;
    }
    if (s.charAt(i) != '[') {
      return null;
    }
    int j = skipSpace(s, i + 1);
    // ['name'] or ['a', "b"]
    int k = quoted(s, j);
    if (k >= 0) {
      int count = 1;
      while (true) {
        int p = skipSpace(s, k);
        if (p < n && s.charAt(p) == ',') {
          int q = quoted(s, skipSpace(s, p + 1));
          if (q >= 0) {
            k = q;
            count++;
            continue;
          }
        }
        break;
      }
      int end = close(s, k);
      if (end >= 0) {
        return new Token(end, count == 1, List.of());
      }
    }
    // [*]
    if (j < n && s.charAt(j) == '*') {
      int end = close(s, j + 1);
      if (end >= 0) {
        return new Token(end, false, List.of());
      }
    }
    // [lo:hi]
    int colon = skipSpace(s, digits(s, sign(s, j)));
    if (colon < n && s.charAt(colon) == ':') {
      int hi = digits(s, sign(s, skipSpace(s, colon + 1)));
      int end = close(s, hi);
      if (end >= 0) {
        List<String> parts = new ArrayList<>();
        for (String part : List.of(s.substring(j, colon), s.substring(colon + 1, hi))) {
          if (!strip(part).isEmpty()) {
            parts.add(part);
          }
        }
        return new Token(end, false, parts);
      }
    }
    // [0] or [0, -1]
    List<String> parts = new ArrayList<>();
    int p = j;
    int e = digits(s, sign(s, p));
    if (e > sign(s, p)) {
      parts.add(s.substring(p, e));
      while (true) {
        int q = skipSpace(s, e);
        if (q < n && s.charAt(q) == ',') {
          int r = skipSpace(s, q + 1);
          int f = digits(s, sign(s, r));
          if (f > sign(s, r)) {
            parts.add(s.substring(q + 1, f));
            e = f;
            continue;
          }
        }
        break;
      }
      int end = close(s, e);
      if (end >= 0) {
        return new Token(end, parts.size() == 1, parts);
      }
    }
    return null;
  }

  /** Python's {@code int(part)} for a part read by token(): refuses "-" and more than 4300 digits. */
  private static void checkInt(String part) throws Problem {
    String t = strip(part);
    String digits = t.startsWith("-") ? t.substring(1) : t;
    if (digits.isEmpty()) {
      throw new Problem("invalid literal for int() with base 10: " + repr(part));
    }
    int count = digits.codePointCount(0, digits.length());
    if (count > MAX_INT_DIGITS) {
      throw new Problem(tooManyDigits(count));
    }
  }

  private static String tooManyDigits(int count) {
    return "Exceeds the limit (" + MAX_INT_DIGITS + " digits) for integer string conversion: value has " + count
        + " digits; use sys.set_int_max_str_digits() to increase the limit";
  }

  /** Python's {@code $} without MULTILINE: the end of the text, or just before a newline that ends it. */
  private static boolean atEnd(String s, int p) {
    return p == s.length() || p == s.length() - 1 && s.charAt(p) == '\n';
  }

  /** The end of a quoted name ('...' or "...", a backslash escapes any character but a newline), or -1. */
  private static int quoted(String s, int i) {
    int n = s.length();
    if (i >= n || s.charAt(i) != '\'' && s.charAt(i) != '"') {
      return -1;
    }
    char quote = s.charAt(i);
    int k = i + 1;
    while (k < n) {
      int c = s.codePointAt(k);
      if (c == quote) {
        return k + 1;
      }
      if (c == '\\') {
        if (k + 1 >= n || s.charAt(k + 1) == '\n') {
          return -1;
        }
        k += 1 + Character.charCount(s.codePointAt(k + 1));
      } else {
        k += Character.charCount(c);
      }
    }
    return -1;
  }

  /** After optional white space, a ']': the position after it, or -1. */
  private static int close(String s, int i) {
    int p = skipSpace(s, i);
    return p < s.length() && s.charAt(p) == ']' ? p + 1 : -1;
  }

  private static int sign(String s, int i) {
    return i < s.length() && s.charAt(i) == '-' ? i + 1 : i;
  }

  /** After the (Unicode, like Python's \d) decimal digits at {@code i}. */
  private static int digits(String s, int i) {
    while (i < s.length() && Character.getType(s.codePointAt(i)) == Character.DECIMAL_DIGIT_NUMBER) {
      i += Character.charCount(s.codePointAt(i));
    }
    return i;
  }

  private static int skipSpace(String s, int i) {
    while (i < s.length() && isSpace(s.codePointAt(i))) {
      i += Character.charCount(s.codePointAt(i));
    }
    return i;
  }

  private static String pathProblem(String path, int i) {
    String rest = path.substring(i);
    if (rest.startsWith("..")) {
      return "recursive descent '..' is not supported";
    }
    if (rest.startsWith("[?") || rest.startsWith("[(")) {
      return "filter and script expressions [?(...)] are not supported";
    }
    int at = rest.startsWith(".") ? 1 : 0;
    if (at < rest.length()) {
      String c = new String(Character.toChars(rest.codePointAt(at)));
      if ("]@?,:*'\"()\\".contains(c)) {
        return repr(c) + " in a field name must be escaped with a backslash or the name written as ['name']";
      }
    }
    return "cannot read " + repr(rest) + "; write .name, ['name'], [0], [-1], [*], [0,1] or [1:3]";
  }

  // --------------------------------------------------------------------------------------------- templates

  private static void checkDynamic(JsonNode value, String where, boolean ref) {
    if (!value.isTextual() || value.asText().startsWith("$")) {
      checkPath(value, where, ref, true);
      return;
    }
    try {
      parseIntrinsic(value.asText());
    } catch (Problem p) {
      throw bad(where + ": " + repr(value) + " is not a valid intrinsic function call (" + p.getMessage() + "); "
          + "write e.g. \"States.Format('Hello {}', $.name)\"");
    }
  }

  private static void checkTemplate(JsonNode template, String where, boolean top) {
    if (top && !template.isObject()) {
      throw bad(where + ": must be a JSON object (a Payload Template), e.g. {\"id.$\": \"$.order.id\"}");
    }
    if (template.isObject()) {
      Set<String> seen = new HashSet<>();
      for (Map.Entry<String, JsonNode> e : entries(template)) {
        String key = e.getKey();
        boolean dynamic = key.endsWith(".$");
        String name = dynamic ? key.substring(0, key.length() - 2) : key;
        if (!seen.add(name)) {
          throw bad(where + "." + key + ": field " + repr(name) + " appears twice once '.$' is stripped; keep one");
        }
        if (dynamic) {
          checkDynamic(e.getValue(), where + "." + key, false);
        } else {
          checkTemplate(e.getValue(), where + "." + key, false);
        }
      }
    } else if (template.isArray()) {
      for (int i = 0; i < template.size(); i++) {
        checkTemplate(template.get(i), where + "[" + i + "]", false);
      }
    }
  }

  // ------------------------------------------------------------------------------------- intrinsic functions

  /** Check an intrinsic function call such as {@code States.Format('{}', $.x)}: asl.py's {@code _parse_intrinsic}. */
  static void parseIntrinsic(String text) throws Problem {
    int pos = parseCall(text, 0, 0);
    String after = text.substring(pos);
    if (!strip(after).isEmpty()) {
      throw new Problem("unexpected text after the call: " + repr(after));
    }
  }

  /**
   * Parse {@code States.Name(arg, ...)} at {@code pos}; returns the position after it. Arguments: 'strings'
   * (escapes \' \{ \} \\), numbers, null, true, false, Paths and nested calls.
   */
  private static int parseCall(String text, int pos, int depth) throws Problem {
    if (depth >= MAX_CALL_DEPTH) {
      throw new Problem("intrinsic function calls nested more than " + MAX_CALL_DEPTH + " deep");
    }
    int n = text.length();
    int start = skipSpace(text, pos);
    int end = callName(text, start);
    int open = skipSpace(text, end);
    if (end == start || open >= n || text.charAt(open) != '(') {
      throw new Problem("expected an intrinsic function call such as States.Format('{}', $.x)");
    }
    String name = text.substring(start, end);
    pos = open + 1;
    if (!INTRINSICS.containsKey(name)) {
      throw new Problem("unknown intrinsic function " + repr(name) + suggest(name, INTRINSICS.keySet()));
    }
    int args = 0;
    int p = skipSpace(text, pos);
    boolean closed = p < n && text.charAt(p) == ')';
    if (closed) {
      pos = p + 1;
    }
    while (!closed) {
      int a = skipSpace(text, pos);
      int q;
      if ((q = quoted(text, a)) >= 0 && text.charAt(a) == '\'') {
        String inner = text.substring(a + 1, q - 1);
        for (int k = 0; k < inner.length(); k++) {
          if (inner.charAt(k) == '\\') {
            if (k + 1 < inner.length() && "'{}\\".indexOf(inner.charAt(k + 1)) >= 0) {
              k++;
            } else {
              throw new Problem("open escape in a string: only \\' \\{ \\} and \\\\ are allowed");
            }
          }
        }
        pos = q;
      } else if ((q = literal(text, a)) >= 0) {
        checkJsonLiteral(text.substring(a, q));
        pos = q;
      } else if (a < n && text.charAt(a) == '$') {
        q = a + 1;
        if (q < n && text.charAt(q) == '$') {
          q++;
        }
        for (Token t = token(text, q); t != null; t = token(text, q)) {
          q = t.end();
        }
        parsePath(rstrip(text.substring(a, q)));
        pos = q;
      } else if ((q = callName(text, a)) > a && skipSpace(text, q) < n && text.charAt(skipSpace(text, q)) == '(') {
        pos = parseCall(text, a, depth + 1);
      } else {
        String rest = strip(text.substring(pos));
        throw new Problem(rest.startsWith("'") ? "unterminated string: close it with '" : "cannot read " + repr(rest));
      }
      args++;
      int sep = skipSpace(text, pos);
      if (sep >= n || text.charAt(sep) != ',' && text.charAt(sep) != ')') {
        throw new Problem("expected ',' or ')' after argument " + args + " of " + name + ", not "
            + repr(text.substring(pos)));
      }
      closed = text.charAt(sep) == ')';
      pos = sep + 1;
    }
    String kinds = INTRINSICS.get(name);
    int low = (int) kinds.chars().filter(c -> Character.isLowerCase(c) || c == '*').count();
    boolean unbounded = kinds.contains("+");
    int high = kinds.length();
    if (args < low || !unbounded && args > high) {
      String count = !unbounded && low == high ? "" + low : unbounded ? low + "+" : low + "-" + high;
      throw new Problem(name + " takes " + count + " argument(s), got " + args);
    }
    return pos;
  }

  /** After a function name ([A-Za-z0-9._]+) at {@code i}; {@code i} itself when there is none. */
  private static int callName(String s, int i) {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_')) {
        break;
      }
      i++;
    }
    return i;
  }

  /**
   * A literal argument at {@code i} (a number with Unicode digits, as Python's \d, or null, true, false) followed
   * by optional white space and ',' or ')': the position after it, or -1.
   */
  private static int literal(String s, int i) {
    int end = -1;
    for (String word : List.of("null", "true", "false")) {
      if (s.startsWith(word, i)) {
        end = i + word.length();
      }
    }
    if (end < 0) {
      int k = digits(s, sign(s, i));
      if (k == sign(s, i)) {
        return -1;
      }
      if (k < s.length() && s.charAt(k) == '.' && digits(s, k + 1) > k + 1) {
        k = digits(s, k + 1);
      }
      if (k < s.length() && (s.charAt(k) == 'e' || s.charAt(k) == 'E')) {
        int m = k + 1 < s.length() && (s.charAt(k + 1) == '+' || s.charAt(k + 1) == '-') ? k + 2 : k + 1;
        if (digits(s, m) > m) {
          k = digits(s, m);
        }
      }
      end = k;
    }
    int p = skipSpace(s, end);
    return p < s.length() && (s.charAt(p) == ',' || s.charAt(p) == ')') ? end : -1;
  }

  /** What Python's json.loads says of a literal read by literal(), which may hold non-ASCII digits or "01". */
  private static void checkJsonLiteral(String lit) throws Problem {
    if (lit.equals("null") || lit.equals("true") || lit.equals("false")) {
      return;
    }
    int k = 0;
    int n = lit.length();
    if (k < n && lit.charAt(k) == '-') {
      k++;
    }
    int intStart = k;
    if (k < n && lit.charAt(k) == '0') {
      k++;
    } else if (k < n && lit.charAt(k) >= '1' && lit.charAt(k) <= '9') {
      while (k < n && lit.charAt(k) >= '0' && lit.charAt(k) <= '9') {
        k++;
      }
    } else {
      throw new Problem("Expecting value: line 1 column 1 (char 0)");
    }
    int intEnd = k;
    boolean integer = true;
    if (k + 1 < n && lit.charAt(k) == '.' && asciiDigit(lit.charAt(k + 1))) {
      k += 2;
      while (k < n && asciiDigit(lit.charAt(k))) {
        k++;
      }
      integer = false;
    }
    if (k < n && (lit.charAt(k) == 'e' || lit.charAt(k) == 'E')) {
      int m = k + 1 < n && (lit.charAt(k + 1) == '+' || lit.charAt(k + 1) == '-') ? k + 2 : k + 1;
      if (m < n && asciiDigit(lit.charAt(m))) {
        k = m;
        while (k < n && asciiDigit(lit.charAt(k))) {
          k++;
        }
        integer = false;
      }
    }
    if (k < n) {
      throw new Problem("Extra data: line 1 column " + (k + 1) + " (char " + k + ")");
    }
    if (integer && intEnd - intStart > MAX_INT_DIGITS) {
      throw new Problem(tooManyDigits(intEnd - intStart));
    }
  }

  private static boolean asciiDigit(char c) {
    return c >= '0' && c <= '9';
  }

  // -------------------------------------------------------------------------------------------- timestamps

  /** An RFC 3339 timestamp (uppercase T, Z or a numeric offset) that Python's datetime accepts. */
  static boolean isTimestamp(JsonNode value) {
    return value.isTextual() && isTimestamp(value.asText());
  }

  static boolean isTimestamp(String s) {
    int[] cps = s.codePoints().toArray();
    int[] pos = {0};
    int year = number(cps, pos, 4);
    boolean ok = year >= 0 && expect(cps, pos, '-');
    int month = ok ? number(cps, pos, 2) : -1;
    ok &= month >= 0 && expect(cps, pos, '-');
    int day = ok ? number(cps, pos, 2) : -1;
    ok &= day >= 0 && expect(cps, pos, 'T');
    int hour = ok ? number(cps, pos, 2) : -1;
    ok &= hour >= 0 && expect(cps, pos, ':');
    int minute = ok ? number(cps, pos, 2) : -1;
    ok &= minute >= 0 && expect(cps, pos, ':');
    int second = ok ? number(cps, pos, 2) : -1;
    if (!ok || second < 0) {
      return false;
    }
    if (expect(cps, pos, '.')) {
      int digits = 0;
      while (pos[0] < cps.length && Character.getType(cps[pos[0]]) == Character.DECIMAL_DIGIT_NUMBER) {
        pos[0]++;
        digits++;
      }
      if (digits == 0) {
        return false;
      }
    }
    if (expect(cps, pos, 'Z')) {
      if (pos[0] != cps.length) {
        return false;
      }
    } else {
      if (!(expect(cps, pos, '+') || expect(cps, pos, '-'))) {
        return false;
      }
      int hours = number(cps, pos, 2);
      boolean colon = hours >= 0 && expect(cps, pos, ':');
      int minutes = colon ? number(cps, pos, 2) : -1;
      if (minutes < 0 || pos[0] != cps.length || hours * 60 + minutes >= 24 * 60) {
        return false;
      }
    }
    int[] days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    boolean leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return year >= 1 && month >= 1 && month <= 12 && day >= 1
        && day <= days[month - 1] + (month == 2 && leap ? 1 : 0) && hour <= 23 && minute <= 59 && second <= 59;
  }

  /** Exactly {@code count} decimal digits at pos[0] (advanced past them) as a number, or -1. */
  private static int number(int[] cps, int[] pos, int count) {
    if (pos[0] + count > cps.length) {
      return -1;
    }
    int value = 0;
    for (int k = 0; k < count; k++) {
      int cp = cps[pos[0] + k];
      if (Character.getType(cp) != Character.DECIMAL_DIGIT_NUMBER) {
        return -1;
      }
      value = value * 10 + Character.digit(cp, 10);
    }
    pos[0] += count;
    return value;
  }

  private static boolean expect(int[] cps, int[] pos, char c) {
    if (pos[0] < cps.length && cps[pos[0]] == c) {
      pos[0]++;
      return true;
    }
    return false;
  }

  // --------------------------------------------------------------------------------------------- Python's ways

  /** What asl.py raises as ValueError while reading a path or an intrinsic call. */
  static final class Problem extends Exception {
    Problem(String message) {
      super(message, null, false, false);
    }
  }

  private static Workflow.Invalid bad(String message) {
    return new Workflow.Invalid(message);
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw bad(message);
    }
  }

  private static String at(String prefix, String name) {
    return prefix.isEmpty() ? name : prefix + "." + name;
  }

  /** Python's {@code x is None} for {@code dict.get}: absent or JSON null. */
  private static boolean isNone(JsonNode node) {
    return node == null || node.isNull();
  }

  private static List<String> keys(JsonNode obj) {
    List<String> out = new ArrayList<>();
    obj.fieldNames().forEachRemaining(out::add);
    return out;
  }

  private static List<Map.Entry<String, JsonNode>> entries(JsonNode obj) {
    List<Map.Entry<String, JsonNode>> out = new ArrayList<>();
    obj.fields().forEachRemaining(out::add);
    return out;
  }

  private static Set<String> union(List<Set<String>> sets, String... more) {
    Set<String> out = new LinkedHashSet<>();
    sets.forEach(out::addAll);
    out.addAll(Arrays.asList(more));
    return Set.copyOf(out);
  }

  /** Python's str.isspace for one code point (the white space of Python's \s and str.strip()). */
  static boolean isSpace(int c) {
    return c >= 0x09 && c <= 0x0d || c >= 0x1c && c <= 0x1f || c == 0x85 || Character.isSpaceChar(c);
  }

  static String strip(String s) {
    int a = 0;
    int b = s.length();
    while (a < b && isSpace(s.codePointAt(a))) {
      a += Character.charCount(s.codePointAt(a));
    }
    while (b > a && isSpace(s.codePointBefore(b))) {
      b -= Character.charCount(s.codePointBefore(b));
    }
    return s.substring(a, b);
  }

  static String rstrip(String s) {
    int b = s.length();
    while (b > 0 && isSpace(s.codePointBefore(b))) {
      b -= Character.charCount(s.codePointBefore(b));
    }
    return s.substring(0, b);
  }

  /** Python's {@code str(value)} of a JSON value: a string as it is, anything else as repr. */
  private static String str(JsonNode value) {
    return value.isTextual() ? value.asText() : repr(value);
  }

  /** Python's {@code repr} of a JSON value as json.loads gives it. */
  static String repr(JsonNode value) {
    if (value == null || value.isNull() || value.isMissingNode()) {
      return "None";
    }
    if (value.isTextual()) {
      return repr(value.asText());
    }
    if (value.isBoolean()) {
      return value.booleanValue() ? "True" : "False";
    }
    if (value.isIntegralNumber()) {
      return value.bigIntegerValue().toString();
    }
    if (value.isNumber()) {
      return reprFloat(value.doubleValue());
    }
    StringBuilder out = new StringBuilder();
    if (value.isArray()) {
      out.append('[');
      for (int i = 0; i < value.size(); i++) {
        out.append(i > 0 ? ", " : "").append(repr(value.get(i)));
      }
      return out.append(']').toString();
    }
    out.append('{');
    Iterator<Map.Entry<String, JsonNode>> it = value.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      out.append(repr(e.getKey())).append(": ").append(repr(e.getValue())).append(it.hasNext() ? ", " : "");
    }
    return out.append('}').toString();
  }

  /** Python's {@code repr} of a string. */
  static String repr(String s) {
    char quote = s.indexOf('\'') >= 0 && s.indexOf('"') < 0 ? '"' : '\'';
    StringBuilder out = new StringBuilder().append(quote);
    s.codePoints().forEach(c -> {
      if (c == quote || c == '\\') {
        out.append('\\').appendCodePoint(c);
      } else if (c == '\t') {
        out.append("\\t");
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c == '\r') {
        out.append("\\r");
      } else if (c < 0x20 || c == 0x7f) {
        out.append(String.format("\\x%02x", c));
      } else if (c < 0x7f || printable(c)) {
        out.appendCodePoint(c);
      } else if (c <= 0xff) {
        out.append(String.format("\\x%02x", c));
      } else if (c <= 0xffff) {
        out.append(String.format("\\u%04x", c));
      } else {
        out.append(String.format("\\U%08x", c));
      }
    });
    return out.append(quote).toString();
  }

  private static boolean printable(int c) {
    return switch (Character.getType(c)) {
      case Character.CONTROL, Character.FORMAT, Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED,
          Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.SPACE_SEPARATOR -> false;
      default -> true;
    };
  }

  /** Python's {@code repr} of a float: the shortest digits, in exponent form below 1e-4 and from 1e16. */
  static String reprFloat(double d) {
    if (Double.isNaN(d)) {
      return "nan";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "inf" : "-inf";
    }
    if (d == 0) {
      return 1 / d < 0 ? "-0.0" : "0.0";
    }
    BigDecimal exact = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
    String digits = exact.unscaledValue().toString();
    int exponent = digits.length() - 1 - exact.scale(); // d = digits[0].digits[1:] * 10^exponent
    String sign = d < 0 ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
      String plain = exact.toPlainString();
      return sign + (plain.contains(".") ? plain : plain + ".0");
    }
    String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (Math.abs(exponent) < 10 ? "0" : "")
        + Math.abs(exponent);
  }

  // ------------------------------------------------------------------------------------------ suggestions

  /** " (did you mean 'X'?)" with difflib.get_close_matches(word, choices, n=1)'s pick, or "". */
  static String suggest(String word, Collection<String> choices) {
    String best = null;
    double bestScore = -1;
    int[] b = word.codePoints().toArray();
    for (String choice : choices) {
      double score = ratio(choice.codePoints().toArray(), b);
      if (score >= 0.6 && (score > bestScore || score == bestScore && compareCodePoints(choice, best) > 0)) {
        best = choice;
        bestScore = score;
      }
    }
    return best == null ? "" : " (did you mean " + repr(best) + "?)";
  }

  private static int compareCodePoints(String x, String y) {
    int[] a = x.codePoints().toArray();
    int[] b = y.codePoints().toArray();
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] != b[i]) {
        return Integer.compare(a[i], b[i]);
      }
    }
    return Integer.compare(a.length, b.length);
  }

  /** difflib.SequenceMatcher(None, a, b).ratio(), autojunk included. */
  static double ratio(int[] a, int[] b) {
    Map<Integer, List<Integer>> b2j = new HashMap<>();
    for (int j = 0; j < b.length; j++) {
      b2j.computeIfAbsent(b[j], x -> new ArrayList<>()).add(j);
    }
    if (b.length >= 200) {
      int ntest = b.length / 100 + 1;
      b2j.values().removeIf(indices -> indices.size() > ntest);
    }
    int matches = 0;
    List<int[]> queue = new ArrayList<>();
    queue.add(new int[] {0, a.length, 0, b.length});
    while (!queue.isEmpty()) {
      int[] q = queue.remove(queue.size() - 1);
      int[] m = longestMatch(a, b, b2j, q[0], q[1], q[2], q[3]);
      int i = m[0];
      int j = m[1];
      int k = m[2];
      if (k > 0) {
        matches += k;
        if (q[0] < i && q[2] < j) {
          queue.add(new int[] {q[0], i, q[2], j});
        }
        if (i + k < q[1] && j + k < q[3]) {
          queue.add(new int[] {i + k, q[1], j + k, q[3]});
        }
      }
    }
    int length = a.length + b.length;
    return length == 0 ? 1.0 : 2.0 * matches / length;
  }

  private static int[] longestMatch(int[] a, int[] b, Map<Integer, List<Integer>> b2j, int alo, int ahi, int blo,
                                    int bhi) {
    int besti = alo;
    int bestj = blo;
    int bestsize = 0;
    Map<Integer, Integer> j2len = new HashMap<>();
    for (int i = alo; i < ahi; i++) {
      Map<Integer, Integer> newj2len = new HashMap<>();
      for (int j : b2j.getOrDefault(a[i], List.of())) {
        if (j < blo) {
          continue;
        }
        if (j >= bhi) {
          break;
        }
        int k = j2len.getOrDefault(j - 1, 0) + 1;
        newj2len.put(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      j2len = newj2len;
    }
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize]) {
      bestsize++;
    }
    return new int[] {besti, bestj, bestsize};
  }
}
