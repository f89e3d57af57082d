package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.InvokeHandler;
import sand.frontend.invoke.Results;

/**
 * A KNIX workflow's execution endpoint, {@code POST /app/{app}/knix} (docs/knix.md): the application's
 * {@code POST /app/{app}} with KNIX's replies. Synchronous: the workflow's output, and a grain's error as HTTP 200
 * {@code {"has_error": true, "error_type": "User code exception: <type>"}}; {@code ?async=True}: the execution
 * id as plain text; {@code ?executionId=ID}: waits for that execution's result (at most {@link #WAIT_S} s, KNIX's
 * SDK gives up after 60), or with {@code async} too answers {@code {"executionId", "result": null}} while running.
 */
public final class KnixExecutions {
  static final int WAIT_S = 60;
  /** First pause between reads of a running execution's record; it doubles up to {@link #POLL_MAX_MS}. */
  static final long POLL_MS = 50;

  static final long POLL_MAX_MS = 1000;
  /** An id with no record of this application is looked for this long (an async start being written), then 404. */
  static final long UNKNOWN_GRACE_MS = 1000;
  /** Most result waits at once on this frontend, and from one client address (more answer 429). */
  static final int MAX_WAITS = 1024;

  static final int MAX_WAITS_PER_ADDRESS = 32;

  private final InvokeHandler invoke;
  /** The id of an application by name, if there is one. */
  private final Function<String, Optional<String>> appIds;

  private final ClusterStore store;
  private final Results results;
  /** Reads of execution records: a few threads, and at most {@link #MAX_WAITS} waits queue work on them. */
  private final ScheduledExecutorService timer = Executors.newScheduledThreadPool(4, r -> {
    Thread t = new Thread(r, "knix-results");
    t.setDaemon(true);
    return t;
  });

  private final Map<String, AtomicInteger> waitsByAddress = new ConcurrentHashMap<>();
  private final AtomicInteger waits = new AtomicInteger();

  public KnixExecutions(
      InvokeHandler invoke, Function<String, Optional<String>> appIds, ClusterStore store) {
    this(invoke, appIds, store, null);
  }

  /** @param results this frontend's results: a wait is woken when its execution's result is recorded here */
  public KnixExecutions(
      InvokeHandler invoke,
      Function<String, Optional<String>> appIds,
      ClusterStore store,
      Results results) {
    this.invoke = invoke;
    this.appIds = appIds;
    this.store = store;
    this.results = results;
  }

  /** Result waits in progress (metrics). */
  public int waits() {
    return waits.get();
  }

  public void routes(Router r) {
    r.addAsync("POST", "/app/{app}" + KnixManagement.ENDPOINT_SUFFIX, false, this::execute);
  }

