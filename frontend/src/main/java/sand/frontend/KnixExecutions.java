package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;

/**
 * A KNIX workflow's execution endpoint, {@code POST /app/{app}/knix} (docs/knix.md): the application's
 * {@code POST /app/{app}} with KNIX's replies. Synchronous: the workflow's output, and a grain's error as HTTP 200
 * {@code {"has_error": true, "error_type": "User code exception: <type>", ...}}; {@code ?async=True}: the execution
 * id as plain text; {@code ?executionId=ID}: waits for that execution's result (at most {@link #WAIT_S} s, KNIX's
 * SDK gives up after 60), or with {@code async} too answers {@code {"executionId", "result": null}} while running.
 */
final class KnixExecutions {
  static final int WAIT_S = 60;
  static final long POLL_MS = 50;

  private final InvokeHandler invoke;
  private final AppDirectory apps;
  private final ClusterStore store;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "knix-results");
    t.setDaemon(true);
    return t;
  });

  KnixExecutions(InvokeHandler invoke, AppDirectory apps, ClusterStore store) {
    this.invoke = invoke;
    this.apps = apps;
    this.store = store;
  }

  public void routes(Router r) {
    r.addAsync("POST", "/app/{app}" + KnixManagement.ENDPOINT_SUFFIX, false, this::execute);
  }

  void close() {
    timer.shutdownNow();
  }

  /** KNIX's reading of a yes/no query parameter: present, not empty, not "false" and not "0". */
  static boolean knixFlag(String v) {
    return v != null && !v.isEmpty() && !v.equalsIgnoreCase("false") && !v.equals("0");
  }

  CompletionStage<Reply> execute(Call call) throws Exception {
    boolean async = knixFlag(call.query("async"));
    String id = call.query("executionId");
    if (id != null && !id.isEmpty()) {
      return result(call.param("app"), id, async);
    }
    return invoke.invoke(call, async).thenApply(r -> async ? asyncReply(r) : syncReply(r));
  }

  private static Reply asyncReply(Reply r) {
    if (r.status() != 202) {
      return r;
    }
    return Reply.text(200, "text/plain; charset=utf-8", Json.parse(r.body(), "reply").path("execution_id").asText())
        .withHeader(InvokeHandler.EXECUTION_HEADER, r.headers().getOrDefault(InvokeHandler.EXECUTION_HEADER, ""));
  }

  private static Reply syncReply(Reply r) {
    if (r.status() != 500) {
      return r;
    }
    JsonNode value = Json.parse(r.body(), "reply");
    if (!Results.isError(value) || value.path("error").has("code")) { // {"error": {"code", ...}}: the API's own
      return r;
    }
    Reply k = Reply.ok(knixError(value.path("error")));
    return r.headers().containsKey(InvokeHandler.EXECUTION_HEADER)
        ? k.withHeader(InvokeHandler.EXECUTION_HEADER, r.headers().get(InvokeHandler.EXECUTION_HEADER)) : k;
  }

  /** KNIX's shape of a grain's error ({@code {"type", "message", "grain"}} in SAND). */
  static ObjectNode knixError(JsonNode error) {
    return Json.object().put("has_error", true)
        .put("error_type", "User code exception: " + error.path("type").asText("Exception"))
        .put("error_message", error.path("message").asText("")).put("grain", error.path("grain").asText(""));
  }

  private CompletionStage<Reply> result(String name, String id, boolean async) {
    String appId = apps.find(name).map(AppDirectory.Target::appId)
        .orElseThrow(() -> ApiException.notFound("no application '" + name + "'"));
    CompletableFuture<Reply> out = new CompletableFuture<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
    Runnable check = new Runnable() {
      @Override
      public void run() {
        try {
          Optional<ExecutionRecord> e = store.execution(id).filter(x -> appId.equals(x.appId()));
          Reply r = e.map(KnixExecutions::ended).orElse(null);
          if (r != null) {
            out.complete(r.withHeader(InvokeHandler.EXECUTION_HEADER, id));
          } else if (async) {
            out.complete(Reply.ok(Json.object().put("executionId", id).putNull("result")));
          } else if (System.nanoTime() > deadline) {
            out.completeExceptionally(new ApiException(504, "timeout", "execution '" + id + "' of '" + name
                + "' has no result after " + WAIT_S + " s" + (e.isEmpty() ? " (and no record: is the id right?)" : "")));
          } else {
            timer.schedule(this, POLL_MS, TimeUnit.MILLISECONDS);
          }
        } catch (RuntimeException ex) {
          out.completeExceptionally(ex);
        }
      }
    };
    timer.execute(check);
    return out;
  }

  /** The reply for an execution that ended, or null while it runs. */
  private static Reply ended(ExecutionRecord e) {
    return switch (e.status().toLowerCase(Locale.ROOT)) {
      case "succeeded" -> Reply.json(200, Json.stored(e.result()) == null ? Json.MAPPER.nullNode()
          : Json.stored(e.result()));
      case "failed" -> {
        JsonNode error = Json.stored(e.error());
        yield error != null && "platform".equals(error.path("type").asText())
            ? Reply.error(new ApiException(502, "unavailable", error.path("message").asText("the platform failed")))
            : Reply.ok(knixError(error == null ? Json.object() : error));
      }
      default -> null; // running; a timeout only means a synchronous caller stopped waiting
    };
  }
}
