package sand.frontend.knix;

import static sand.frontend.knix.Base64Text.decode;
import static sand.frontend.knix.Base64Text.repair;
import static sand.frontend.knix.KnixRequests.baseUrl;
import static sand.frontend.knix.KnixRequests.enc;
import static sand.frontend.knix.KnixRequests.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.frontend.AppsHandler;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * KNIX's workflow actions: a KNIX workflow is a SAND application of the caller's account, written, deployed and
 * read through SAND's application API; its KNIX id, name and JSON are kept as {@link KnixRecord}s.
 */
final class KnixWorkflows {
  /** A KNIX workflow's synchronous request waits this long for its result (the API's longest). */
  static final int REQUEST_TIMEOUT_S = 300;

  static final String WORKFLOW = "workflow";

  /** Forget every workflow of an account (its account is deleted). */
  static void forgetAll(ClusterStore store, String account) {
    store.deleteKnixRecords(account, WORKFLOW);
  }

  private final ClusterStore store;
  private final LoopbackApi.Api api;
  private final Clock clock;
  private final KnixBuckets buckets;
  /** How long deleting a failed workflow waits for its application to be undeployed. */
  static final long UNDEPLOY_WAIT_MS = 10_000;

  KnixWorkflows(ClusterStore store, LoopbackApi.Api api, Clock clock, KnixBuckets buckets) {
    this.store = store;
    this.api = api;
    this.clock = clock;
    this.buckets = buckets;
  }

  private ObjectNode workflowRecord(Caller c, String id) {
    if (id == null || id.isEmpty()) {
      throw new Failure("workflow.id is missing");
    }
    return store
        .knixRecord(c.account(), WORKFLOW, id)
        .map(r -> (ObjectNode) Json.parse(r.value(), WORKFLOW))
        .orElseThrow(() -> new Failure("Workflow with id '" + id + "' does not exist."));
  }

  private void saveWorkflow(Caller c, String id, ObjectNode w) {
    w.put("modified", now());
    store.putKnixRecord(new KnixRecord(c.account(), WORKFLOW, id, Json.bytes(w)));
  }

  /** KNIX's view of a workflow: its SAND application's status and, when deployed, its endpoint. */
  private ObjectNode workflowView(Caller c, String id, JsonNode w) {
    String app = w.path("app").asText();
    LoopbackApi.Answer a = api.call("GET", "/api/v1/apps/" + enc(app), c.token(), null, null);
    String status = "undeployed";
    String error = null;
    if (a.ok()) {
      status = a.body().path("status").asText("undeployed");
      error = a.body().path("error").isTextual() ? a.body().path("error").asText() : null;
    } else if (a.status() != 404) {
      throw new Failure("Couldn't read workflow status: " + a.message());
    }
    ObjectNode v = Json.object()
        .put("id", id)
        .put("name", w.path("name").asText())
        .put("status", status)
        .put("modified", w.path("modified").asDouble())
        .put("app", app)
        .put("ASL_type", w.path("asl_type").asText("unknown"));
    v.set(
        KnixBuckets.TABLES,
        w.path(KnixBuckets.TABLES).isObject() ? w.get(KnixBuckets.TABLES) : Json.object());
    ArrayNode endpoints = v.putArray("endpoints");
    if (status.equals("deployed")) {
      endpoints.add(baseUrl(c.call()) + "/app/" + enc(app) + KnixManagement.ENDPOINT_SUFFIX);
    }
    if (status.equals("failed") && error != null) {
      v.put("deployment_error", error);
    }
    return v;
  }

  /**
   * KNIX's {@code getWorkflowDetails} (the grain API's {@code _getWorkflowDetails}): a workflow named
   * {@code workflowname}, with the buckets ({@code associatedTriggerableTables}) and the triggers
   * ({@code associatedTriggers}) associated with it.
   */
  ObjectNode getWorkflowDetails(JsonNode data, Caller c) {
    String name = data.path("workflowname").asText("");
    KnixRecord r = named(store, c.account(), name)
        .orElseThrow(() -> new Failure("Workflow: " + name + " not found."));
    ObjectNode v = workflowView(c, r.id(), Json.parse(r.value(), WORKFLOW));
    ObjectNode triggers = v.putObject("associatedTriggers");
    for (KnixRecord t : store.knixRecords(c.account(), KnixTriggers.TRIGGER)) {
      if (Json.parse(t.value(), KnixTriggers.TRIGGER).path("workflows").has(name)) {
        triggers.put(t.id(), "");
      }
    }
    return v;
  }

  /** The record of {@code account}'s KNIX workflow named {@code name} (KNIX's actions name workflows so). */
  static java.util.Optional<KnixRecord> named(ClusterStore store, String account, String name) {
    for (KnixRecord r : store.knixRecords(account, WORKFLOW)) {
      if (Json.parse(r.value(), WORKFLOW).path("name").asText().equals(name)) {
        return java.util.Optional.of(r);
      }
    }
    return java.util.Optional.empty();
  }

