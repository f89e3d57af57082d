package sand.contracts.asl;

// Longer than 600 lines because it is one walk over a state machine, every state type's fields
// checked where the walk meets them; paths, intrinsics, timestamps and the declared tables are
// in their own files.

import static sand.contracts.asl.AslText.entries;
import static sand.contracts.asl.AslText.keys;
import static sand.contracts.asl.AslText.show;
import static sand.contracts.asl.AslText.strip;
import static sand.contracts.asl.AslText.suggest;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import sand.contracts.asl.AslText.Problem;

/**
 * Validation of an Amazon States Language state machine against the tables of contracts/asl.json: the checks of
 * grainworker/asl_validate.py in the same order with the same messages (both are tested on
 * contracts/src/test/resources/asl-cases.json, whole messages), which start with where the fault is
 * ({@code States.<State>.<Field>: ...}, nested machines prefixed with their place, top-level fields bare), show
 * values as JSON and say what to write instead. The frontend refuses such a machine at upload.
 */
public final class AslValidator {
  /** An invalid state machine; the message starts with where the fault is. */
  public static final class Invalid extends IllegalArgumentException {
    Invalid(String message) {
      super(message);
    }
  }

  /** State name → where it is defined: names are unique in the whole machine, branches and iterators included. */
  private final Map<String, String> names = new HashMap<>();

  private AslValidator() {}

  /** Validate an ASL document; throws {@link Invalid} naming the place ({@code States.<State>.<Field>}). */
  public static void validate(JsonNode doc) {
    new AslValidator().machine(KnixDialect.forValidation(doc), "", "top");
  }

  // ----------------------------------------------------------------------------------------------
  // machines

