package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.ExecutionTag;
import sand.hostagent.cluster.ClusterStore;

/**
 * Results arriving on this frontend's response topic (Figure 4 step 11): each is stored in the execution's
 * row (the first result per execution id wins, later ones are ignored, docs/host-agent.md "Results: one
 * answer per execution id") and then completes the synchronous request waiting for it, if any.
 *
 * <p>A result counts only when its {@link ExecutionTag} shows that its execution entered through the
 * application that produced it (the host agent names that application in the event) and answers to this
 * frontend; anything else is dropped before it costs a Cassandra write (docs/security.md).
 */
public final class Results {
  private static final Logger LOG = LoggerFactory.getLogger(Results.class);

  private final ClusterStore store;
  private final Clock clock;
  private final Executor executor;
  private final ExecutionTag tags;
  private final String frontendId;
  private final java.util.concurrent.atomic.AtomicLong refused = new java.util.concurrent.atomic.AtomicLong();
  private final Map<String, CompletableFuture<ObjectNode>> waiting = new ConcurrentHashMap<>();
  /**
   * Execution ids whose first result already arrived, in topic order (bounded: duplicates from a
   * re-run arrive close together; an older one is caught by the store's conditional update).
   */
  private final Map<String, Boolean> recent = new java.util.LinkedHashMap<>(1024, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > RECENT_RESULTS;
    }
  };
  static final int RECENT_RESULTS = 100_000;

  public Results(ClusterStore store, Clock clock, Executor executor, ExecutionTag tags, String frontendId) {
    this.store = store;
    this.clock = clock;
    this.executor = executor;
    this.tags = tags;
    this.frontendId = frontendId;
  }

  /** Results dropped because their tag did not match (forged or misrouted). */
  public long refused() {
    return refused.get();
  }

  /** Wait for the result of {@code executionId}; call before the request is sent. */
  CompletableFuture<ObjectNode> expect(String executionId) {
    return waiting.computeIfAbsent(executionId, k -> new CompletableFuture<>());
  }

  void forget(String executionId) {
    waiting.remove(executionId);
  }

  public int waiting() {
    return waiting.size();
  }

  /** Is this value a grain's error event ({"error": {"type", "message", "grain"}}, grainworker/envelope.py)? */
  static boolean isError(JsonNode value) {
    return value != null && value.isObject() && value.size() == 1 && value.path("error").isObject();
  }

  /** A record from the response topic (key = execution id, value = the event that reached end). */
  void arrived(String key, byte[] value) {
    ObjectNode event;
    try {
      JsonNode n = Json.MAPPER.readTree(value);
      if (n == null || !n.isObject()) {
        throw new IllegalArgumentException("not a JSON object");
      }
      event = (ObjectNode) n;
    } catch (Exception e) {
      LOG.warn("[execution {}] unreadable result skipped: {}", key, e.getMessage());
      return;
    }
    String executionId = event.path("execution_id").asText(key == null ? "" : key);
    if (executionId.isEmpty()) {
      LOG.warn("result without execution id skipped: {}", event);
      return;
    }
    String app = event.path("app").asText("");
    if (!tags.verify(event.path(ExecutionTag.FIELD).asText(null), app, executionId, frontendId)) {
      refused.incrementAndGet();
      LOG.warn("[execution {}] result from application '{}' dropped: its tag does not show that the execution "
          + "entered through that application on this frontend", executionId, app);
      return;
    }
    // "First result wins" is decided here, in the order the results arrived; the work after it runs on
    // the executor, where two results of one execution would otherwise race.
    synchronized (recent) {
      if (recent.put(executionId, Boolean.TRUE) != null) {
        LOG.debug("[execution {}] later result ignored", executionId);
        return;
      }
    }
    executor.execute(() -> complete(executionId, event));
  }

  private void complete(String executionId, ObjectNode event) {
    JsonNode v = event.get("value");
    boolean failed = isError(v);
    try {
      String text = v == null ? "null" : Json.text(v);
      boolean first = store.finishExecution(executionId, "running", failed ? "failed" : "succeeded",
          failed ? null : text, failed ? Json.text(v.get("error")) : null, clock.instant())
          || store.finishExecution(executionId, "timeout", failed ? "failed" : "succeeded", failed ? null : text,
          failed ? Json.text(v.get("error")) : null, clock.instant());
      LOG.debug("[execution {}] result {}{}", executionId, failed ? "error" : "ok", first ? "" : " (not the first)");
    } catch (RuntimeException e) {
      LOG.warn("[execution {}] result could not be stored: {}", executionId, e.toString());
    }
    CompletableFuture<ObjectNode> f = waiting.remove(executionId);
    if (f != null) {
      f.complete(event);
    }
  }
}
