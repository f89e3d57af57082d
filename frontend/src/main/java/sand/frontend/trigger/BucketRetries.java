package sand.frontend.trigger;

import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.BucketTables.FiredEvent;
import sand.cluster.ClusterStore;
import sand.contracts.Event;
import sand.contracts.Trace;
import sand.frontend.internal.Json;
import sand.frontend.invoke.AppDirectory;
import sand.frontend.invoke.Results;

/**
 * Retries and dead letters of data-triggered executions (docs/data-triggers.md): the host agent of a bucket write
 * starts the first execution itself and names a frontend to record its end, so that end is the first (and only)
 * thing a frontend sees of it. When it is a grain's error (a raise, or the grain worker's kill at the grain's
 * timeout), {@link Deliveries#resume} runs the event again per the target's {@code settings.retry}, from this
 * frontend, and dead-letters it after the last attempt with source {@code bucket:<bucket>}. The event is the one the
 * host agent kept ({@link FiredEvent}); retries started here are awaited by {@link Deliveries} itself.
 */
public final class BucketRetries {
  private static final Logger LOG = LoggerFactory.getLogger(BucketRetries.class);
  /** A data trigger's source, as in the trace ("bucket:photos@h1") and in dead letters ("bucket:photos"). */
  public static final String SOURCE_PREFIX = "bucket:";

  private final ClusterStore store;
  private final AppDirectory directory;
  private volatile Deliveries deliveries; // null until the frontend is wired

  public BucketRetries(ClusterStore store, AppDirectory directory) {
    this.store = store;
    this.directory = directory;
  }

  /** Retries go through {@code d} (made after the results this hooks into). */
  public void use(Deliveries d) {
    this.deliveries = d;
  }

  /**
   * {@link Results}' hook: the end of an execution that nobody on this frontend waited for. Only a failed first
   * attempt of a data trigger is taken; the rest is left alone.
   */
  public void ended(Event end) {
    if (!Results.isError(end.value())) {
      return;
    }
    String bucket = bucketOf(end.trace());
    if (bucket == null) {
      return;
    }
    Deliveries d = deliveries;
    String first = end.executionId();
    String appId = end.app();
    if (d == null) {
      LOG.warn(
          "[app {}] [exec {}] bucket '{}': the execution failed before this frontend could retry it; "
              + "not retried",
          appId,
          first,
          bucket);
      return;
    }
    d.resume(appId, SOURCE_PREFIX + bucket, first, end.value(), () -> load(first, appId));
  }

  /**
   * The bucket whose write started the execution, when the trace's first entry is a host agent's data trigger
   * ({@code ["trigger", "bucket:<bucket>@<host>", t]}); null otherwise, also for a retry ("bucket:<b>#2@<frontend>").
   */
  static String bucketOf(Trace trace) {
    var entries = trace.entries();
    if (entries.isEmpty() || !Trace.TRIGGER.equals(entries.get(0).path(0).asText())) {
      return null;
    }
    String where = entries.get(0).path(1).asText();
    int at = where.lastIndexOf('@');
    if (!where.startsWith(SOURCE_PREFIX) || at < 0 || where.indexOf('#') >= 0) {
      return null;
    }
    String bucket = where.substring(SOURCE_PREFIX.length(), at);
    return bucket.isEmpty() ? null : bucket;
  }

  private Optional<Deliveries.Resumed> load(String executionId, String appId) {
    Optional<FiredEvent> f =
        store.buckets().firedEvent(executionId).filter(e -> e.appId().equals(appId));
    if (f.isEmpty()) {
      return Optional.empty();
    }
    Optional<AppDirectory.Target> app =
        directory.find(f.get().app()).filter(t -> t.appId().equals(appId) && t.deployed());
    return Optional.of(
        new Deliveries.Resumed(appId, f.get().app(), Json.stored(f.get().event()), app));
  }
}