  private void machine(JsonNode doc, String prefix, String kind) {
    if (doc == null || !doc.isObject()) {
      throw bad((prefix.isEmpty() ? "StartAt" : prefix)
          + ": a state machine must be a JSON object with StartAt and States");
    }
    List<String> allowed = AslSpec.MACHINE_FIELDS.get(kind);
    for (String key : keys(doc)) {
      if (!allowed.contains(key)) {
        throw bad(at(prefix, key) + ": unknown field" + suggest(key, allowed) + "; remove it");
      }
    }
    JsonNode start = doc.get("StartAt");
    JsonNode states = doc.get("States");
    if (start == null || !start.isTextual()) {
      throw bad(at(prefix, "StartAt")
          + ": missing or not a string; write \"StartAt\": \"<name of the first state>\"");
    }
    if (states == null || !states.isObject() || states.isEmpty()) {
      throw bad(
          at(prefix, "States") + ": must be a non-empty object of states, e.g. \"States\": {\""
              + start.asText() + "\": {\"Type\": \"Pass\", \"End\": true}}");
    }
    if (!states.has(start.asText())) {
      throw bad(at(prefix, "StartAt") + ": " + show(start.asText()) + " is not a state of States"
          + suggest(start.asText(), keys(states)));
    }
    checkFields(doc, prefix);
    for (Map.Entry<String, JsonNode> e : entries(states)) {
      String name = e.getKey();
      String where = at(prefix, "States." + name);
      if (names.containsKey(name)) {
        throw bad(where + ": the name " + show(name) + " is already used at " + names.get(name)
            + "; state names "
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
        if (states.has(target) && reached.add(target)) {
          todo.add(target);
        }
      }
    }
    for (String name : keys(states)) {
      if (!reached.contains(name)) {
        throw bad(at(prefix, "States." + name) + ": unreachable from StartAt " + show(first)
            + "; add a Next, " + "Default or Catch leading to it, or remove it");
      }
    }
    boolean terminal = false;
    for (JsonNode s : states) {
      String type = s.get("Type").asText();
      terminal |= s.path("End").isBoolean() && s.get("End").booleanValue()
          || type.equals("Succeed")
          || type.equals("Fail");
    }
    if (!terminal) {
      throw bad(at(prefix, "States")
          + ": no terminal state; give one state \"End\": true or add a Succeed state");
    }
  }

  /** The states a (valid) state may go to next: Next, Choices[].Next, Default, Catch[].Next. */
  private static List<String> targets(JsonNode state) {
    List<String> out = new ArrayList<>();
    if (state.has("Next")) {
      out.add(state.get("Next").asText());
    }
    // KNIX's: where a Task's code may send (context.add_workflow_next), and a session's heartbeat
    // handler
    for (JsonNode p : state.path("PotentialNext")) {
      out.add(p.asText());
    }
    JsonNode heartbeat = state.path("SessionFunctionParameters").path("heartbeat_function");
    if (heartbeat.isTextual()) {
      out.add(heartbeat.asText());
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
      throw bad(where + ": " + show(target) + " is not a state of this machine"
          + (target.isTextual() ? suggest(target.asText(), keys(states)) : "")
          + " (states in a Parallel branch or Map iterator only reach each other); one of: "
          + String.join(", ", keys(states)));
    }
  }

  // ------------------------------------------------------------------------------------------------ states

  private void state(JsonNode state, String where, JsonNode states) {
    if (!state.isObject()) {
      throw bad(
          where + ".Type: a state must be a JSON object, e.g. {\"Type\": \"Pass\", \"End\": true}");
    }
    JsonNode type = state.get("Type");
    if (type == null || !type.isTextual() || !AslSpec.FIELDS.containsKey(type.asText())) {
      String what = isNone(type)
          ? "missing"
          : show(type) + " is not a state type"
              + (type.isTextual() ? suggest(type.asText(), AslSpec.FIELDS.keySet()) : "");
      throw bad(where + ".Type: " + what + "; write one of "
          + String.join(", ", AslSpec.FIELDS.keySet()));
    }
    String kind = type.asText();
    List<String> allowed = AslSpec.FIELDS.get(kind);
    for (String key : keys(state)) {
      if (AslSpec.FLOW.contains(key) && !allowed.contains(key)) {
        String why = kind.equals("Choice")
            ? "continues through Choices[].Next and Default"
            : "ends its machine";
        throw bad(where + "." + key + ": not allowed, a " + kind + " state " + why + "; remove "
            + show(key));
      }
      if (AslSpec.UNSUPPORTED.containsKey(key)) {
        throw bad(where + "." + key + ": " + show(key) + " is not supported by SAND's ASL ("
            + AslSpec.UNSUPPORTED.get(key) + "); remove it");
      }
      if (!allowed.contains(key)) {
        boolean known = AslSpec.ALL_FIELDS.contains(key);
        throw bad(where + "." + key + ": "
            + (known
                ? "not allowed in a " + kind + " state"
                : "unknown field" + suggest(key, allowed))
            + "; remove it");
      }
    }
    checkFields(state, where);
    if (allowed.contains("Next")) {
      boolean end = state.path("End").booleanValue();
      if (state.has("Next") && end) {
        throw bad(
            where + ".End: a state has either \"Next\" or \"End\": true, not both; remove one");
      }
      if (!state.has("Next") && !end && !state.has("PotentialNext")) {
        throw bad(where + ".Next: missing; write \"Next\": \"<state name>\" or \"End\": true");
      }
      if (state.has("Next")) {
        next(state.get("Next"), where + ".Next", states);
      }
    }
    JsonNode potential = state.get("PotentialNext");
    if (potential != null) {
      boolean names = potential.isArray();
      for (JsonNode p : potential) {
        names &= p.isTextual();
      }
      if (!names) {
        throw bad(
            where + ".PotentialNext: must be a list of state names, e.g. [\"Next1\", \"Next2\"]");
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
      default -> {} // Pass, Succeed and Fail: their fields are all checked by checkFields
    }
  }

  private static void checkTask(JsonNode state, String where) {
    JsonNode resource = state.get("Resource");
    if (resource == null || !resource.isTextual() || strip(resource.asText()).isEmpty()) {
      String what =
          isNone(resource) ? "missing" : "must be a non-empty string, got " + show(resource);
      throw bad(where + ".Resource: " + what
          + "; write the SAND grain to call, e.g. \"Resource\": \"resize\"");
    }
    if (state.has("TimeoutSeconds")) {
      BigInteger timeout = state.get("TimeoutSeconds").bigIntegerValue();
      BigInteger heartbeat = state.has("HeartbeatSeconds")
          ? state.get("HeartbeatSeconds").bigIntegerValue()
          : BigInteger.ZERO;
      if (heartbeat.compareTo(timeout) >= 0) {
        throw bad(where + ".HeartbeatSeconds: must be smaller than TimeoutSeconds (" + timeout
            + "); lower it or " + "raise TimeoutSeconds");
      }
    }
  }

  private static void checkWait(JsonNode state, String where) {
    List<String> oneOf = AslSpec.EXACTLY_ONE_OF.get("Wait");
    List<String> given = oneOf.stream().filter(state::has).toList();
    if (given.size() != 1) {
      throw bad(where + "." + (given.isEmpty() ? "Seconds" : given.get(1))
          + ": a Wait state takes exactly one of " + String.join(", ", oneOf) + "; "
          + (given.isEmpty() ? "add e.g. \"Seconds\": 10" : "keep one"));
    }
  }

  private void checkParallel(JsonNode state, String where) {
    JsonNode branches = state.get("Branches");
    if (branches == null || !branches.isArray() || branches.isEmpty()) {
      throw bad(
          where + ".Branches: must be a non-empty array of machines, e.g. [{\"StartAt\": \"A\", "
              + "\"States\": {\"A\": {\"Type\": \"Pass\", \"End\": true}}}]");
    }
    for (int i = 0; i < branches.size(); i++) {
      machine(branches.get(i), where + ".Branches[" + i + "]", "branch");
    }
  }

  private void checkMap(JsonNode state, String where) {
    String key = state.has("ItemProcessor") ? "ItemProcessor" : "Iterator";
    if (!state.has(key)) {
      throw bad(
          where + ".ItemProcessor: missing; a Map state needs \"ItemProcessor\" (or the older "
              + "\"Iterator\"): {\"StartAt\": ..., \"States\": {...}}");
    }
    machine(state.get(key), where + "." + key, "processor");
  }

  // -------------------------------------------------------------------------------------------
  // Retry/Catch

  private static void handlers(JsonNode items, String where, JsonNode states) {
    String kind = where.endsWith("Retry") ? "Retrier" : "Catcher";
    String example = "{\"ErrorEquals\": [\"States.ALL\"]"
        + (kind.equals("Catcher") ? ", \"Next\": \"Recover\"}" : "}");
    boolean objects = items.isArray();
    for (JsonNode h : items) {
      objects &= h.isObject();
    }
    if (!objects) {
      throw bad(where + ": must be an array of " + kind + "s, e.g. [" + example + "]");
    }
    List<String> allowed = AslSpec.HANDLER_FIELDS.get(kind);
    for (int i = 0; i < items.size(); i++) {
      JsonNode handler = items.get(i);
      String w = where + "[" + i + "]";
      for (String key : keys(handler)) {
        if (!allowed.contains(key)) {
          throw bad(w + "." + key + ": unknown " + kind + " field" + suggest(key, allowed)
              + "; remove it");
        }
      }
      JsonNode errors = handler.get("ErrorEquals");
      boolean ok = errors != null && errors.isArray() && !errors.isEmpty();
      for (JsonNode name : ok ? errors : List.<JsonNode>of()) {
        ok &= name.isTextual() && !name.asText().isEmpty();
      }
      if (!ok) {
        throw bad(
            w + ".ErrorEquals: must be a non-empty array of error names, e.g. [\"States.ALL\"]");
      }
      boolean all = false;
      for (JsonNode node : errors) {
        String name = node.asText();
        if (name.startsWith("States.") && !AslSpec.ERRORS.contains(name)) {
          throw bad(w + ".ErrorEquals: " + show(name) + " is not a predefined error"
              + suggest(name, AslSpec.ERRORS) + "; names starting with 'States.' are reserved");
        }
        all |= name.equals("States.ALL");
      }
      if (all && (errors.size() > 1 || i < items.size() - 1)) {
        throw bad(w + ".ErrorEquals: States.ALL must appear alone and in the last " + kind
            + "; move the other " + "names to an earlier " + kind + ", or this " + kind
            + " to the end");
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
      throw bad(where
          + ".Choices: must be a non-empty array of Choice Rules, e.g. [{\"Variable\": \"$.x\", "
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
      throw bad(where
          + ": a Choice Rule must be an object, e.g. {\"Variable\": \"$.x\", \"IsNull\": true}");
    }
    if (top) {
      if (!rule.has("Next")) {
        throw bad(
            where + ".Next: missing; a top-level Choice Rule needs \"Next\": \"<state name>\"");
      }
      next(rule.get("Next"), where + ".Next", states);
    } else if (rule.has("Next")) {
      throw bad(where
          + ".Next: a rule inside And/Or/Not must not have Next; put Next on the top-level rule");
    }
    for (String key : keys(rule)) {
      if (!AslSpec.OPERATORS.containsKey(key) && !AslSpec.RULE_FIELDS.contains(key)) {
        throw bad(where + "." + key + ": unknown comparison operator"
            + suggest(key, AslSpec.OPERATORS.keySet()) + "; use one of "
            + "the spec's operators (StringEquals, NumericLessThan, IsPresent, ...) or And/Or/Not");
      }
    }
    if (rule.has("Comment")) {
      checkField("Comment", rule.get("Comment"), where);
    }
    List<String> combinators =
        List.of("And", "Or", "Not").stream().filter(rule::has).toList();
    List<String> ops =
        keys(rule).stream().filter(AslSpec.OPERATORS::containsKey).toList();
    if (!combinators.isEmpty()) {
      String key = combinators.get(0);
      if (combinators.size() > 1 || !ops.isEmpty() || rule.has("Variable")) {
        throw bad(where + "." + key
            + ": a rule is either one of And/Or/Not or a Variable with one comparison, "
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
      throw bad(where
          + ".Variable: missing; write \"Variable\": \"$.field\" and one comparison operator, "
          + "or use And/Or/Not");
    }
    checkPath(rule.get("Variable"), where + ".Variable", false, true);
    if (ops.size() != 1) {
      throw bad(where + ": " + (ops.isEmpty() ? "no" : "more than one")
          + " comparison operator; a rule takes "
          + "exactly one, e.g. \"StringEquals\": \"x\" (combine several with And)");
    }
    String op = ops.get(0);
    JsonNode value = rule.get(op);
    String w = where + "." + op;
    AslSpec.Operator spec = AslSpec.OPERATORS.get(op);
    String family = spec.family();
    String kind = family.equals("Is") ? "Boolean" : family.equals("Matches") ? "String" : family;
    if (spec.isPath()) {
      checkPath(value, w, false, true);
    } else if (!typeOk(kind, value)) {
      String hint = family.equals("Is") || family.equals("Matches")
          ? ""
          : "; to compare with another field use " + op + "Path";
      throw bad(w + ": must be " + AslSpec.FAMILIES.get(kind) + ", got " + show(value) + hint);
    } else if (family.equals("Matches")) {
      String problem = wildcardProblem(value.asText());
      if (problem != null) {
        throw bad(
            w + ": " + problem + "; write \\\\* for a literal star and \\\\\\\\ for a backslash");
      }
    }
  }

  private static boolean typeOk(String kind, JsonNode value) {
    return switch (kind) {
      case "String" -> value.isTextual();
      case "Numeric" -> value.isNumber();
      case "Boolean" -> value.isBoolean();
      case "Timestamp" -> AslTimestamps.isTimestamp(value);
      default -> throw new IllegalArgumentException(kind);
    };
  }

  /** StringMatches: '*' matches any characters; only '\*' and '\\' may follow a backslash. Null when fine. */
  static String wildcardProblem(String pattern) {
    for (int i = 0; i < pattern.length(); i++) {
      if (pattern.charAt(i) == '\\') {
        if (i + 1 < pattern.length()
            && (pattern.charAt(i + 1) == '*' || pattern.charAt(i + 1) == '\\')) {
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
    for (List<String> pair : AslSpec.EXCLUSIVE) {
      if (obj.has(pair.get(0)) && obj.has(pair.get(1))) {
        throw bad(where + "." + pair.get(1) + ": cannot be used together with " + pair.get(0)
            + "; keep one of them");
      }
    }
  }

  private static void checkField(String key, JsonNode value, String where) {
    AslSpec.Check check = AslSpec.CHECKS.get(key);
    String w = where.isEmpty() ? key : where + "." + key;
    if (check == null) {
      return;
    }
    switch (check.kind()) {
      case INTEGER ->
        require(
            value.isIntegralNumber() && atLeast(value, check.min()),
            w + ": must be an integer >= " + show(check.min()) + ", got " + show(value));
      case NUMBER ->
        require(
            value.isNumber() && atLeast(value, check.min()),
            w + ": must be a number >= " + show(check.min()) + ", got " + show(value));
      case STRING -> require(value.isTextual(), w + ": must be a string, got " + show(value));
      case BOOLEAN -> require(value.isBoolean(), w + ": must be true or false, got " + show(value));
      case OBJECT -> require(value.isObject(), w + ": must be a JSON object, got " + show(value));
      case PATH, RESULT_PATH, REFERENCE_PATH -> {
        if (!(value.isNull() && check.nullable())) {
          checkPath(
              value,
              w,
              check.kind() != AslSpec.Kind.PATH,
              check.kind() != AslSpec.Kind.RESULT_PATH);
        }
      }
      case DYNAMIC -> checkDynamic(value, w, true);
      case TEMPLATE -> checkTemplate(value, w, true);
      case TIMESTAMP ->
        require(
            AslTimestamps.isTimestamp(value),
            w + ": " + show(value)
                + " is not an RFC 3339 timestamp; write e.g. \"2016-03-14T01:59:00Z\"");
      case ONE_OF ->
        require(
            value.isTextual() && check.values().contains(value.asText()),
            w + ": must be "
                + String.join(" or ", check.values().stream().map(AslText::show).toList())
                + ", got " + show(value)
                + (check.why().isEmpty() ? "" : "; " + check.why()));
      default -> throw new IllegalStateException(key);
    }
  }

  /** {@code value >= least}, compared exactly as Python compares an int or float with an int or float. */
  private static boolean atLeast(JsonNode value, JsonNode least) {
    BigDecimal v =
        value.isIntegralNumber() ? new BigDecimal(value.bigIntegerValue()) : value.decimalValue();
    BigDecimal l =
        least.isIntegralNumber() ? new BigDecimal(least.bigIntegerValue()) : least.decimalValue();
    return v.compareTo(l) >= 0;
  }

  // ------------------------------------------------------------------------------------------------- paths

  private static void checkPath(JsonNode value, String where, boolean ref, boolean contextOk) {
    String kind = ref ? "Reference Path" : "Path";
    if (!value.isTextual()) {
      throw bad(where + ": must be a " + kind
          + " (a string beginning with \"$\", e.g. \"$.items\"), got " + show(value));
    }
    String path = value.asText();
    AslPaths.Parsed parsed;
    try {
      parsed = AslPaths.parsePath(path);
    } catch (Problem p) {
      throw bad(where + ": " + show(path) + " is not a valid " + kind + " (" + p.getMessage()
          + "); write e.g. " + "\"$.a.b\", \"$.list[0]\" or \"$['a b']\"");
    }
    if (parsed.context() && !contextOk) {
      throw bad(where + ": " + show(path)
          + " must not begin with \"$$\" (the context object is read-only); "
          + "write a path into the state input such as \"$.result\"");
    }
    if (ref && !parsed.definite()) {
      throw bad(where + ": " + show(path)
          + " must be a Reference Path selecting a single node (no [*], [a,b], "
          + "[a:b] or .*); write e.g. \"$.items\" or \"$.items[0]\"");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // templates

  private static void checkDynamic(JsonNode value, String where, boolean ref) {
    if (!value.isTextual() || value.asText().startsWith("$")) {
      checkPath(value, where, ref, true);
      return;
    }
    try {
      AslIntrinsics.parseIntrinsic(value.asText());
    } catch (Problem p) {
      throw bad(where + ": " + show(value) + " is not a valid intrinsic function call ("
          + p.getMessage() + "); " + "write e.g. \"States.Format('Hello {}', $.name)\"");
    }
  }

  private static void checkTemplate(JsonNode template, String where, boolean top) {
    if (top && !template.isObject()) {
      throw bad(
          where + ": must be a JSON object (a Payload Template), e.g. {\"id.$\": \"$.order.id\"}");
    }
    if (template.isObject()) {
      Set<String> seen = new HashSet<>();
      for (Map.Entry<String, JsonNode> e : entries(template)) {
        String key = e.getKey();
        boolean dynamic = key.endsWith(".$");
        String name = dynamic ? key.substring(0, key.length() - 2) : key;
        if (!seen.add(name)) {
          throw bad(where + "." + key + ": field " + show(name)
              + " appears twice once '.$' is stripped; keep one");
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

  private static Invalid bad(String message) {
    return new Invalid(message);
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
}
