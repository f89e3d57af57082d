package sand.frontend;

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
 */
public final class ExecutionsHandler {
  private final ClusterStore store;

  public ExecutionsHandler(ClusterStore store) {
    this.store = store;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/executions/{id}", true, this::get);
    r.add("GET", "/api/v1/executions/{id}/logs", true, this::logs);
  }

  /**
   * Records are written behind the requests (a synchronous one just after its answer, by whichever frontend
   * took it): a miss is read again briefly before it is a 404, so an id read off a reply is found at once.
   */
  static final long[] RECORD_LANDING_MS = {20, 80};

  private ExecutionRecord owned(Call call) {
    String id = call.param("id");
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
