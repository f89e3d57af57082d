package sand.frontend.invoke;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.FrontendTables;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.contracts.Trace;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;

/**
 * Results arriving for this frontend (Figure 4 step 11): the first result per execution id wins (decided here,
 * in arrival order, in memory: no Cassandra round trip before the answer), it completes the synchronous
 * request waiting for it at once, and its record is written behind ({@link ExecutionLog}) with a rank that
 * keeps it first in Cassandra too (docs/host-agent.md "Results: one answer per execution id").
 *
 * <p>A result counts only when its {@link ExecutionTag} shows that its execution entered through the
 * application that produced it (the host agent names that application in the event) and answers to this
 * frontend; anything else is dropped before it costs anything (docs/security.md).
 */
public final class Results {
  private static final Logger LOG = LoggerFactory.getLogger(Results.class);
  private static final int RECENT_RESULTS = 100_000;

  /**
   * A result as it arrived: the event that reached end, when (monotonic ns) and its rank; {@code recorded}
   * completes once its record is written (the response topic's offset is committed only past recorded results).
   */
  record Arrival(Event event, long arrivedNanos, long rank, CompletableFuture<Void> recorded) {}

  private static final CompletableFuture<Void> NOTHING_TO_RECORD =
      CompletableFuture.completedFuture(null);

  private final ExecutionLog log;
  private final Clock clock;
  private final ExecutionTag tags;
  private final String frontendId;
  private final Map<String, CompletableFuture<Arrival>> waiting = new ConcurrentHashMap<>();
  /** The application each synchronous request in {@link #waiting} went to (for {@link #abandon}). */
  private final Map<String, String> waitingApp = new ConcurrentHashMap<>();

