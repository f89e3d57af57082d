package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Optional;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.contracts.Trace;

/**
 * {@code /api/v1/executions/{id}}: the outcome of one request, and the log lines its grain instances
 * wrote (stored by the host agents from LQ_HA reports). Only the account that owns the application sees
 * them; any other id answers 404.
 *
 * <p>{@code /app/{app}/executions/{id}}: an end user's asynchronous result, with no key (like the invocation
 * itself): the 128-bit random execution id is the capability. The same body and status the synchronous call would
 * have answered; 202 while it runs; 404 for an id that is not an execution of that application.
 */
public final class ExecutionsHandler {
  private final ClusterStore store;
  private final AppDirectory apps;

  public ExecutionsHandler(ClusterStore store, AppDirectory apps) {
    this.store = store;
    this.apps = apps;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/executions/{id}", true, this::get);
    r.add("GET", "/api/v1/executions/{id}/logs", true, this::logs);
    r.add("GET", "/app/{app}/executions/{id}", false, this::result);
  }

  /**
   * Records are written behind the requests (a synchronous one just after its answer, by whichever frontend
   * took it): a miss is read again briefly before it is a 404, so an id read off a reply is found at once.
   */
  static final long[] RECORD_LANDING_MS = {20, 80};

  private Optional<ExecutionRecord> landed(String id) {
    Optional<ExecutionRecord> found = store.execution(id);
    for (int i = 0; found.isEmpty() && i < RECORD_LANDING_MS.length; i++) {
      try {
        Thread.sleep(RECORD_LANDING_MS[i]);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      found = store.execution(id);
    }
    return found;
  }

  private ExecutionRecord owned(Call call) {
    String id = call.param("id");
    Optional<ExecutionRecord> found = landed(id);
    // A row may have an end and no start (owner null): a synchronous request's result read after its frontend
    // died or restarted, whose start was still held back (ExecutionLog). Nobody can show it is theirs.
    return found.filter(e -> call.account().equals(e.owner()))
        .orElseThrow(() -> ApiException.notFound("no execution '" + id + "' of your applications"));
  }

  Reply get(Call call) {
    ExecutionRecord e = owned(call);
    String app = store.application(e.appId()).map(a -> a.name()).orElse(null);
    ObjectNode out = Json.object().put("execution_id", e.executionId()).put("app", app).put("status", e.status());
    out.set("result", Json.stored(e.result()));
    out.set("error", Json.stored(e.error()));
    ObjectNode t = out.putObject("timings").put("started", iso(e.started())).put("finished", iso(e.finished()));
    if (e.started() != null && e.finished() != null) {
      t.put("duration_ms", java.time.Duration.between(e.started(), e.finished()).toNanos() / 1e6);
    }
    // Every hop of the path that reached the result, from the frontend's receipt to its reply (contracts Trace).
    t.set("hops", e.timings() == null ? Json.MAPPER.createArrayNode() : Trace.of(Json.stored(e.timings())).timeline());
    out.put("frontend", e.frontend());
    return Reply.ok(out);
  }

  /** An end user's result: what {@code POST /app/{app}} would have answered, or 202 while there is none yet. */
  Reply result(Call call) {
    String name = call.param("app");
    String id = call.param("id");
    String appId = apps.find(name).map(AppDirectory.Target::appId).orElse(null);
    ExecutionRecord e = appId == null ? null : landed(id).filter(r -> appId.equals(r.appId())).orElse(null);
    if (e == null) {
      throw ApiException.notFound("no execution '" + id + "' of application '" + name + "' (results are kept for "
          + "the platform's execution.ttl.hours)");
    }
    Reply reply = switch (e.status()) {
      case "succeeded" -> Reply.json(200, Json.stored(e.result()) == null ? Json.MAPPER.nullNode()
          : Json.stored(e.result()));
      case "failed" -> {
        JsonNode error = Json.stored(e.error());
        boolean platform = error != null && "platform".equals(error.path("type").asText());
        yield platform
            ? Reply.error(new ApiException(502, "unavailable", error.path("message").asText("the platform failed")))
            : Reply.json(500, Json.object().set("error", error));
      }
      // running, or timeout: a synchronous caller stopped waiting, the result may still come
      default -> Reply.json(202, Json.object().put("execution_id", id).put("status", "running"));
    };
    return reply.withHeader(InvokeHandler.EXECUTION_HEADER, id);
  }

  Reply logs(Call call) {
    ExecutionRecord e = owned(call);
    ObjectNode out = Json.object().put("execution_id", e.executionId());
    var arr = out.putArray("logs");
    for (var l : store.logs(e.executionId())) {
      arr.addObject().put("time", Instant.ofEpochSecond(0, l.tsNanos()).toString()).put("grain", l.grain())
          .put("level", l.level()).put("text", l.text());
    }
    return Reply.ok(out);
  }

  private static String iso(Instant t) {
    return t == null ? null : t.toString();
  }
}
