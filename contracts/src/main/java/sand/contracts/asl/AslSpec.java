package sand.contracts.asl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Amazon States Language as SAND supports it, read from {@code contracts/asl.json} (in this jar as
 * {@code sand/contracts/asl.json}); the grain worker reads the same file (grainworker/asl_spec.py). Lists and maps
 * keep the file's order: messages list names, and suggest them, in that order.
 */
final class AslSpec {
  /** How a field is checked wherever it appears (asl.json's {@code checks_about} says what each kind means). */
  enum Kind {
    INTEGER,
    NUMBER,
    STRING,
    BOOLEAN,
    OBJECT,
    PATH,
    RESULT_PATH,
    REFERENCE_PATH,
    DYNAMIC,
    TEMPLATE,
    TIMESTAMP,
    ONE_OF
  }

  /** A field's check: its kind, the least value (integer, number), whether null is allowed, the allowed values. */
  record Check(Kind kind, JsonNode min, boolean nullable, List<String> values, String why) {}

  /**
   * A comparison operator: its family (String, Numeric, Timestamp, Boolean, Matches, Is), the comparison or the
   * Is-test, and whether its operand is a Path.
   */
  record Operator(String family, String compare, String test, boolean isPath) {}

  /** An intrinsic function's argument kinds: required, optional, and the kind of any further ones (or null). */
  record Signature(List<String> args, List<String> optional, String rest) {
    /** The kind of argument {@code n} (from 0). */
    String kind(int n) {
      if (n < args.size()) {
        return args.get(n);
      }
      if (n < args.size() + optional.size()) {
        return optional.get(n - args.size());
      }
      return rest == null ? "any" : rest;
    }
  }

  private static final JsonNode SPEC = load();
  static final List<String> FLOW = strings(SPEC.path("field_groups").path("flow"));
  static final Map<String, List<String>> FIELDS = new LinkedHashMap<>();
  static final Set<String> ALL_FIELDS = new LinkedHashSet<>();
  static final Map<String, List<String>> EXACTLY_ONE_OF = new LinkedHashMap<>();
  static final Map<String, List<String>> MACHINE_FIELDS = stringLists(SPEC.path("machine_fields"));
  static final Map<String, List<String>> HANDLER_FIELDS = stringLists(SPEC.path("handler_fields"));
  static final Map<String, String> UNSUPPORTED = new LinkedHashMap<>();
  static final List<List<String>> EXCLUSIVE = new ArrayList<>();
  static final Map<String, Check> CHECKS = new LinkedHashMap<>();
  static final List<String> ERRORS = strings(SPEC.path("errors"));
  static final Set<String> RULE_FIELDS =
      Set.copyOf(strings(SPEC.path("comparison").path("rule_fields")));
  static final Map<String, String> FAMILIES = new LinkedHashMap<>();
  static final Map<String, Operator> OPERATORS = new LinkedHashMap<>();
  static final Map<String, String> ARGUMENT_KINDS = new LinkedHashMap<>();
  static final Map<String, Signature> INTRINSICS = new LinkedHashMap<>();

  static {
    SPEC.path("state_types").fields().forEachRemaining(e -> {
      List<String> fields = new ArrayList<>();
      for (String group : strings(e.getValue().path("groups"))) {
        fields.addAll(strings(SPEC.path("field_groups").path(group)));
      }
      fields.addAll(strings(e.getValue().path("fields")));
      FIELDS.put(e.getKey(), List.copyOf(fields));
      ALL_FIELDS.addAll(fields);
      if (e.getValue().has("exactly_one_of")) {
        EXACTLY_ONE_OF.put(e.getKey(), strings(e.getValue().get("exactly_one_of")));
      }
    });
    SPEC.path("unsupported")
        .fields()
        .forEachRemaining(e -> UNSUPPORTED.put(e.getKey(), e.getValue().asText()));
    SPEC.path("exclusive").forEach(pair -> EXCLUSIVE.add(strings(pair)));
    SPEC.path("checks").fields().forEachRemaining(e -> {
      JsonNode c = e.getValue();
      CHECKS.put(
          e.getKey(),
          new Check(
              Kind.valueOf(c.get("check").asText().toUpperCase(Locale.ROOT)),
              c.get("min"),
              c.path("nullable").asBoolean(false),
              strings(c.path("values")),
              c.path("why").asText("")));
    });
    JsonNode comparison = SPEC.path("comparison");
    comparison
        .path("families")
        .fields()
        .forEachRemaining(e -> FAMILIES.put(e.getKey(), e.getValue().asText()));
    comparison.path("operators").fields().forEachRemaining(e -> {
      JsonNode o = e.getValue();
      OPERATORS.put(
          e.getKey(),
          new Operator(
              o.get("family").asText(),
              o.path("compare").asText(""),
              o.path("test").asText(""),
              o.path("operand").asText("").equals("path")));
    });
    SPEC.path("argument_kinds")
        .fields()
        .forEachRemaining(e -> ARGUMENT_KINDS.put(e.getKey(), e.getValue().asText()));
    SPEC.path("intrinsics").fields().forEachRemaining(e -> {
      JsonNode s = e.getValue();
      INTRINSICS.put(
          e.getKey(),
          new Signature(
              strings(s.path("args")),
              strings(s.path("optional")),
              s.hasNonNull("rest") ? s.get("rest").asText() : null));
    });
  }

  private AslSpec() {}

  private static JsonNode load() {
    try (InputStream in = AslSpec.class.getResourceAsStream("/sand/contracts/asl.json")) {
      if (in == null) {
        throw new IllegalStateException("sand/contracts/asl.json is missing from the classpath");
      }
      return new ObjectMapper().readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException("reading sand/contracts/asl.json", e);
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return List.copyOf(out);
  }

  private static Map<String, List<String>> stringLists(JsonNode obj) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    obj.fields().forEachRemaining(e -> out.put(e.getKey(), strings(e.getValue())));
    return out;
  }
}