  /** The id of a KNIX workflow's SAND application (its data space), once the workflow was deployed. */
  String appId(Caller c, String workflowId) {
    String app = workflowRecord(c, workflowId).path("app").asText();
    LoopbackApi.Answer a = api.call("GET", "/api/v1/apps/" + enc(app), c.token(), null, null);
    if (!a.ok()) {
      throw new Failure("Workflow '" + workflowId
          + "' has no data yet: it exists once the workflow was deployed (" + a.message() + ")");
    }
    return a.body().path("id").asText();
  }

  ObjectNode getWorkflows(Caller c, JsonNode wf) {
    if (wf.has("id")) {
      String id = wf.path("id").asText();
      return Json.object()
          .put("message", "Workflow found.")
          .set(WORKFLOW, workflowView(c, id, workflowRecord(c, id)));
    }
    ObjectNode out = Json.object();
    ArrayNode list = out.putArray("workflows");
    for (KnixRecord r : store.knixRecords(c.account(), WORKFLOW)) {
      list.add(workflowView(c, r.id(), Json.parse(r.value(), WORKFLOW)));
    }
    return out.put("message", "Found " + list.size() + " workflows.");
  }

  ObjectNode addWorkflow(Caller c, JsonNode wf) {
    String name = text(wf, "name", "workflow");
    String id = Ids.hex(16);
    String app = appName(name, id);
    ObjectNode w = Json.object()
        .put("name", name)
        .put("app", app)
        .put("json", "")
        .put("modified", now())
        .put("logs_cleared_ms", 0);
    store.putKnixRecord(new KnixRecord(c.account(), WORKFLOW, id, Json.bytes(w)));
    ObjectNode v = Json.object()
        .put("id", id)
        .put("name", name)
        .put("status", "undeployed")
        .put("modified", w.path("modified").asDouble())
        .put("app", app);
    v.putArray("endpoints");
    return Json.object().put("message", "Workflow added.").set(WORKFLOW, v);
  }

