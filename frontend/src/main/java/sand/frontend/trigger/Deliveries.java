package sand.frontend.trigger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
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
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.TriggerTables.DeadLetter;
import sand.cluster.TriggerTables.KeyClaim;
import sand.contracts.Event;
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

  /**
   * How one delivery ended: "succeeded", "dead-lettered", "duplicate" (its key had run) or {@link #UNSENT} (its first
   * event could not be sent: nothing ran, the key is free again, and the caller must deliver it again).
   */
  public record Result(String status, String lastExecutionId, int attempts) {}

  public static final String UNSENT = "unsent";

  /**
   * The event of a delivery {@link #resume}d, as read: {@code app} is empty when the application is gone or not
   * deployed (the event is then dead-lettered at once).
   */
  public record Resumed(
      String appId, String appName, JsonNode event, Optional<AppDirectory.Target> app) {}

  /** How often, and how far apart, {@link #resume} reads an event that is not (yet) written. */
  static final int LOAD_TRIES = 5;

  static final Duration LOAD_EVERY = Duration.ofMillis(500);

  /**
   * How long after an attempt's backoff a frontend taking over a delivery waits for the next attempt, run by the
   * frontend that ran the failed one, before it concludes that frontend is gone and runs the attempt itself.
   */
  static final Duration NEXT_ATTEMPT_GRACE = Duration.ofSeconds(5);

  /** How often the key's claim is read while waiting for the next attempt. */
  static final Duration CLAIM_POLL = Duration.ofMillis(500);

  /** A delivery under way: {@code firstSent} when its first attempt's event is on its way. */
  public record Delivery(
      String firstExecutionId, CompletableFuture<Void> firstSent, CompletableFuture<Result> done) {}

  private final InvokeHandler invoke;
  private final IdempotencyKeys keys;
  private final ClusterStore store;
  private final FrontendMetrics metrics;
  private final Clock clock;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final int maxInFlight;
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
    this(invoke, keys, store, metrics, clock, MAX_IN_FLIGHT);
  }

  /** With another bound on the deliveries held (tests). */
  Deliveries(
      InvokeHandler invoke,
      IdempotencyKeys keys,
      ClusterStore store,
      FrontendMetrics metrics,
      Clock clock,
      int maxInFlight) {
    this.maxInFlight = maxInFlight;
    this.invoke = invoke;
    this.keys = keys;
    this.store = store;
    this.metrics = metrics;
    this.clock = clock;
  }

  public int inFlight() {
    return inFlight.get();
  }

  /** Who delivers an event again whose first attempt could not be sent (nothing ran). */
  public enum Unsent {
    /** Its caller, told by {@link Delivery#firstSent} or a {@link #UNSENT} result (a request, a queue record). */
    CALLER_RETRIES,
    /** The delivery, as a failed attempt under the application's retry policy (a timer's tick). */
    RETRIED_HERE
  }

  /**
   * Deliver {@code value} to {@code app}. {@code source} names what started it ("async", "timer:nightly",
   * "queue:orders"); {@code key}, if not null, is the event's idempotency key. Empty when this frontend already
   * holds {@link #MAX_IN_FLIGHT} deliveries.
   */
  public Optional<Delivery> deliver(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String executionId,
      Unsent unsent) {
    if (inFlight.incrementAndGet() > maxInFlight) {
      inFlight.decrementAndGet();
      metrics.trigger(app.name(), source, "refused");
      return Optional.empty();
    }
    CompletableFuture<Void> firstSent = new CompletableFuture<>();
    CompletableFuture<Result> done = new CompletableFuture<>();
    done.whenComplete((r, e) -> inFlight.decrementAndGet());
    try {
      if (key != null) {
        Optional<KeyClaim> first = claim(app, key, value, executionId);
        if (first.isPresent()) {
          firstSent.complete(null);
          dedupe(app, value, source, key, first.get(), executionId, unsent, done);
          return Optional.of(new Delivery(first.get().executionId(), firstSent, done));
        }
      }
      attempt(app, value, source, key, executionId, 1, unsent, new ArrayList<>(), firstSent, done);
    } catch (
        RuntimeException
            e) { // Cassandra away for the claim: the event is not run now (its caller retries)
      firstSent.completeExceptionally(e);
      done.completeExceptionally(e);
    }
    return Optional.of(new Delivery(executionId, firstSent, done));
  }

  private Optional<KeyClaim> claim(AppDirectory.Target app, String key, JsonNode value, String id) {
    return keys.claim(app.appId(), key, id, IdempotencyKeys.sha256(value));
  }

  /**
   * The key ran before: wait for its latest attempt to end and answer with it. If it never ends (it was lost with
   * its frontend), run the event again under the same key; if it failed with attempts left, and its frontend does
   * not go on to the next one after the backoff (it died), go on here.
   */
  private void dedupe(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      KeyClaim seen,
      String executionId,
      Unsent unsent,
      CompletableFuture<Result> done) {
    Duration wait =
        Duration.ofSeconds((long) (app.requestTimeoutS() > 0 ? app.requestTimeoutS() : 60) + 10);
    String firstId = seen.executionId();
    keys.awaitEnd(firstId, wait).whenComplete((r, e) -> {
      if (r != null && r.isPresent()) {
        if (r.get().status().equals("succeeded")
            || seen.attempt() >= app.retry().attempts()) {
          metrics.trigger(app.name(), source, "duplicate");
          done.complete(new Result("duplicate", firstId, 0));
          return;
        }
        long deadline = clock.millis()
            + app.retry().backoff(seen.attempt()).toMillis()
            + NEXT_ATTEMPT_GRACE.toMillis();
        awaitNextAttempt(app, value, source, key, seen, executionId, unsent, done, deadline);
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
        attemptUnwatched(app, value, source, key, executionId, 1, unsent, new ArrayList<>(), done);
      } catch (RuntimeException x) {
        done.completeExceptionally(x);
      }
    });
  }

  /**
   * {@code seen}'s attempt failed with attempts left: follow the key's claim to the next attempt, run by the
   * frontend that ran this one; if the claim has not moved by {@code deadline} (epoch ms), that frontend is gone:
   * move it here and run the next attempt.
   */
  private void awaitNextAttempt(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      KeyClaim seen,
      String executionId,
      Unsent unsent,
      CompletableFuture<Result> done,
      long deadline) {
    try {
      Optional<KeyClaim> now = keys.current(app.appId(), key);
      if (now.isEmpty()) { // released or expired meanwhile: claimed anew, or run by who claims it
        dedupeOrRun(app, value, source, key, executionId, unsent, done);
        return;
      }
      if (!now.get().executionId().equals(seen.executionId())) {
        dedupe(app, value, source, key, now.get(), executionId, unsent, done);
        return;
      }
      if (clock.millis() >= deadline) {
        int n = seen.attempt() + 1;
        if (keys.move(
            app.appId(), key, seen.executionId(), executionId, IdempotencyKeys.sha256(value), n)) {
          LOG.info(
              "[app {}] {} key {}: attempt {} ({}) failed and its frontend did not go on; attempt {} here",
              app.name(),
              source,
              key,
              seen.attempt(),
              seen.executionId(),
              n);
          List<String> executions = new ArrayList<>(List.of(seen.executionId()));
          attemptUnwatched(app, value, source, key, executionId, n, unsent, executions, done);
          return;
        }
      }
    } catch (RuntimeException e) { // Cassandra away for a moment: look again
      LOG.debug("reading key {}'s claim failed: {}", key, e.toString());
    }
    timer.schedule(
        () -> awaitNextAttempt(app, value, source, key, seen, executionId, unsent, done, deadline),
        CLAIM_POLL.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private void dedupeOrRun(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String executionId,
      Unsent unsent,
      CompletableFuture<Result> done) {
    Optional<KeyClaim> first = claim(app, key, value, executionId);
    if (first.isPresent()) {
      dedupe(app, value, source, key, first.get(), executionId, unsent, done);
    } else {
      attemptUnwatched(app, value, source, key, executionId, 1, unsent, new ArrayList<>(), done);
    }
  }

  /** An attempt whose send nobody waits for (a retry, or one taken over from another frontend). */
  private void attemptUnwatched(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String executionId,
      int n,
      Unsent unsent,
      List<String> executions,
      CompletableFuture<Result> done) {
    attempt(
        app,
        value,
        source,
        key,
        executionId,
        n,
        unsent,
        executions,
        CompletableFuture.completedFuture(null),
        done);
  }

  private void attempt(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String executionId,
      int n,
      Unsent unsent,
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
          : new Outcome(executionId, Outcome.UNSENT, Json.object().put("error", String.valueOf(e)));
      if (out.succeeded()) {
        metrics.trigger(app.name(), source, "succeeded");
        done.complete(new Result("succeeded", executionId, n));
        return;
      }
      metrics.trigger(app.name(), source, "failed");
      // the outcome, not firstSent (completed on another thread, maybe later), says it was never
      // sent
      if (n == 1 && unsent == Unsent.CALLER_RETRIES && Outcome.UNSENT.equals(out.status())) {
        // nothing ran and its caller was told (a 502, a queue batch read again): it retries, not
        // us,
        // and its key must let that retry run
        if (key != null) {
          keys.release(app.appId(), key, executionId);
        }
        done.complete(new Result(UNSENT, executionId, n));
        return;
      }
      RetryPolicy policy = app.retry();
      if (n < policy.attempts()) {
        timer.schedule(
            () -> retry(app, value, source, key, executionId, n + 1, unsent, executions, done),
            policy.backoff(n).toMillis(),
            TimeUnit.MILLISECONDS);
        return;
      }
      deadLetter(app.appId(), app.name(), value, source, key, out.value(), n, executions);
      done.complete(new Result("dead-lettered", executionId, n));
    });
  }

  /** The next attempt, its key's claim moved to it first: another frontend may have taken the delivery over. */
  private void retry(
      AppDirectory.Target app,
      JsonNode value,
      String source,
      String key,
      String previousId,
      int n,
      Unsent unsent,
      List<String> executions,
      CompletableFuture<Result> done) {
    String next = Ids.newId();
    if (key != null
        && !keys.move(app.appId(), key, previousId, next, IdempotencyKeys.sha256(value), n)) {
      LOG.info(
          "[app {}] {} key {}: another frontend took the delivery over after attempt {}",
          app.name(),
          source,
          key,
          n - 1);
      done.complete(new Result("duplicate", previousId, n - 1));
      return;
    }
    attemptUnwatched(app, value, source, key, next, n, unsent, executions, done);
  }

  /**
   * Continue a delivery whose first attempt ran without this frontend and failed (a data trigger's execution, which
   * the host agent of the write started and named this frontend to record): {@code failed} is its end event
   * ({"error": ...}). {@code load} reads the event and its application on the retry timer, not on the caller's
   * thread (up to {@link #LOAD_TRIES} times, as its writer writes it behind); the event then runs again from attempt
   * 2 per the application's policy and is dead-lettered after the last, like {@link #deliver}'s (a poison end at
   * once: the host agent will not run it again, nor do we). Held like them, up
   * to the same bound: beyond it the event is dead-lettered at once (read on the caller's thread), never dropped.
   */
  public void resume(
      String appId,
      String source,
      String firstExecutionId,
      JsonNode failed,
      Supplier<Optional<Resumed>> load) {
    List<String> executions = new ArrayList<>(List.of(firstExecutionId));
    if (inFlight.incrementAndGet() > maxInFlight) {
      inFlight.decrementAndGet();
      Optional<Resumed> r = read(load);
      String name = r.map(Resumed::appName).orElse(appId);
      metrics.trigger(name, source, "refused");
      LOG.warn(
          "[app {}] [exec {}] {}: the execution failed and this frontend holds {} deliveries already; "
              + "dead-lettered without a retry",
          name,
          firstExecutionId,
          source,
          maxInFlight);
      deadLetter(appId, name, event(r), source, null, failed, 1, executions);
      return;
    }
    CompletableFuture<Result> done = new CompletableFuture<>();
    done.whenComplete((x, e) -> inFlight.decrementAndGet());
    timer.execute(() -> load(appId, source, failed, load, executions, 1, done));
  }

  /** {@link #loadAndRetry}, never leaving {@code done} open (it holds a place in the bound). */
  private void load(
      String appId,
      String source,
      JsonNode failed,
      Supplier<Optional<Resumed>> load,
      List<String> executions,
      int tried,
      CompletableFuture<Result> done) {
    try {
      loadAndRetry(appId, source, failed, load, executions, tried, done);
    } catch (RuntimeException e) {
      LOG.error(
          "[app {}] [exec {}] {}: the failed execution could not be retried: {}",
          appId,
          executions.get(0),
          source,
          e.toString());
      done.completeExceptionally(e);
    }
  }

  private void loadAndRetry(
      String appId,
      String source,
      JsonNode failed,
      Supplier<Optional<Resumed>> load,
      List<String> executions,
      int tried,
      CompletableFuture<Result> done) {
    Optional<Resumed> r = read(load);
    if (r.isEmpty() && tried < LOAD_TRIES) {
      timer.schedule(
          () -> load(appId, source, failed, load, executions, tried + 1, done),
          LOAD_EVERY.toMillis(),
          TimeUnit.MILLISECONDS);
      return;
    }
    String name = r.map(Resumed::appName).orElse(appId);
    metrics.trigger(name, source, "failed");
    Optional<AppDirectory.Target> app = r.flatMap(Resumed::app);
    boolean poison = Event.ERROR_POISON.equals(failed.path("error").path("type").asText());
    if (app.isEmpty() || app.get().retry().attempts() <= 1 || poison) {
      if (r.isEmpty()) {
        LOG.warn(
            "[app {}] [exec {}] {}: the failed execution's event was not found; dead-lettered without it",
            appId,
            executions.get(0),
            source);
      }
      deadLetter(appId, name, event(r), source, null, failed, 1, executions);
      done.complete(new Result("dead-lettered", executions.get(0), 1));
      return;
    }
    CompletableFuture<Void> sent = CompletableFuture.completedFuture(null);
    timer.schedule(
        () -> attempt(
            app.get(),
            r.get().event(),
            source,
            null,
            Ids.newId(),
            2,
            Unsent.RETRIED_HERE,
            executions,
            sent,
            done),
        app.get().retry().backoff(1).toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private static Optional<Resumed> read(Supplier<Optional<Resumed>> load) {
    try {
      return load.get();
    } catch (RuntimeException e) { // Cassandra away: read again (or dead-letter without it)
      LOG.debug("reading a resumed delivery's event failed: {}", e.toString());
      return Optional.empty();
    }
  }

  private static JsonNode event(Optional<Resumed> r) {
    return r.map(Resumed::event).orElse(NullNode.getInstance());
  }

  /** {@code last}: the last attempt's output or error event ({"error": ...}). */
  private void deadLetter(
      String appId,
      String appName,
      JsonNode value,
      String source,
      String key,
      JsonNode last,
      int attempts,
      List<String> executions) {
    metrics.trigger(appName, source, "dead_lettered");
    long now = clock.millis();
    JsonNode error = last != null && last.has("error") ? last.get("error") : last;
    DeadLetter d = new DeadLetter(
        appId,
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
          appName,
          source,
          attempts,
          d.id());
    } catch (RuntimeException e) {
      LOG.error(
          "[app {}] {}: dead letter {} could not be stored: {} (event {})",
          appName,
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