  private final AtomicLong refused = new AtomicLong();
  /** Told of each end that nobody here waited for (a data trigger's: its retries, sand.frontend.trigger). */
  private volatile Consumer<Event> unawaited = e -> {};
  /** Who waits for an execution's record without a request of its own here (KNIX polls): told once it is written. */
  private final Map<String, List<Runnable>> watchers = new ConcurrentHashMap<>();
  /**
   * Execution ids whose first result already arrived, in arrival order (bounded: duplicates come close together),
   * with when that result is recorded: a duplicate (the Kafka copy of a gate's result) is recorded when it is.
   */
  private final Map<String, CompletableFuture<Void>> recent =
      new LinkedHashMap<>(1024, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CompletableFuture<Void>> eldest) {
          return size() > RECENT_RESULTS;
        }
      };

  public Results(ExecutionLog log, Clock clock, ExecutionTag tags, String frontendId) {
    this.log = log;
    this.clock = clock;
    this.tags = tags;
    this.frontendId = frontendId;
  }

  /**
   * Tell {@code c} of each first result that no request here waited for (an execution a host agent started), once
   * it is recorded; returns this.
   */
  public Results onUnawaitedEnd(Consumer<Event> c) {
    this.unawaited = c;
    return this;
  }

  /** Results dropped because their tag did not match (forged or misrouted). */
  public long refused() {
    return refused.get();
  }

  /** Wait for the result of {@code executionId}; call before the request is sent. */
  CompletableFuture<Arrival> expect(String executionId) {
    return waiting.computeIfAbsent(executionId, k -> new CompletableFuture<>());
  }

  /** {@link #expect(String)}, remembering the application (deployment id) the request was sent to. */
  CompletableFuture<Arrival> expect(String executionId, String appId) {
    waitingApp.put(executionId, appId);
    return expect(executionId);
  }

  void forget(String executionId) {
    waiting.remove(executionId);
    waitingApp.remove(executionId);
  }

  /**
   * The application was undeployed: its synchronous requests still waiting here will get no result (its hosts
   * handed their queued events back), so each is answered with {@code why} and recorded as failed. Returns how
   * many.
   */
  public int abandon(String appId, ApiException why) {
    int n = 0;
    for (var e : waitingApp.entrySet()) {
      if (!e.getValue().equals(appId)) {
        continue;
      }
      CompletableFuture<Arrival> f = waiting.get(e.getKey());
      if (f != null && f.completeExceptionally(why)) {
        n++;
        log.ended(
            e.getKey(),
            "failed",
            null,
            Json.text(Json.object().put("type", "platform").put("message", why.getMessage())),
            clock.instant(),
            null,
            FrontendTables.RANK_FAILED);
      }
    }
    return n;
  }

  /**
   * A synchronous request stopped waiting (timeout): a result that {@link #arrived} took meanwhile is recorded as
   * an asynchronous one's (else nobody would, and the response topic's committed offset would stop before it).
   */
  void stopWaiting(String executionId, CompletableFuture<Arrival> f) {
    if (!waiting.remove(executionId, f)) {
      f.thenAccept(a -> record(a, a.arrivedNanos()));
    }
  }

  public int waiting() {
    return waiting.size();
  }

  /** Run {@code r} once a result of {@code executionId} arriving here is recorded (the caller bounds how many). */
  public void watch(String executionId, Runnable r) {
    watchers.computeIfAbsent(executionId, k -> new CopyOnWriteArrayList<>()).add(r);
  }

  public void unwatch(String executionId, Runnable r) {
    watchers.computeIfPresent(executionId, (k, list) -> {
      list.remove(r);
      return list.isEmpty() ? null : list;
    });
  }

  private void recordedNow(String executionId) {
    List<Runnable> list = watchers.remove(executionId);
    if (list != null) {
      list.forEach(Runnable::run);
    }
  }

  /** Is this value a grain's error event ({"error": {"type", "message", "grain"}}, grainworker/envelope.py)? */
  public static boolean isError(JsonNode value) {
    return value != null
        && value.isObject()
        && value.size() == 1
        && value.path("error").isObject();
  }

  /**
   * A result from the response topic (key = execution id, value = the event that reached end). Returns when what
   * it brought is recorded in the executions table: at once for a result that is dropped, later for one that
   * answers a waiting request (when that request has written it) or an asynchronous one (when its write is done).
   * A record whose key (the execution id, as host agents write it) already has a first result is dropped before it
   * is parsed: with the gate, every result comes twice, and the response topic's copy would be dropped anyway.
   */
  public CompletableFuture<Void> arrived(String key, byte[] value) {
    long arrivedNanos = System.nanoTime();
    if (key != null) { // the response topic's copy of a result the gate brought: no parse, no HMAC
      // (issue 27)
      CompletableFuture<Void> first;
      synchronized (recent) {
        first = recent.get(key);
      }
      if (first != null) {
        return first;
      }
    }
    Event event;
    try {
      event = Event.parse(value);
    } catch (IllegalArgumentException e) {
      LOG.warn("[execution {}] unreadable result skipped: {}", key, e.getMessage());
      return NOTHING_TO_RECORD;
    }
    String executionId = event.executionId();
    if (!tags.verify(event.tag(), event.app(), executionId, frontendId)) {
      refused.incrementAndGet();
      LOG.warn(
          "[execution {}] result from application '{}' dropped: its tag does not show that the execution "
              + "entered through that application on this frontend",
          executionId,
          event.app());
      return NOTHING_TO_RECORD;
    }
    CompletableFuture<Void> recorded = new CompletableFuture<>();
    synchronized (recent) {
      CompletableFuture<Void> first = recent.putIfAbsent(executionId, recorded);
      if (first != null) {
        LOG.debug("[execution {}] later result ignored", executionId);
        return first;
      }
    }
    Instant now = clock.instant();
    Arrival a = new Arrival(
        event,
        arrivedNanos,
        FrontendTables.resultRank(now.getEpochSecond() * 1_000_000 + now.getNano() / 1000),
        recorded);
    CompletableFuture<Arrival> f = waiting.remove(executionId);
    if (f == null || !f.complete(a)) { // a waiting request writes the record once it has answered
      record(a, arrivedNanos); // an asynchronous request, or one that stopped waiting
      if (f == null) {
        try {
          unawaited.accept(event);
        } catch (RuntimeException e) {
          LOG.warn("[execution {}] its end could not be handed on: {}", executionId, e.toString());
        }
      }
    }
    return recorded;
  }

  /** Write the execution's end: its result or error, its whole timeline up to {@code repliedNanos}. */
  void record(Arrival a, long repliedNanos) {
    JsonNode v = a.event().value();
    boolean failed = isError(v);
    Trace timeline = a.event()
        .trace()
        .plus(Trace.empty().add(Trace.FRONTEND_OUT, frontendId, a.arrivedNanos(), repliedNanos));
    log.ended(
            a.event().executionId(),
            failed ? "failed" : "succeeded",
            failed ? null : Json.text(v),
            failed ? Json.text(v.get("error")) : null,
            clock.instant(),
            Json.text(timeline.entries()),
            a.rank())
        .whenComplete((ok, e) -> {
          a.recorded().complete(null);
          recordedNow(a.event().executionId());
        });
  }
}
