package sand.frontend.knix;

import static sand.frontend.knix.KnixRequests.baseUrl;
import static sand.frontend.knix.KnixRequests.enc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * KNIX's triggerable buckets (docs/data-triggers.md) through SAND's {@code /api/v1/buckets}: {@code
 * addTriggerableBucket}, {@code getTriggerableBuckets}, {@code addStorageTriggerForWorkflow}, {@code
 * deleteStorageTriggerForWorkflow}, {@code deleteTriggerableBucket}. As on KNIX a workflow keeps the buckets it was
 * associated with ({@code associatedTriggerableTables} in its record) whether deployed or not; a bucket lists (and
 * starts) only the deployed ones; a workflow associated before its first deploy becomes a target at its deploy.
 */
final class KnixBuckets {
  static final String TABLES = "associatedTriggerableTables";

  private final ClusterStore store;
  private final LoopbackApi.Api api;

  KnixBuckets(ClusterStore store, LoopbackApi.Api api) {
    this.store = store;
    this.api = api;
  }

  private static String bucketName(JsonNode data, String field) {
    String b = data.path(field).asText("");
    if (b.isEmpty()) {
      throw new Failure("Couldn't handle the bucket; bucket name ('" + field + "') is missing");
    }
    return b;
  }

  private LoopbackApi.Answer call(Caller c, String method, String path) {
    return api.call(method, path, c.token(), null, null);
  }

  ObjectNode addBucket(JsonNode data, Caller c) {
    String b = bucketName(data, "bucketname");
    LoopbackApi.Answer a = call(c, "PUT", "/api/v1/buckets/" + enc(b));
    if (!a.ok()) {
      throw new Failure("Couldn't add a triggerable bucket; " + a.message());
    }
    return Json.object().put("message", "Bucket created: " + b);
  }

  ObjectNode deleteBucket(JsonNode data, Caller c) {
    String b = bucketName(data, "bucketname");
    LoopbackApi.Answer a = call(c, "DELETE", "/api/v1/buckets/" + enc(b));
    if (!a.ok()) {
      throw new Failure("Couldn't delete a triggerable bucket; " + a.message());
    }
    for (KnixRecord r : store.knixRecords(c.account(), KnixWorkflows.WORKFLOW)) {
      ObjectNode w = (ObjectNode) Json.parse(r.value(), KnixWorkflows.WORKFLOW);
      if (w.path(TABLES).has(b)) {
        ((ObjectNode) w.get(TABLES)).remove(b);
        store.putKnixRecord(new KnixRecord(c.account(), r.kind(), r.id(), Json.bytes(w)));
      }
    }
    return Json.object().put("message", "Bucket deleted: " + b);
  }

  /** {@code buckets}: bucket → names of the deployed workflows it starts; {@code buckets_details}: KNIX's metadata. */
  ObjectNode getBuckets(JsonNode data, Caller c) {
    LoopbackApi.Answer a = call(c, "GET", "/api/v1/buckets");
    if (!a.ok()) {
      throw new Failure("Couldn't list triggerable buckets; " + a.message());
    }
    ObjectNode out = Json.object();
    ObjectNode buckets = out.putObject("buckets");
    ObjectNode details = out.putObject("buckets_details");
    for (JsonNode b : a.body().path("buckets")) {
      String name = b.path("name").asText();
      ArrayNode names = buckets.putArray(name);
      ArrayNode meta = details.putArray(name);
      for (JsonNode t : b.path("targets")) {
        if (!t.path("deployed").asBoolean(false)) {
          continue; // KNIX lists a bucket's workflows that are deployed
        }
        String app = t.path("app").asText();
        String wf = workflowOfApp(c, app);
        names.add(wf);
        ObjectNode m = meta.addObject().put("urltype", "url").put("wfname", wf);
        m.putArray("urls")
            .add(baseUrl(c.call()) + "/app/" + enc(app) + KnixManagement.ENDPOINT_SUFFIX);
      }
    }
    return out.put("message", "Found " + buckets.size() + " buckets.");
  }

  ObjectNode addTrigger(JsonNode data, Caller c) {
    String b = bucketName(data, "bucketname");
    String wfName = data.path("workflowname").asText("");
    LoopbackApi.Answer bucket = call(c, "GET", "/api/v1/buckets/" + enc(b));
    if (!bucket.ok()) {
      throw new Failure("Couldn't add storage trigger; Bucket: " + b + " not found.");
    }
    KnixRecord r = workflowRecord(c, wfName, "Couldn't add storage trigger; ");
    ObjectNode w = (ObjectNode) Json.parse(r.value(), KnixWorkflows.WORKFLOW);
    w.withObject("/" + TABLES).put(b, "");
    store.putKnixRecord(new KnixRecord(c.account(), r.kind(), r.id(), Json.bytes(w)));
    String app = w.path("app").asText();
    LoopbackApi.Answer t =
        call(c, "PUT", "/api/v1/buckets/" + enc(b) + "/targets/" + enc(app) + "?when_deployed=1");
    if (t.status() == 404) { // the workflow was never deployed: it becomes a target at its deploy
      return Json.object()
          .put(
              "message",
              "Trigger queued up for workflow: " + wfName
                  + ", to be associated in future with table: " + b);
    }
    if (!t.ok()) {
      throw new Failure("Couldn't add storage trigger; " + t.message());
    }
    return Json.object()
        .put("message", "Trigger added for workflow: " + wfName + ", associated with table: " + b);
  }

  ObjectNode deleteTrigger(JsonNode data, Caller c) {
    String b = bucketName(data, "tablename");
    String wfName = data.path("workflowname").asText("");
    KnixRecord r = workflowRecord(c, wfName, "Couldn't remove storage trigger; ");
    ObjectNode w = (ObjectNode) Json.parse(r.value(), KnixWorkflows.WORKFLOW);
    if (w.path(TABLES).has(b)) {
      ((ObjectNode) w.get(TABLES)).remove(b);
      store.putKnixRecord(new KnixRecord(c.account(), r.kind(), r.id(), Json.bytes(w)));
    }
    LoopbackApi.Answer t = call(
        c,
        "DELETE",
        "/api/v1/buckets/" + enc(b) + "/targets/" + enc(w.path("app").asText()));
    if (!t.ok() && t.status() != 404) {
      throw new Failure("Couldn't remove storage trigger; " + t.message());
    }
    return Json.object()
        .put(
            "message",
            "Storage Trigger removed for workflow: " + wfName
                + ", which was associated with table: " + b);
  }

  /** After a workflow's deploy: make it a target of the buckets it was associated with before. */
  void deployed(Caller c, JsonNode w) {
    Iterator<String> names = w.path(TABLES).fieldNames();
    while (names.hasNext()) {
      call(
          c,
          "PUT",
          "/api/v1/buckets/" + enc(names.next()) + "/targets/"
              + enc(w.path("app").asText()) + "?when_deployed=1");
    }
  }

  private KnixRecord workflowRecord(Caller c, String name, String prefix) {
    return KnixWorkflows.named(store, c.account(), name)
        .orElseThrow(() -> new Failure(prefix + "Workflow: " + name + " not found."));
  }

  private String workflowOfApp(Caller c, String app) {
    for (KnixRecord r : store.knixRecords(c.account(), KnixWorkflows.WORKFLOW)) {
      JsonNode w = Json.parse(r.value(), KnixWorkflows.WORKFLOW);
      if (w.path("app").asText().equals(app)) {
        return w.path("name").asText();
      }
    }
    return app; // made through SAND's API, not the KNIX door: its application's name
  }
}
