package sand.frontend.knix;

import static sand.frontend.knix.KnixRequests.enc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.contracts.Workflow;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * KNIX's trigger actions (mfn-sdk 0.8.9: addTrigger, getTriggerDetails, addTriggerForWorkflow,
 * deleteTriggerForWorkflow, deleteTrigger) on SAND's timers (docs/triggers.md). A KNIX trigger belongs to an account
 * and is bound to workflows; each binding is a SAND timer named {@code knix.<trigger>} on the workflow's
 * application, whose every tick sends KNIX's trigger event {"trigger_status": "ready", "trigger_type": "timer",
 * "trigger_name", "workflow_name", "source", "data"}. Timers only: an AMQP trigger is refused (SAND has no AMQP
 * broker; a Kafka topic is a SAND queue trigger).
 */
final class KnixTriggers {
  static final String TRIGGER = "trigger";
  /** SAND's shortest interval (Schedule.MIN_INTERVAL). */
  static final int MIN_INTERVAL_MS = 1000;

  private final ClusterStore store;
  private final LoopbackApi.Api api;

  KnixTriggers(ClusterStore store, LoopbackApi.Api api) {
    this.store = store;
    this.api = api;
  }

  /** Forget every trigger of an account (its account is deleted; its applications' triggers go with them). */
  static void forgetAll(ClusterStore store, String account) {
    store.deleteKnixRecords(account, TRIGGER);
  }