  public void close() {
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
      invoke.authorize(call); // a poll follows the endpoint's protection as the invocation did
      return result(call.param("app"), id, async, call.clientAddress());
    }
    return invoke.invoke(call, async).thenApply(r -> async ? asyncReply(r) : syncReply(r));
  }

  private static Reply asyncReply(Reply r) {
    if (r.status() != 202) {
      return r;
    }
    return Reply.text(
            200,
            "text/plain; charset=utf-8",
            Json.parse(r.body(), "reply").path("execution_id").asText())
        .withHeader(
            InvokeHandler.EXECUTION_HEADER,
            r.headers().getOrDefault(InvokeHandler.EXECUTION_HEADER, ""));
  }

  private static Reply syncReply(Reply r) {
    if (r.status() != 500) {
      return r;
    }
    JsonNode value = Json.parse(r.body(), "reply");
    if (!Results.isError(value)
        || value.path("error").has("code")) { // {"error": {"code", ...}}: the API's own
      return r;
    }
    Reply k = Reply.ok(knixError(value.path("error")));
    return r.headers().containsKey(InvokeHandler.EXECUTION_HEADER)
        ? k.withHeader(
            InvokeHandler.EXECUTION_HEADER, r.headers().get(InvokeHandler.EXECUTION_HEADER))
        : k;
  }

  /**
   * KNIX's shape of a grain's error ({@code {"type", "message", "grain"}} in SAND): exactly KNIX's two fields, as
   * its function worker publishes them (KNIX's tests compare the whole reply); the message and the grain are in
   * the workflow's log.
   */
  static ObjectNode knixError(JsonNode error) {
    return Json.object()
        .put("has_error", true)
        .put("error_type", "User code exception: " + error.path("type").asText("Exception"));
  }

  /**
   * The answer to a poll for execution {@code id} (issue 26, finding 9: polls of made-up ids re-read Cassandra every
   * 50 ms for 60 s on one thread and starved every tenant's waits). An id that is not one (32 hex digits) or has no
   * record of this application answers 404 (after {@link #UNKNOWN_GRACE_MS}, for a start still being written); a
   * running one is read again at growing pauses (50 ms up to 1 s) on a few threads, and at once when its result is
   * recorded by this frontend; waits are capped per client address and in all (429).
   */
  private CompletionStage<Reply> result(String name, String id, boolean async, String address) {
    String appId = appIds
        .apply(name)
        .orElseThrow(() -> ApiException.notFound("no application '" + name + "'"));
    if (!id.matches("[0-9a-f]{32}")) {
      throw ApiException.notFound(
          "no execution '" + id + "' of '" + name + "' (an execution id is 32 hex digits)");
    }
    AtomicInteger mine = waitsByAddress.computeIfAbsent(address, a -> new AtomicInteger());
    if (mine.incrementAndGet() > MAX_WAITS_PER_ADDRESS | waits.incrementAndGet() > MAX_WAITS) {
      release(address, mine);
      throw new ApiException(
          429,
          "too_many_requests",
          "too many result waits at once (" + MAX_WAITS_PER_ADDRESS + " per client address, "
              + MAX_WAITS + " on this frontend); try again in a moment",
          Map.of(Reply.RETRY_AFTER_S, "1"));
    }
    CompletableFuture<Reply> out = new CompletableFuture<>();
    long start = System.nanoTime();
    long deadline = start + TimeUnit.SECONDS.toNanos(WAIT_S);
    Runnable check = new Runnable() {
      private long pauseMs = POLL_MS;

      @Override
      public synchronized void run() {
        if (out.isDone()) {
          return;
        }
        try {
          Optional<ExecutionRecord> e = store.execution(id).filter(x -> appId.equals(x.appId()));
          Reply r = e.map(KnixExecutions::ended).orElse(null);
          long now = System.nanoTime();
          if (r != null) {
            out.complete(r.withHeader(InvokeHandler.EXECUTION_HEADER, id));
          } else if (e.isEmpty() && now - start > TimeUnit.MILLISECONDS.toNanos(UNKNOWN_GRACE_MS)) {
            out.completeExceptionally(
                ApiException.notFound("no execution '" + id + "' of '" + name + "'"));
          } else if (async && e.isPresent()) {
            out.complete(Reply.ok(Json.object().put("executionId", id).putNull("result")));
          } else if (now > deadline) {
            out.completeExceptionally(new ApiException(
                504,
                "timeout",
                "execution '" + id + "' of '" + name + "' has no result after " + WAIT_S + " s"));
          } else {
            timer.schedule(
                this, e.isEmpty() ? Math.min(pauseMs, 250) : pauseMs, TimeUnit.MILLISECONDS);
            pauseMs = Math.min(POLL_MAX_MS, pauseMs * 2);
          }
        } catch (RuntimeException ex) {
          out.completeExceptionally(ex);
        }
      }
    };
    Runnable wake = () -> timer.execute(check);
    if (results != null) {
      results.watch(id, wake);
    }
    out.whenComplete((r, t) -> {
      if (results != null) {
        results.unwatch(id, wake);
      }
      release(address, mine);
    });
    timer.execute(check);
    return out;
  }

  private void release(String address, AtomicInteger mine) {
    waits.decrementAndGet();
    if (mine.decrementAndGet() <= 0) {
      waitsByAddress.remove(address, mine); // bounded: only addresses waiting now are kept
    }
  }

  /** The reply for an execution that ended, or null while it runs. */
  private static Reply ended(ExecutionRecord e) {
    return switch (e.status().toLowerCase(Locale.ROOT)) {
      case "succeeded" ->
        Reply.json(
            200,
            Json.stored(e.result()) == null ? Json.MAPPER.nullNode() : Json.stored(e.result()));
      case "failed" -> {
        JsonNode error = Json.stored(e.error());
        yield error != null && "platform".equals(error.path("type").asText())
            ? Reply.error(new ApiException(
                502, "unavailable", error.path("message").asText("the platform failed")))
            : Reply.ok(knixError(error == null ? Json.object() : error));
      }
      default -> null; // running; a timeout only means a synchronous caller stopped waiting
    };
  }
}