  /** The SAND application of a KNIX workflow: its name's letters and digits, and the id's start (names are global). */
  static String appName(String name, String id) {
    String s =
        name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]+", "-").replaceAll("^[^a-z0-9]+", "");
    s = s.length() > 40 ? s.substring(0, 40) : s;
    return (s.isEmpty() ? "wf" : s) + "-" + id.substring(0, 8);
  }

  ObjectNode modifyWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    w.put("name", wf.path("name").asText(w.path("name").asText()));
    saveWorkflow(c, id, w);
    return Json.object().put("message", "Workflow modified.").set(WORKFLOW, workflowView(c, id, w));
  }

  ObjectNode deleteWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    String status = workflowView(c, id, w).path("status").asText();
    if (!status.equals("undeployed") && !status.equals("failed")) {
      throw new Failure(
          "Couldn't delete workflow; workflow is still " + status + ". Undeploy workflow first.");
    }
    if (status.equals(
        "failed")) { // KNIX deletes a failed workflow at once; SAND's API undeploys it first
      undeployFailed(c, id, w);
    }
    LoopbackApi.Answer a =
        api.call("DELETE", "/api/v1/apps/" + enc(w.path("app").asText()), c.token(), null, null);
    if (!a.ok() && a.status() != 404) {
      throw new Failure("Couldn't delete workflow: " + a.message());
    }
    store.deleteKnixRecord(c.account(), WORKFLOW, id);
    return Json.object().put("message", "Workflow deleted.");
  }

  /** Undeploy a failed workflow's application and wait (at most {@link #UNDEPLOY_WAIT_MS}) until it is. */
  private void undeployFailed(Caller c, String id, JsonNode w) {
    String app = w.path("app").asText();
    LoopbackApi.Answer a =
        api.call("POST", "/api/v1/apps/" + enc(app) + "/undeploy", c.token(), null, null);
    if (!a.ok() && a.status() != 404 && a.status() != 409) {
      throw new Failure("Couldn't delete workflow: undeploying it failed: " + a.message());
    }
    long until = System.nanoTime() + UNDEPLOY_WAIT_MS * 1_000_000L;
    while (!workflowView(c, id, w).path("status").asText().equals("undeployed")) {
      if (System.nanoTime() > until) {
        throw new Failure(
            "Couldn't delete workflow: it is still being undeployed; try again in a moment");
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new Failure("Couldn't delete workflow: interrupted");
      }
    }
  }

  ObjectNode uploadWorkflowJson(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    String json = repair(wf.path("json").asText(""));
    JsonNode parsed = Json.parse(decode(json, "json"), "the workflow JSON");
    w.put("json", json).put("asl_type", WorkflowJson.isAsl(parsed) ? "unknown" : "");
    saveWorkflow(c, id, w);
    return Json.object().put("message", "Workflow JSON uploaded.");
  }

  ObjectNode getWorkflowJson(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    return Json.object()
        .put("message", "Workflow JSON.")
        .set(WORKFLOW, Json.object().put("id", id).put("json", w.path("json").asText("")));
  }

  ObjectNode deployWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    if (w.path("json").asText("").isEmpty()) {
      throw new Failure("workflow JSON does not exist.");
    }
    String app = w.path("app").asText();
    ObjectNode sand = WorkflowJson.toSand(
        Json.parse(decode(w.path("json").asText(), "json"), "the workflow JSON"), app);
    // KNIX's frontend waits for a result as long as its caller does (no timeout of its own): SAND's
    // longest
    sand.putObject("settings").put("request_timeout_s", REQUEST_TIMEOUT_S);
    LoopbackApi.Answer a = api.call(
        "PUT", "/api/v1/apps/" + enc(app), c.token(), "application/json", Json.bytes(sand));
    if (!a.ok()) {
      throw new Failure("Couldn't deploy workflow: " + a.message());
    }
    a = api.call("POST", "/api/v1/apps/" + enc(app) + "/deploy", c.token(), null, null);
    if (!a.ok()) {
      throw new Failure("Couldn't deploy workflow: " + a.message());
    }
    buckets.deployed(c, w); // associations made before the deploy (KNIX queues them up)
    return Json.object()
        .put("message", "Successfully deployed workflow " + id + ".")
        .set(WORKFLOW, workflowView(c, id, w));
  }

  ObjectNode undeployWorkflow(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    LoopbackApi.Answer a = api.call(
        "POST", "/api/v1/apps/" + enc(w.path("app").asText()) + "/undeploy", c.token(), null, null);
    if (!a.ok() && a.status() != 404 && a.status() != 409) {
      throw new Failure("Couldn't undeploy workflow: " + a.message());
    }
    return Json.object().put("message", "Successfully undeployed workflow " + id + ".");
  }

  /**
   * KNIX's logs of a workflow: every log line of its recent executions (SAND keeps them per execution), oldest
   * first, as {@code [timestamp µs] [time] [LEVEL] [execution id] [grain] text}; {@code exceptions} the ERROR lines.
   */
  ObjectNode workflowLogs(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    long earliestUs = (long) wf.path("ts_earliest").asDouble(0);
    int lines = Math.max(1, Math.min(10_000, wf.path("num_lines").asInt(500)));
    // A clear hides lines, not executions: an execution started before it (a session's,
    // docs/sessions.md) still
    // logs after it, so executions are read from the last 24 hours and the lines filtered by time.
    long hiddenUs = Math.max(earliestUs, w.path("logs_cleared_ms").asLong(0) * 1000);
    long sinceMs = earliestUs > 0 ? earliestUs / 1000 : clock.millis() - 24 * 3600_000L;
    LoopbackApi.Answer a = api.call(
        "GET",
        "/api/v1/apps/" + enc(w.path("app").asText()) + "/logs?since=" + sinceMs + "&limit="
            + AppsHandler.LOGS_MAX_EXECUTIONS,
        c.token(),
        null,
        null);
    List<String[]> all = new ArrayList<>(); // [µs, line, level]
    if (a.ok()) {
      for (JsonNode e : a.body().path("executions")) {
        for (JsonNode l : e.path("logs")) {
          Instant t = Instant.parse(l.path("time").asText());
          long us = t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
          if (us <= hiddenUs) {
            continue;
          }
          String level = l.path("level").asText();
          all.add(new String[] {
            Long.toString(us),
            "[" + us + "] [" + t + "] [" + level + "] ["
                + e.path("execution_id").asText() + "] [" + l.path("grain").asText() + "] "
                + l.path("text").asText(),
            level
          });
        }
      }
    } else if (a.status() != 404) {
      throw new Failure("Couldn't read the logs: " + a.message());
    }
    all.sort((x, y) -> Long.compare(Long.parseLong(x[0]), Long.parseLong(y[0])));
    List<String[]> last = all.subList(Math.max(0, all.size() - lines), all.size());
    StringBuilder log = new StringBuilder();
    StringBuilder errors = new StringBuilder();
    for (String[] l : last) {
      log.append(l[1]).append('\n');
      if (l[2].equals("ERROR") || l[2].equals("STDERR")) {
        errors.append(l[1]).append('\n');
      }
    }
    Base64.Encoder b64 = Base64.getEncoder();
    ObjectNode out = Json.object()
        .put("id", id)
        .put("log", b64.encodeToString(log.toString().getBytes(StandardCharsets.UTF_8)))
        .put("progress", "")
        .put("exceptions", b64.encodeToString(errors.toString().getBytes(StandardCharsets.UTF_8)));
    if (last.isEmpty()) {
      out.put("timestamp", earliestUs);
    } else {
      out.put("timestamp", Long.parseLong(last.get(last.size() - 1)[0]));
    }
    return Json.object().put("message", "Workflow logs.").set(WORKFLOW, out);
  }

  /** SAND keeps executions' logs for execution.ttl.hours: "cleared" hides those before now from this door. */
  ObjectNode clearLogs(Caller c, JsonNode wf) {
    String id = text(wf, "id", "workflow");
    ObjectNode w = workflowRecord(c, id);
    w.put("logs_cleared_ms", clock.millis());
    saveWorkflow(c, id, w);
    return Json.object().put("message", "Workflow logs cleared.");
  }

  private double now() {
    return clock.millis() / 1000.0;
  }
}
