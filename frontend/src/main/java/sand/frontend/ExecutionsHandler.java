package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.HostAgentTables;
import sand.contracts.Trace;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.AppDirectory;
import sand.frontend.invoke.InvokeAuth;
import sand.frontend.invoke.InvokeHandler;
import sand.frontend.invoke.Qualifier;

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

  private InvokeAuth auth; // null: results of every endpoint are public (unit tests)

  /** Results follow their application's endpoint protection, as its invocations do. */
  public ExecutionsHandler useAuth(InvokeAuth auth) {
    this.auth = auth;
    return this;
  }

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
    // A row may have an end and no start (owner null): a synchronous request's result read after
    // its frontend
    // died or restarted, whose start was still held back (ExecutionLog). Nobody can show it is
    // theirs.
    return found
        .filter(e -> call.account().equals(e.owner()))
        .orElseThrow(() -> ApiException.notFound("no execution '" + id + "' of your applications"));
  }

  Reply get(Call call) {
    ExecutionRecord e = owned(call);
    String app = store.application(e.appId()).map(a -> a.name()).orElse(null);
    ObjectNode out = Json.object()
        .put("execution_id", e.executionId())
        .put("app", app)
        .put("status", e.status());
    out.set("result", Json.stored(e.result()));
    out.set("error", Json.stored(e.error()));
    ObjectNode t = out.putObject("timings")
        .put("started", iso(e.started()))
        .put("finished", iso(e.finished()));
    if (e.started() != null && e.finished() != null) {
      t.put("duration_ms", Duration.between(e.started(), e.finished()).toNanos() / 1e6);
    }
    // Every hop of the path that reached the result, from the frontend's receipt to its reply
    // (contracts Trace).
    t.set(
        "hops",
        e.timings() == null
            ? Json.MAPPER.createArrayNode()
            : Trace.of(Json.stored(e.timings())).timeline());
    // Every grain instance, a fan-out's branches and Map items too, each with its parent (contracts
    // Trace).
    out.set(
        "instances",
        e.timings() == null
            ? Json.MAPPER.createArrayNode()
            : Trace.of(Json.stored(e.timings())).instances());
    out.put("frontend", e.frontend());
    return Reply.ok(out);
  }

  /** An end user's result: what {@code POST /app/{app}} would have answered, or 202 while there is none yet. */
  Reply result(Call call) {
    String name = Qualifier.appName(call.param("app")); // the invoke URL's form works here too
    String id = call.param("id");
    var target = apps.find(name);
    if (auth != null && target.isPresent()) {
      auth.check(call, target.get());
    }
    String appId = target.map(AppDirectory.Target::appId).orElse(null);
    ExecutionRecord e =
        appId == null ? null : landed(id).filter(r -> appId.equals(r.appId())).orElse(null);
    if (e == null) {
      throw ApiException.notFound("no execution '" + id + "' of application '" + name
          + "' (results are kept for " + "the platform's execution.ttl.hours)");
    }
    Reply reply = switch (e.status()) {
      case "succeeded" ->
        Reply.json(
            200,
            Json.stored(e.result()) == null ? Json.MAPPER.nullNode() : Json.stored(e.result()));
      case "failed" -> {
        JsonNode error = Json.stored(e.error());
        boolean platform = error != null && "platform".equals(error.path("type").asText());
        yield platform
            ? Reply.error(new ApiException(
                502, "unavailable", error.path("message").asText("the platform failed")))
            : Reply.json(500, Json.object().set("error", error));
      }
      // running, or timeout: a synchronous caller stopped waiting, the result may still come
      default -> Reply.json(202, Json.object().put("execution_id", id).put("status", "running"));
    };
    return reply.withHeader(InvokeHandler.EXECUTION_HEADER, id);
  }

  /** Most log lines one answer carries, and by default. */
  static final int LOGS_MAX_LINES = 10_000;

  static final int LOGS_DEFAULT_LINES = 1000;

  /**
   * An execution's log lines, oldest first, a page at a time: at most {@code ?limit=} (default 1000, at most 10000)
   * after the cursor {@code ?after=} (the {@code next} of the page before); {@code next} is null on the last page.
   */
  Reply logs(Call call) {
    ExecutionRecord e = owned(call);
    int limit;
    LogCursor after;
    try {
      String l = call.query("limit");
      limit = l == null || l.isEmpty() ? LOGS_DEFAULT_LINES : Integer.parseInt(l);
      after = LogCursor.parse(call.query("after"));
    } catch (IllegalArgumentException x) {
      throw ApiException.badRequest("limit must be a number in 1.." + LOGS_MAX_LINES
          + " and after the 'next' of " + "an earlier page (" + x.getMessage() + ")");
    }
    if (limit < 1 || limit > LOGS_MAX_LINES) {
      throw ApiException.badRequest("limit=" + limit + " is invalid: 1.." + LOGS_MAX_LINES);
    }
    ObjectNode out = Json.object().put("execution_id", e.executionId());
    out.put(
        "next",
        page(pageOfLogs(store, e.executionId(), after, limit), null, limit, out.putArray("logs")));
    return Reply.ok(out);
  }

  /** A page's lines and one more (to tell whether there is a next page), read from the store as a page. */
  static List<HostAgentTables.LogLine> pageOfLogs(
      HostAgentTables store, String executionId, LogCursor after, int limit) {
    return after == null
        ? store.logs(executionId, Long.MIN_VALUE, Integer.MIN_VALUE, limit + 1)
        : store.logs(executionId, after.tsNanos(), after.seq(), limit + 1);
  }

  /** Where a page of log lines ends: the last line's time (ns) and sequence number, as "ts-seq". */
  record LogCursor(long tsNanos, int seq) {
    static LogCursor parse(String s) {
      if (s == null || s.isEmpty()) {
        return null;
      }
      int dash = s.lastIndexOf('-');
      if (dash <= 0) {
        throw new IllegalArgumentException("after=" + s + " is not a cursor");
      }
      return new LogCursor(
          Long.parseLong(s.substring(0, dash)), Integer.parseInt(s.substring(dash + 1)));
    }

    boolean before(HostAgentTables.LogLine l) {
      return tsNanos < l.tsNanos() || (tsNanos == l.tsNanos() && seq < l.seq());
    }

    @Override
    public String toString() {
      return tsNanos + "-" + seq;
    }
  }

  /** Add up to {@code limit} of {@code lines} after {@code after} to {@code arr}; the next page's cursor or null. */
  static String page(
      List<HostAgentTables.LogLine> lines, LogCursor after, int limit, ArrayNode arr) {
    int n = 0;
    for (var l : lines) {
      if (after != null && !after.before(l)) {
        continue;
      }
      if (n == limit) {
        JsonNode last = arr.get(arr.size() - 1);
        return last.path("cursor").asText();
      }
      arr.addObject()
          .put("time", Instant.ofEpochSecond(0, l.tsNanos()).toString())
          .put("grain", l.grain())
          .put("level", l.level())
          .put("text", l.text())
          .put("cursor", new LogCursor(l.tsNanos(), l.seq()).toString());
      n++;
    }
    return null;
  }

  private static String iso(Instant t) {
    return t == null ? null : t.toString();
  }
}
