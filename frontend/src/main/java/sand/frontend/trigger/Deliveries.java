package sand.frontend.trigger;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.TriggerTables.DeadLetter;
import sand.frontend.FrontendMetrics;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.invoke.AppDirectory;
import sand.frontend.invoke.IdempotencyKeys;
import sand.frontend.invoke.InvokeHandler;
import sand.frontend.invoke.InvokeHandler.Outcome;
import sand.frontend.invoke.RetryPolicy;

/**
 * Work that no caller waits for (an asynchronous request, a trigger's event), delivered at least once: run, and
 * after an error or a timeout run again per the application's {@link RetryPolicy}; after the last attempt the event,
 * its error and its executions go to the application's dead letters. An event with an idempotency key runs once per
 * key: a repeat (a Kafka record read again after its consumer died) answers the first execution's outcome.
 */
public final class Deliveries {
  private static final Logger LOG = LoggerFactory.getLogger(Deliveries.class);
  /** How long dead letters are kept (SQS's longest retention). */
  public static final Duration DEAD_LETTERS_KEPT = Duration.ofDays(14);
  /** The most deliveries one frontend holds (running or waiting to retry); more are refused, not queued. */
  public static final int MAX_IN_FLIGHT = 10_000;

  /** How one delivery ended: "succeeded", "dead-lettered" or "duplicate" (its key had run). */
  public record Result(String status, String lastExecutionId, int attempts) {}

  /** A delivery under way: {@code firstSent} when its first attempt's event is on its way. */
  public record Delivery(
      String firstExecutionId, CompletableFuture<Void> firstSent, CompletableFuture<Result> done) {}

