package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import sand.contracts.Rules;
import sand.contracts.Workflow;
import sand.contracts.asl.KnixDialect;
import sand.frontend.internal.Json;

/**
 * KNIX workflow descriptions as SAND workflows. KNIX's native format is SAND's own ({@code name}, {@code entry},
 * {@code functions[]} with {@code next}, {@code potentialNext}, {@code resource}) plus a few members SAND does not
 * have: the exit's name ({@code exit} or {@code end}, "end" by default, which SAND always calls "end"), checkpoint
 * and immediate-message switches (no effect here), and {@code isSessionFunction}, which SAND calls
 * {@code sessionFunction} (docs/sessions.md). An Amazon States Language machine is marked as KNIX's dialect
 * ({@link KnixDialect}): it runs as on KNIX.
 */
final class WorkflowJson {
  private WorkflowJson() {}

  static boolean isAsl(JsonNode json) {
    return Workflow.isAsl(json);
  }

  /** The SAND workflow of application {@code app} for a KNIX description, or a {@link KnixManagement.Failure}. */
  static ObjectNode toSand(JsonNode json, String app) {
    if (!json.isObject()) {
      throw new KnixManagement.Failure("The workflow JSON must be an object");
    }
    if (isAsl(json)) { // SAND runs ASL itself (docs/workflows.md), here as KNIX does (docs/knix.md)
      ObjectNode machine = (ObjectNode) json.deepCopy();
      machine.put(KnixDialect.FIELD, KnixDialect.KNIX);
      return machine;
    }
    String end = Rules.WORKFLOW_END;
    String exit = json.path("exit").asText(json.path("end").asText(end));
    JsonNode functions = json.has("functions") ? json.path("functions") : json.path("grains");
    // KNIX's dialect: an execution stops after a grain's error, as on KNIX
    // (grainworker/knix_stop.py)
    ObjectNode out = Json.object().put("name", app).put(KnixDialect.FIELD, KnixDialect.KNIX);
    if (json.has("entry")) {
      out.set("entry", json.get("entry"));
    }
    ArrayNode fs = out.putArray("functions");
    if (functions.isArray()) {
      for (JsonNode f : functions) {
        if (!f.isObject()) {
          fs.add(f); // SAND's validation says what is wrong with it
          continue;
        }
        ObjectNode g = fs.addObject();
        if (f.has(
            "isSessionFunction")) { // KNIX's name of SAND's sessionFunction (docs/sessions.md)
          g.set("sessionFunction", f.get("isSessionFunction"));
        }
        for (String field : Rules.WORKFLOW_FUNCTION_FIELDS) {
          JsonNode v = f.get(field);
          if (v != null) {
            g.set(field, v.isArray() ? renamed((ArrayNode) v, exit, end) : v);
          }
        }
      }
    } else if (!functions.isMissingNode()) {
      out.set("functions", functions);
    }
    return out;
  }

  private static ArrayNode renamed(ArrayNode names, String exit, String end) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (JsonNode n : names) {
      out.add(
          n.isTextual() && n.asText().equals(exit)
              ? Json.MAPPER.getNodeFactory().textNode(end)
              : n);
    }
    return out;
  }
}
