package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import org.apache.kafka.clients.producer.BufferExhaustedException;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.FrontendTables;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.KafkaClients;
import sand.common.log.LogIdentity;
import sand.contracts.ConditionFlag;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.contracts.TopicNames;
import sand.contracts.Trace;
import sand.frontend.FrontendMetrics;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Errors;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code POST /app/{app}} (or {@code /app/{app}@{alias or version}}, {@link Qualifier}): an end user's request (Figure 4 step 0). The body becomes an event envelope
 * produced as a {@code new} record to the entry grain's topic; the answer is the first result for it (step 11).
 * Synchronous by default (504 after the application's request timeout, with the execution id);
 * {@code ?async=1} answers 202 with the execution id as soon as Kafka has the request. A grain's error event is
 * answered as 500 with the error event as the body. Every answer carries {@code X-Sand-Execution-Id} once an
 * execution exists.
 *
 * <p>Nothing waits for Cassandra on the way: the application comes from {@link AppDirectory}, and the
 * execution's records are written behind by {@link ExecutionLog}.
 */
public final class InvokeHandler {
  private static final Logger LOG = LoggerFactory.getLogger(InvokeHandler.class);
  public static final String EXECUTION_HEADER = "X-Sand-Execution-Id";
  /** How long an async 202 waits for its execution's start record (usually ~1 ms). */
  private static final long START_RECORD_WAIT_MS = 2000;

  private final AppDirectory apps;
  private final Producer<String, byte[]> producer;
  private AgentGates gates;
  private InvokeAuth auth; // null: every endpoint public (unit tests of the rest)
  private final Results results;
  private final ExecutionLog log;
  private final ExecutionTag tags;
  private final FrontendMetrics metrics;
  private final Clock clock;
  private final String frontendId;
  private final int defaultTimeoutS;
  private final int maxConcurrentPerAccount;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
  private volatile IntSupplier liveFrontends = () -> 1;
  private final RequestRate rate = new RequestRate();
  /** Picks an alias's version per request (a canary's share); tests pass their own. */
  private volatile DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();

  private volatile int requestsPerSecond; // the account's cluster-wide rate quota; 0: none
  private IdempotencyKeys
      keys; // null: the Idempotency-Key header is refused (unit tests of the rest)
  private AsyncRunner asyncRunner; // null: an asynchronous request runs once, never retried

  /**
   * Runs an asynchronous request with retries and dead letters (sand.frontend.trigger.Deliveries): the future
   * completes when the first attempt's event is on its way; empty when the frontend holds as many as it may.
   */
  public interface AsyncRunner {
    java.util.Optional<CompletableFuture<Void>> run(
        AppDirectory.Target app, JsonNode value, String executionId);
  }

  public void useAsyncRunner(AsyncRunner runner) {
    this.asyncRunner = runner;
  }

  public InvokeHandler(
      AppDirectory apps,
      Producer<String, byte[]> producer,
      Results results,
      ExecutionLog log,
      ExecutionTag tags,
      FrontendMetrics metrics,
      Clock clock,
      String frontendId,
      int defaultTimeoutS,
      int maxConcurrentPerAccount) {
    this.apps = apps;
    this.producer = producer;
    this.results = results;
    this.log = log;
    this.tags = tags;
    this.metrics = metrics;
    this.clock = clock;
    this.frontendId = frontendId;
    this.defaultTimeoutS = defaultTimeoutS;
    this.maxConcurrentPerAccount = maxConcurrentPerAccount;
  }

  /**
   * The account's concurrency limit is the cluster's: each of the live frontends (nginx spreads requests evenly)
   * admits its share, the limit divided by their number, rounded up.
   */
  public void shareLimitWith(IntSupplier liveFrontends) {
    this.liveFrontends = liveFrontends;
  }

  /** An account's requests per second in the cluster (each live frontend admits its share); 0 for no quota. */
  public void limitRate(int requestsPerSecond) {
    this.requestsPerSecond = requestsPerSecond;
  }

  public int share() {
    return share(maxConcurrentPerAccount, liveFrontends.getAsInt());
  }

  public static int share(int limit, int liveFrontends) {
    int live = Math.max(1, liveFrontends);
    return Math.max(1, (limit + live - 1) / live);
  }

  /** Where an alias with a canary draws its numbers (tests). */
  public void useRandom(DoubleSupplier random) {
    this.random = random;
  }

  /** Hand requests to host agents through their gates first (Kafka when none takes one). */
  public void useGates(AgentGates gates) {
    this.gates = gates;
  }

  /** Honour {@code Idempotency-Key} headers with these keys. */
  public void useKeys(IdempotencyKeys keys) {
    this.keys = keys;
  }

  /** Check every request against its application's endpoint protection. */
  public void useAuth(InvokeAuth auth) {
    this.auth = auth;
  }

  /** The endpoint check alone, for the KNIX door's result polls (401 when the call may not reach the app). */
  public void authorize(Call call) {
    if (auth != null) {
      auth.check(call);
    }
  }

  public void routes(Router r) {
    r.addAsync("POST", "/app/{app}", false, c -> invoke(c, c.flag("async")));
  }

  /** Run the application named by the call's {@code app} with its body; {@code async} answers 202 at once. */
  public CompletionStage<Reply> invoke(Call call, boolean async) {
    long received = System.nanoTime();
    String name = Qualifier.appName(call.param("app"));
    AppDirectory.Target app =
        apps.find(name).orElseThrow(() -> ApiException.notFound("no application '" + name + "'"));
    String executionId = Ids.newId();
    LogIdentity.Scope log = LogIdentity.scope(app.appId(), executionId); // on this thread's lines
    try {
      return invoke(call, async, received, name, app, executionId);
    } finally {
      log.close();
    }
  }

  private CompletionStage<Reply> invoke(
      Call call,
      boolean async,
      long received,
      String name,
      AppDirectory.Target app,
      String executionId) {
    if (auth != null) {
      auth.check(call, app); // before anything else about the app (deployed?) is told
    }
    if (!app.deployed()) {
      throw ApiException.conflict(
          "application '" + name + "' is not deployed; its developer deploys it with "
              + "POST /api/v1/apps/" + name + "/deploy");
    }
    Qualifier.check(app, Qualifier.of(call.param("app")), random);
    byte[] raw = call.body();
    JsonNode value = raw.length == 0 ? Json.object() : Json.parse(raw, "request body");
    int perSecond = requestsPerSecond;
    if (perSecond > 0) {
      int live = Math.max(1, liveFrontends.getAsInt());
      if (!rate.take(app.owner(), (double) perSecond / live, System.nanoTime())) {
        metrics.invocation(name, "rejected");
        throw new ApiException(
            429,
            "too_many_requests",
            "the account owning '" + name + "' is above its rate of "
                + perSecond
                + " requests per second in the cluster (setting quota.requests.per.second); retry in a "
                + "second");
      }
    }
    AtomicInteger count = inFlight.computeIfAbsent(app.owner(), k -> new AtomicInteger());
    int share = share();
    if (count.incrementAndGet() > share) {
      count.decrementAndGet();
      metrics.invocation(name, "rejected");
      throw new ApiException(
          429,
          "too_many_requests",
          "the account owning '" + name + "' has reached its limit of "
              + maxConcurrentPerAccount + " requests in flight in the cluster (" + share
              + " on each of "
              + Math.max(1, liveFrontends.getAsInt())
              + " frontends; setting max.concurrent.per.account); retry later");
    }
    int timeoutS = timeoutS(app);
    String key = IdempotencyKeys.check(call.header(IdempotencyKeys.HEADER));
    if (key != null) {
      if (keys == null) {
        count.decrementAndGet();
        throw ApiException.badRequest(
            "this frontend takes no " + IdempotencyKeys.HEADER + " header");
      }
      String sha = IdempotencyKeys.sha256(raw);
      var first = keys.claim(app.appId(), key, executionId, sha);
      if (first.isPresent()) {
        count.decrementAndGet();
        if (!sha.equals(first.get().bodySha256())) {
          throw new ApiException(
              422,
              "idempotency_key_reused",
              "the " + IdempotencyKeys.HEADER + " '" + key + "' was used within "
                  + IdempotencyKeys.WINDOW.toHours() + " h with another body (execution "
                  + first.get().executionId() + "); use a new key for a new request");
        }
        metrics.invocation(name, "replayed");
        return replay(first.get().executionId(), async, timeoutS);
      }
    }
    CompletableFuture<Reply> answer;
    if (async && asyncRunner != null) {
      try {
        answer = asyncRunner
            .run(app, value, executionId)
            .orElseThrow(() -> new ApiException(
                503,
                "busy",
                "this frontend holds as many asynchronous events as it may; try again in a moment",
                Map.of(Reply.RETRY_AFTER_S, "1")))
            .thenApply(v -> {
              metrics.invocation(name, "async");
              return Reply.json(202, Json.object().put("execution_id", executionId));
            });
      } catch (RuntimeException e) {
        answer = CompletableFuture.failedFuture(e);
      }
      return finish(answer, count, executionId, app, key, false);
    }
    try {
      ExecutionRecord record = running(app, executionId);
      // An async request's id is answered at once, so a GET right after the 202 must find its
      // record: the 202
      // waits for the start to be written, bounded (Cassandra away must not hold the answer; the
      // write goes on).
      CompletableFuture<Void> recorded = CompletableFuture.completedFuture(null);
      if (async) {
        recorded = log.started(record)
            .completeOnTimeout(null, START_RECORD_WAIT_MS, TimeUnit.MILLISECONDS);
      } else {
        log.startedSynchronously(record);
      }
      CompletableFuture<Results.Arrival> result =
          async ? null : results.expect(executionId, app.appId());
      Event event = request(app, executionId, value).trace(Trace.FRONTEND, frontendId, received);
      CompletableFuture<Void> sent = submit(event, app);
      answer = async
          ? sent.thenCombine(recorded, (v, w) -> w).thenApply(v -> {
            metrics.invocation(name, "async");
            return Reply.json(202, Json.object().put("execution_id", executionId));
          })
          : sent.thenCompose(v -> result)
              .orTimeout(timeoutS, TimeUnit.SECONDS)
              .handle((arrival, failure) ->
                  answer(name, executionId, result, arrival, failure, timeoutS));
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return finish(answer, count, executionId, app, key, true);
  }

  private CompletionStage<Reply> finish(
      CompletableFuture<Reply> answer,
      AtomicInteger count,
      String executionId,
      AppDirectory.Target app,
      String key,
      boolean waitsHere) {
    return answer.handle((reply, failure) -> {
      count.decrementAndGet();
      if (waitsHere) { // else the delivery that runs it still waits for its result
        results.forget(executionId);
      }
      if (failure != null) {
        Throwable t = failure.getCause() != null && failure instanceof CompletionException
            ? failure.getCause()
            : failure;
        ApiException e =
            t instanceof RuntimeException re && Errors.platform(re) instanceof ApiException a
                ? a
                : new ApiException(502, "unavailable", "request could not be sent: " + t);
        if (e.status() == 502) {
          if (key != null) {
            keys.release(app.appId(), key, executionId); // nothing ran: the key may be used again
          }
          log.ended(
              executionId,
              "failed",
              null,
              Json.text(Json.object().put("type", "platform").put("message", e.getMessage())),
              clock.instant(),
              null,
              FrontendTables.RANK_FAILED);
        }
        log.release(
            executionId); // ended without a result or timeout: its start is still worth keeping
        return Reply.error(e).withHeader(EXECUTION_HEADER, executionId);
      }
      log.release(executionId);
      return reply.withHeader(EXECUTION_HEADER, executionId);
    });
  }

  /** The record of an execution that starts now on this frontend. */
  private ExecutionRecord running(AppDirectory.Target app, String executionId) {
    return new ExecutionRecord(
        executionId,
        app.appId(),
        app.owner(),
        "running",
        null,
        null,
        clock.instant(),
        null,
        frontendId,
        null);
  }

  /** The event that starts an execution at the application's entry grain, tagged for this frontend. */
  private Event request(AppDirectory.Target app, String executionId, JsonNode value) {
    Instant now = clock.instant();
    return Event.request(
        Ids.newId(),
        executionId,
        app.appId(),
        app.entry(),
        frontendId,
        value,
        now.getEpochSecond() * 1_000_000_000L + now.getNano(),
        tags.of(app.appId(), executionId, frontendId));
  }

  /** Hand the event to a host agent's gate, else to Kafka. */
  private CompletableFuture<Void> submit(Event event, AppDirectory.Target app) {
    return gates != null && gates.submit(event, app.hosts())
        ? CompletableFuture.completedFuture(null)
        : send(event);
  }

  private int timeoutS(AppDirectory.Target app) {
    return app.requestTimeoutS() > 0 ? app.requestTimeoutS() : defaultTimeoutS;
  }

  /**
   * A request whose idempotency key an earlier one claimed: nothing runs; the answer is the first execution's (202
   * with its id when asynchronous; else its output once it has ended, 504 if it has not within the timeout).
   */
  private CompletionStage<Reply> replay(String firstId, boolean async, int timeoutS) {
    if (async) {
      return CompletableFuture.completedFuture(
          Reply.json(202, Json.object().put("execution_id", firstId))
              .withHeader(EXECUTION_HEADER, firstId)
              .withHeader(IdempotencyKeys.REPLAYED_HEADER, "true"));
    }
    return keys.awaitEnd(firstId, java.time.Duration.ofSeconds(timeoutS)).thenApply(r -> {
      if (r.isEmpty()) {
        throw new ApiException(
            504,
            "timeout",
            "the execution " + firstId + " that this request's " + IdempotencyKeys.HEADER
                + " started has not ended within " + timeoutS
                + " s; its result, if it comes, is at GET /api/v1/executions/" + firstId,
            Map.of("execution_id", firstId));
      }
      int status = "succeeded".equals(r.get().status()) ? 200 : 500;
      return Reply.json(status, IdempotencyKeys.body(r.get()))
          .withHeader(EXECUTION_HEADER, firstId)
          .withHeader(IdempotencyKeys.REPLAYED_HEADER, "true");
    });
  }

  /**
   * How an execution that no caller waits on ended ({@link #launch}).
   *
   * @param status "succeeded", "failed" (a grain's error), "timeout" or {@link #UNSENT} (not sent: nothing ran)
   * @param value  the output, or the error event's {"error": ...}
   */
  public record Outcome(String executionId, String status, JsonNode value) {
    public static final String UNSENT = "unavailable";

    public boolean succeeded() {
      return "succeeded".equals(status);
    }
  }

  /**
   * Run {@code app} on {@code value} for a trigger or an asynchronous delivery (docs/triggers.md): the same path as
   * a request (start record, gate or Kafka, the result recorded), with {@code source} (e.g. "timer:nightly") in the
   * execution's timeline. Completes when the execution has ended or its timeout passed; never exceptionally.
   */
  public Launch launch(AppDirectory.Target app, JsonNode value, String source, String executionId) {
    LogIdentity.Scope log = LogIdentity.scope(app.appId(), executionId); // on this thread's lines
    try {
      return launch(app, value, source, executionId, System.nanoTime());
    } finally {
      log.close();
    }
  }

  private Launch launch(
      AppDirectory.Target app, JsonNode value, String source, String executionId, long fired) {
    int timeoutS = timeoutS(app);
    ExecutionRecord record = running(app, executionId);
    CompletableFuture<Results.Arrival> result;
    CompletableFuture<Void> sent;
    CompletableFuture<Void> recorded;
    try {
      // written now, not with its end: nobody waits on it, so it is listed while it runs
      recorded =
          log.started(record).completeOnTimeout(null, START_RECORD_WAIT_MS, TimeUnit.MILLISECONDS);
      result = results.expect(executionId, app.appId());
      Event event = request(app, executionId, value)
          .trace(Trace.TRIGGER, source + "@" + frontendId, fired)
          .trace(Trace.FRONTEND, frontendId, System.nanoTime());
      sent = submit(event, app);
    } catch (RuntimeException e) {
      results.forget(executionId);
      return new Launch(
          executionId,
          CompletableFuture.failedFuture(e),
          CompletableFuture.completedFuture(unsent(executionId, e)));
    }
    CompletableFuture<Results.Arrival> r = result;
    return new Launch(
        executionId,
        sent.thenCombine(recorded, (a, b) -> a),
        sent.thenCompose(v -> r)
            .orTimeout(timeoutS, TimeUnit.SECONDS)
            .handle((arrival, failure) -> {
              try {
                if (failure == null) {
                  results.record(arrival, System.nanoTime());
                  JsonNode out = arrival.event().value();
                  return new Outcome(
                      executionId, Results.isError(out) ? "failed" : "succeeded", out);
                }
                Throwable t = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause()
                    : failure;
                if (t instanceof TimeoutException) {
                  log.ended(
                      executionId,
                      "timeout",
                      null,
                      "no result within " + timeoutS + " s",
                      clock.instant(),
                      null,
                      FrontendTables.RANK_TIMEOUT);
                  results.stopWaiting(executionId, r);
                  return new Outcome(
                      executionId,
                      "timeout",
                      Json.object()
                          .set(
                              "error",
                              Json.object()
                                  .put("type", "timeout")
                                  .put("message", "no result within " + timeoutS + " s")));
                }
                return unsent(executionId, t);
              } finally {
                results.forget(executionId);
                log.release(executionId);
              }
            }));
  }

  /** An execution {@link #launch}ed: {@code sent} when its event is on its way, {@code outcome} when it ended. */
  public record Launch(
      String executionId, CompletableFuture<Void> sent, CompletableFuture<Outcome> outcome) {}

  private Outcome unsent(String executionId, Throwable t) {
    String message = "the event could not be sent: " + t.getMessage();
    log.ended(
        executionId,
        "failed",
        null,
        Json.text(Json.object().put("type", "platform").put("message", message)),
        clock.instant(),
        null,
        FrontendTables.RANK_FAILED);
    log.release(executionId);
    return new Outcome(
        executionId,
        Outcome.UNSENT,
        Json.object().set("error", Json.object().put("type", "platform").put("message", message)));
  }

  /** Produce the request as a {@code new} record (key = event id) to the entry grain's topic. */
  public CompletableFuture<Void> send(Event event) {
    CompletableFuture<Void> sent = new CompletableFuture<>();
    String appId = event.app();
    String entry = event.grain();
    String topic = TopicNames.grainTopic(appId, entry);
    producer.send(
        KafkaClients.record(topic, null, ConditionFlag.newEvent(event.json(), "")), (meta, e) -> {
          if (e == null) {
            sent.complete(null);
          } else if (e instanceof BufferExhaustedException) {
            // the producer's memory is full of other large requests: a moment's wait helps, nothing
            // is down
            sent.completeExceptionally(new ApiException(
                503,
                "busy",
                "this frontend's Kafka producer holds as many "
                    + "request bytes as it may; this request was not sent: try again in a moment",
                Map.of(Reply.RETRY_AFTER_S, "1")));
          } else {
            sent.completeExceptionally(new ApiException(
                502,
                "unavailable",
                "the request could not be put into " + "Kafka topic " + topic + ": "
                    + e.getMessage()));
          }
        });
    LOG.debug("[app {} execution {}] sent to {}", appId, event.executionId(), entry);
    return sent;
  }

  private Reply answer(
      String name,
      String executionId,
      CompletableFuture<Results.Arrival> result,
      Results.Arrival arrival,
      Throwable failure,
      int timeoutS) {
    if (failure != null) {
      Throwable t = failure instanceof CompletionException && failure.getCause() != null
          ? failure.getCause()
          : failure;
      if (t instanceof TimeoutException) {
        metrics.invocation(name, "timeout");
        log.ended(
            executionId,
            "timeout",
            null,
            "no result within " + timeoutS + " s",
            clock.instant(),
            null,
            FrontendTables.RANK_TIMEOUT);
        results.stopWaiting(executionId, result);
        throw new ApiException(
            504,
            "timeout",
            "application '" + name + "' did not answer within " + timeoutS
                + " s; the result, if it comes, is at GET /api/v1/executions/" + executionId,
            Map.of("execution_id", executionId));
      }
      throw t instanceof RuntimeException re ? re : new IllegalStateException(t);
    }
    JsonNode value = arrival.event().value();
    boolean error = Results.isError(value);
    metrics.invocation(name, error ? "error" : "ok");
    Reply reply = Reply.json(error ? 500 : 200, value == null ? Json.MAPPER.nullNode() : value);
    results.record(arrival, System.nanoTime());
    return reply;
  }
}
