package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.ExecutionTag;
import sand.hostagent.bridge.ConditionFlag;
import sand.hostagent.bridge.TopicNames;
import sand.hostagent.cluster.ClusterStore;
import sand.hostagent.cluster.ClusterStore.AppName;
import sand.hostagent.cluster.ClusterStore.ApplicationRecord;
import sand.hostagent.cluster.ClusterStore.ExecutionRecord;

/**
 * {@code POST /app/{app}}: an end user's request (Figure 4 step 0). The body becomes an event envelope
 * produced as a {@code new} record to the entry grain's topic; the answer is the first result on this
 * frontend's response topic (step 11). Synchronous by default (504 after the application's request
 * timeout, with the execution id); {@code ?async=1} answers 202 with the execution id at once. A grain's
 * error event is answered as 500 with the error event as the body. Every answer carries
 * {@code X-Sand-Execution-Id} once an execution exists.
 */
public final class InvokeHandler {
  private static final Logger LOG = LoggerFactory.getLogger(InvokeHandler.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  public static final String EXECUTION_HEADER = "X-Sand-Execution-Id";

  private final ClusterStore store;
  private final Producer<String, byte[]> producer;
  private final Results results;
  private final ExecutionTag tags;
  private final FrontendMetrics metrics;
  private final Clock clock;
  private final Executor executor;
  private final String frontendId;
  private final int defaultTimeoutS;
  private final int maxConcurrentPerAccount;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

  public InvokeHandler(ClusterStore store, Producer<String, byte[]> producer, Results results, ExecutionTag tags,
                       FrontendMetrics metrics, Clock clock, Executor executor, String frontendId,
                       int defaultTimeoutS, int maxConcurrentPerAccount) {
    this.store = store;
    this.producer = producer;
    this.results = results;
    this.tags = tags;
    this.metrics = metrics;
    this.clock = clock;
    this.executor = executor;
    this.frontendId = frontendId;
    this.defaultTimeoutS = defaultTimeoutS;
    this.maxConcurrentPerAccount = maxConcurrentPerAccount;
  }

  public void routes(Router r) {
    r.addAsync("POST", "/app/{app}", false, this::invoke);
  }

  static String newId() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  CompletionStage<Reply> invoke(Call call) {
    String name = call.param("app");
    AppName n = store.appName(name).orElseThrow(() -> ApiException.notFound("no application '" + name + "'"));
    ApplicationRecord app = store.application(n.appId()).orElseThrow(() -> ApiException.notFound(
        "no application '" + name + "'"));
    if (!"deployed".equals(app.desired())) {
      throw ApiException.conflict("application '" + name + "' is not deployed; its developer deploys it with "
          + "POST /api/v1/apps/" + name + "/deploy");
    }
    byte[] raw = call.body();
    JsonNode value = raw.length == 0 ? Json.object() : Json.parse(raw, "request body");
    AtomicInteger count = inFlight.computeIfAbsent(app.owner(), k -> new AtomicInteger());
    if (count.incrementAndGet() > maxConcurrentPerAccount) {
      count.decrementAndGet();
      metrics.invocation(name, "rejected");
      throw new ApiException(429, "too_many_requests", "the account owning '" + name + "' already has "
          + maxConcurrentPerAccount + " requests in flight on this frontend (setting max.concurrent.per.account); "
          + "retry later");
    }
    String executionId = newId();
    String entry = Workflow.parse(Json.stored(app.workflow())).entry();
    boolean async = call.flag("async");
    int timeoutS = n.requestTimeoutS() > 0 ? n.requestTimeoutS() : defaultTimeoutS;
    CompletableFuture<Reply> answer;
    try {
      store.putExecution(new ExecutionRecord(executionId, app.appId(), app.owner(), "running", null, null,
          clock.instant(), null, frontendId));
      CompletableFuture<ObjectNode> result = async ? null : results.expect(executionId);
      CompletableFuture<Void> sent = send(app.appId(), entry, executionId, value);
      answer = async
          ? sent.thenApply(v -> {
              metrics.invocation(name, "async");
              return Reply.json(202, Json.object().put("execution_id", executionId));
            })
          : sent.thenCompose(v -> result).orTimeout(timeoutS, TimeUnit.SECONDS)
              .handleAsync((event, failure) -> answer(name, executionId, event, failure, timeoutS), executor);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return answer.handle((reply, failure) -> {
      count.decrementAndGet();
      results.forget(executionId);
      if (failure != null) {
        Throwable t = failure.getCause() != null && failure instanceof java.util.concurrent.CompletionException
            ? failure.getCause() : failure;
        ApiException e = t instanceof RuntimeException re && Errors.platform(re) instanceof ApiException a ? a
            : new ApiException(502, "unavailable", "request could not be sent: " + t);
        if (e.status() == 502) {
          markFailed(executionId, e.getMessage());
        }
        return Reply.error(e).withHeader(EXECUTION_HEADER, executionId);
      }
      return reply.withHeader(EXECUTION_HEADER, executionId);
    });
  }

  /** Produce the request as a {@code new} record (key = event id) to the entry grain's topic. */
  private CompletableFuture<Void> send(String appId, String entry, String executionId, JsonNode value) {
    ObjectNode event = Json.object().put("id", newId()).put("execution_id", executionId).put("app", appId)
        .put("grain", entry).put("from", "").put("frontend", frontendId);
    event.set("value", value);
    event.put("sent_ns", clock.millis() * 1_000_000L);
    event.put(ExecutionTag.FIELD, tags.of(appId, executionId, frontendId));
    CompletableFuture<Void> sent = new CompletableFuture<>();
    producer.send(ConditionFlag.newEvent(event, "").toRecord(TopicNames.grainTopic(appId, entry), null),
        (meta, e) -> {
          if (e == null) {
            sent.complete(null);
          } else {
            sent.completeExceptionally(new ApiException(502, "unavailable", "the request could not be put into "
                + "Kafka topic " + TopicNames.grainTopic(appId, entry) + ": " + e.getMessage()));
          }
        });
    LOG.debug("[app {} execution {}] sent to {}", appId, executionId, entry);
    return sent;
  }

  private Reply answer(String name, String executionId, ObjectNode event, Throwable failure, int timeoutS) {
    if (failure != null) {
      Throwable t = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
          ? failure.getCause() : failure;
      if (t instanceof TimeoutException) {
        metrics.invocation(name, "timeout");
        try {
          store.finishExecution(executionId, "running", "timeout", null, "no result within " + timeoutS + " s",
              clock.instant());
        } catch (RuntimeException e) {
          LOG.warn("[execution {}] could not record the timeout: {}", executionId, e.toString());
        }
        throw new ApiException(504, "timeout", "application '" + name + "' did not answer within " + timeoutS
            + " s; the result, if it comes, is at GET /api/v1/executions/" + executionId,
            Map.of("execution_id", executionId));
      }
      throw t instanceof RuntimeException re ? re : new IllegalStateException(t);
    }
    JsonNode value = event.get("value");
    boolean error = Results.isError(value);
    metrics.invocation(name, error ? "error" : "ok");
    return Reply.json(error ? 500 : 200, value == null ? Json.MAPPER.nullNode() : value);
  }

  private void markFailed(String executionId, String why) {
    try {
      store.finishExecution(executionId, "running", "failed", null, Json.text(Json.object().put("type", "platform")
          .put("message", why)), clock.instant());
    } catch (RuntimeException e) {
      LOG.debug("[execution {}] could not record the failure: {}", executionId, e.toString());
    }
  }

  public int inFlight(String account) {
    AtomicInteger c = inFlight.get(account);
    return c == null ? 0 : c.get();
  }
}