  private static String name(JsonNode data) {
    String n = data.path("trigger_name").asText("");
    if (!n.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,58}")) {
      throw new Failure("trigger_name '" + n
          + "' must be 1..59 of letters, digits, . _ - (starting with a " + "letter or digit)");
    }
    return n;
  }

  private ObjectNode record(Caller c, String name) {
    return store
        .knixRecord(c.account(), TRIGGER, name)
        .map(r -> (ObjectNode) Json.parse(r.value(), TRIGGER))
        .orElseThrow(() -> new Failure("Trigger '" + name + "' does not exist."));
  }

  private void save(Caller c, String name, ObjectNode t) {
    store.putKnixRecord(new KnixRecord(c.account(), TRIGGER, name, Json.bytes(t)));
  }

  ObjectNode addTrigger(JsonNode data, Caller c) {
    String name = name(data);
    JsonNode info = data.path("trigger_info");
    String type = info.path("trigger_type").asText("");
    if (type.equals("amqp")) {
      throw new Failure(
          "AMQP triggers are not supported: SAND has no AMQP broker. Use a timer trigger, or a SAND "
              + "queue trigger on a Kafka topic (docs/triggers.md)");
    }
    if (!type.equals("timer")) {
      throw new Failure("trigger_type is missing or is not one SAND supports (timer)");
    }
    JsonNode ms = info.path("timer_interval_ms");
    if (!ms.isIntegralNumber() || ms.asLong() < MIN_INTERVAL_MS || ms.asLong() > 7L * 86_400_000) {
      throw new Failure("timer_interval_ms is missing or is not an integer from " + MIN_INTERVAL_MS
          + " (SAND's shortest interval) to 7 days");
    }
    if (store.knixRecord(c.account(), TRIGGER, name).isPresent()) {
      throw new Failure("Trigger '" + name + "' already exists.");
    }
    ObjectNode t = Json.object().put("type", "timer").put("interval_ms", ms.asLong());
    t.putObject("workflows");
    save(c, name, t);
    return Json.object().put("message", "Trigger added: " + name).put("trigger_id", id(c, name));
  }

  private static String id(Caller c, String name) {
    return c.account() + "_" + name;
  }

  ObjectNode getTriggerDetails(JsonNode data, Caller c) {
    ObjectNode details = Json.object();
    JsonNode names = data.path("trigger_names");
    if (names.isArray() && names.size() > 0) {
      names.forEach(n -> details.set(n.asText(), details(c, n.asText())));
    } else {
      for (KnixRecord r : store.knixRecords(c.account(), TRIGGER)) {
        details.set(r.id(), details(c, r.id()));
      }
    }
    ObjectNode out = Json.object().put("message", "Number of details included: " + details.size());
    out.set("trigger_details", details);
    return out;
  }

  private ObjectNode details(Caller c, String name) {
    var r = store.knixRecord(c.account(), TRIGGER, name);
    ObjectNode d = Json.object().put("trigger_id", id(c, name));
    if (r.isEmpty()) {
      return d.put("trigger_status", "non_existent").put("status_msg", "Trigger not found");
    }
    ObjectNode t = (ObjectNode) Json.parse(r.get().value(), TRIGGER);
    d.put("trigger_status", "ready").put("trigger_type", "timer").put("trigger_count", 0);
    var wfs = d.putArray("associated_workflows");
    t.path("workflows")
        .fieldNames()
        .forEachRemaining(w -> wfs.add(Json.object().put("workflow_name", w)));
    d.set(
        "trigger_info",
        Json.object()
            .put("trigger_type", "timer")
            .put("timer_interval_ms", t.path("interval_ms").asLong()));
    return d;
  }

  /** The SAND application of the caller's workflow named {@code workflow}. */
  private String app(Caller c, String workflow) {
    return KnixWorkflows.named(store, c.account(), workflow)
        .map(r -> Json.parse(r.value(), KnixWorkflows.WORKFLOW).path("app").asText())
        .orElseThrow(() -> new Failure("Workflow '" + workflow + "' does not exist."));
  }

  ObjectNode addTriggerForWorkflow(JsonNode data, Caller c) {
    String name = name(data);
    String workflow = data.path("workflow_name").asText("");
    String state = data.path("workflow_state").asText("");
    ObjectNode t = record(c, name);
    String app = app(c, workflow);
    ObjectNode event = Json.object()
        .put("trigger_status", "ready")
        .put("trigger_type", "timer")
        .put("trigger_name", name)
        .put("workflow_name", workflow)
        .put("source", "")
        .put("data", "");
    ObjectNode spec = Json.object().put("every", t.path("interval_ms").asLong() + "ms");
    spec.set("input", event);
    if (!state
        .isEmpty()) { // the ticks start the workflow at that state (its grain; 400 if it has none)
      spec.put("grain", Workflow.stateGrain(state));
    }
    LoopbackApi.Answer a = api.call(
        "PUT",
        "/api/v1/apps/" + enc(app) + "/triggers/knix." + enc(name),
        c.token(),
        "application/json",
        Json.text(spec).getBytes(StandardCharsets.UTF_8));
    if (!a.ok()) {
      throw new Failure(
          "Couldn't add trigger '" + name + "' to workflow '" + workflow + "': " + a.message());
    }
    ((ObjectNode) t.path("workflows")).put(workflow, app);
    save(c, name, t);
    return Json.object().put("message", "Trigger " + name + " added for workflow " + workflow);
  }

  ObjectNode deleteTriggerForWorkflow(JsonNode data, Caller c) {
    String name = name(data);
    String workflow = data.path("workflow_name").asText("");
    ObjectNode t = record(c, name);
    JsonNode app = t.path("workflows").get(workflow);
    if (app == null) {
      throw new Failure(
          "Trigger '" + name + "' is not associated with workflow '" + workflow + "'.");
    }
    unbind(c, name, app.asText());
    ((ObjectNode) t.path("workflows")).remove(workflow);
    save(c, name, t);
    return Json.object().put("message", "Trigger " + name + " removed from workflow " + workflow);
  }

  private void unbind(Caller c, String name, String app) {
    LoopbackApi.Answer a = api.call(
        "DELETE",
        "/api/v1/apps/" + enc(app) + "/triggers/knix." + enc(name),
        c.token(),
        null,
        null);
    if (!a.ok() && a.status() != 404) { // 404: the workflow (or its trigger) is already gone
      throw new Failure("Couldn't remove trigger '" + name + "': " + a.message());
    }
  }

  ObjectNode deleteTrigger(JsonNode data, Caller c) {
    String name = name(data);
    ObjectNode t = record(c, name);
    for (Iterator<Map.Entry<String, JsonNode>> it = t.path("workflows").fields(); it.hasNext(); ) {
      unbind(c, name, it.next().getValue().asText());
    }
    store.deleteKnixRecord(c.account(), TRIGGER, name);
    return Json.object().put("message", "Trigger deleted: " + name);
  }
}