  private final InvokeHandler invoke;
  private final IdempotencyKeys keys;
  private final ClusterStore store;
  private final FrontendMetrics metrics;
  private final Clock clock;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "deliveries");
    t.setDaemon(true);
    return t;
  });

  public Deliveries(
      InvokeHandler invoke,
      IdempotencyKeys keys,
      ClusterStore store,
      FrontendMetrics metrics,
      Clock clock) {
    this.invoke = invoke;
    this.keys = keys;
    this.store = store;
    this.metrics = metrics;
    this.clock = clock;
  }

  public int inFlight() {
    return inFlight.get();
  }

  /**
   * Deliver {@code value} to {@code app}. {@code source} names what started it ("async", "timer:nightly",
   * "queue:orders"); {@code key}, if not null, is the event's idempotency key. Empty when this frontend already
   * holds {@link #MAX_IN_FLIGHT} deliveries.
   */
  public Optional<Delivery> deliver(
      AppDirectory.Target app, JsonNode value, String source, String key, String executionId) {
    if (inFlight.incrementAndGet() > MAX_IN_FLIGHT) {
      inFlight.decrementAndGet();
      metrics.trigger(app.name(), source, "refused");
      return Optional.empty();
    }
    CompletableFuture<Void> firstSent = new CompletableFuture<>();
    CompletableFuture<Result> done = new CompletableFuture<>();
    done.whenComplete((r, e) -> inFlight.decrementAndGet());
    try {
      if (key != null) {
        Optional<String> first = claim(app, key, value, executionId);
        if (first.isPresent()) {
          firstSent.complete(null);
          dedupe(app, value, source, key, first.get(), executionId, firstSent, done);
          return Optional.of(new Delivery(first.get(), firstSent, done));
        }
      }
      attempt(app, value, source, key, executionId, 1, new ArrayList<>(), firstSent, done);
    } catch (
        RuntimeException
            e) { // Cassandra away for the claim: the event is not run now (its caller retries)
      firstSent.completeExceptionally(e);
      done.completeExceptionally(e);
    }
    return Optional.of(new Delivery(executionId, firstSent, done));
  }

  private Optional<String> claim(AppDirectory.Target app, String key, JsonNode value, String id) {
    return keys.claim(app.appId(), key, id, IdempotencyKeys.sha256(value))
        .map(c -> c.executionId());
  }

  /**
   * The key ran before: wait for its execution to end and answer with it. If it never ends (it was lost with its
   * frontend), run the event again under the same key.
   */
  private void dedupe(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String firstId,
      String executionId,
      CompletableFuture<Void> firstSent,
      CompletableFuture<Result> done) {
    Duration wait =
        Duration.ofSeconds((long) (app.requestTimeoutS() > 0 ? app.requestTimeoutS() : 60) + 10);
    keys.awaitEnd(firstId, wait).whenComplete((r, e) -> {
      if (r != null && r.isPresent()) {
        metrics.trigger(app.name(), source, "duplicate");
        done.complete(new Result("duplicate", firstId, 0));
        return;
      }
      try {
        keys.release(app.appId(), key, firstId);
        if (claim(app, key, value, executionId).isPresent()) {
          done.complete(new Result("duplicate", firstId, 0)); // another frontend runs it again
          return;
        }
        LOG.info(
            "[app {}] {} key {}: execution {} never ended; running the event again",
            app.name(),
            source,
            key,
            firstId);
        attempt(
            app,
            value,
            source,
            key,
            executionId,
            1,
            new ArrayList<>(),
            new CompletableFuture<>(),
            done);
      } catch (RuntimeException x) {
        done.completeExceptionally(x);
      }
    });
  }

  private void attempt(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String executionId,
      int n,
      List<String> executions,
      CompletableFuture<Void> firstSent,
      CompletableFuture<Result> done) {
    executions.add(executionId);
    metrics.trigger(app.name(), source, n == 1 ? "fired" : "retried");
    InvokeHandler.Launch launch =
        invoke.launch(app, value, n == 1 ? source : source + "#" + n, executionId);
    launch.sent().whenComplete((v, e) -> {
      if (e == null) {
        firstSent.complete(null);
      } else {
        firstSent.completeExceptionally(e);
      }
    });
    launch.outcome().whenComplete((o, e) -> {
      Outcome out = o != null
          ? o
          : new Outcome(executionId, "unavailable", Json.object().put("error", String.valueOf(e)));
      if (out.succeeded()) {
        metrics.trigger(app.name(), source, "succeeded");
        done.complete(new Result("succeeded", executionId, n));
        return;
      }
      metrics.trigger(app.name(), source, "failed");
      if (n == 1 && firstSent.isCompletedExceptionally()) {
        done.complete(
            new Result("unsent", executionId, n)); // its caller was told: it retries, not us
        return;
      }
      RetryPolicy policy = app.retry();
      if (n < policy.attempts()) {
        timer.schedule(
            () -> attempt(app, value, source, key, Ids.newId(), n + 1, executions, firstSent, done),
            policy.backoff(n).toMillis(),
            TimeUnit.MILLISECONDS);
        return;
      }
      deadLetter(app, value, source, key, out, n, executions);
      done.complete(new Result("dead-lettered", executionId, n));
    });
  }

  private void deadLetter(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      Outcome last,
      int attempts,
      List<String> executions) {
    metrics.trigger(app.name(), source, "dead_lettered");
    long now = clock.millis();
    JsonNode error = last.value() != null && last.value().has("error")
        ? last.value().get("error")
        : last.value();
    DeadLetter d = new DeadLetter(
        app.appId(),
        String.format("%013d-%s", now, Ids.hex(4)),
        key == null ? source : source + " key=" + key,
        Json.text(value),
        Json.text(error == null ? Json.object() : error),
        attempts,
        String.join(",", executions),
        clock.instant());
    try {
      store.triggers().putDeadLetter(d, DEAD_LETTERS_KEPT);
      LOG.warn(
          "[app {}] {}: the event failed {} attempts; dead letter {}",
          app.name(),
          source,
          attempts,
          d.id());
    } catch (RuntimeException e) {
      LOG.error(
          "[app {}] {}: dead letter {} could not be stored: {} (event {})",
          app.name(),
          source,
          d.id(),
          e.toString(),
          d.event());
    }
  }

  public void close() {
    timer.shutdownNow();
  }
}
