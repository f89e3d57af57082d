package sand.frontend.trigger;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.TriggerTables.Trigger;

/**
 * A frontend's view of every application's triggers, read from the cluster store at most every
 * {@link #REFRESH_MS} (a trigger added on another frontend starts here within that), parsed once per spec.
 */
public final class TriggerSet {
  private static final Logger LOG = LoggerFactory.getLogger(TriggerSet.class);
  public static final long REFRESH_MS = 5000;
  /** The most triggers a frontend runs: MAX_PER_APP for this many applications. */
  public static final int MAX_TRIGGERS = 10_000;

  /** A trigger of an application, ready to run. */
  public record Armed(String appId, String appName, TriggerSpec spec, long createdEpochMs) {
    String key() {
      return appId + "/" + spec.name();
    }
  }

  private final ClusterStore store;
  private final Map<String, String> names =
      new ConcurrentHashMap<>(); // app id -> name (never changes)
  private final Map<String, Armed> parsed =
      new ConcurrentHashMap<>(); // app id/name + spec -> armed
  private volatile List<Armed> current = List.of();
  private volatile long readAt; // 0: never read

  public TriggerSet(ClusterStore store) {
    this.store = store;
  }

  /**
   * A trigger was added, changed or deleted through this frontend: read them all at the next look, so its timer
   * starts (or stops) here within a tick, not after up to {@link #REFRESH_MS} (KNIX's tests count a 1 s timer's
   * ticks over 10 s). Other frontends see it within {@link #REFRESH_MS}; the tick's claim keeps it once.
   */
  public void changed() {
    readAt = Long.MIN_VALUE / 2;
  }

  /** Every trigger, read again when the last read is older than {@link #REFRESH_MS} (or {@code force}). */
  public List<Armed> all(long nowMs, boolean force) {
    if (force || nowMs - readAt >= REFRESH_MS) {
      try {
        List<Trigger> rows = store.triggers().allTriggers(MAX_TRIGGERS);
        List<Armed> next = new java.util.ArrayList<>();
        for (Trigger t : rows) {
          arm(t).ifPresent(next::add);
        }
        current = List.copyOf(next);
        readAt = nowMs;
      } catch (RuntimeException e) {
        LOG.warn("reading the triggers failed (running the ones read before): {}", e.toString());
        readAt = nowMs; // not again at once: Cassandra away must not be hammered
      }
    }
    return current;
  }

  private Optional<Armed> arm(Trigger t) {
    String cacheKey = t.appId() + "/" + t.name() + "\0" + t.spec();
    Armed a = parsed.get(cacheKey);
    if (a != null) {
      return Optional.of(a);
    }
    try {
      String name = names.computeIfAbsent(
          t.appId(), id -> store.application(id).map(ApplicationRecord::name).orElse(null));
      if (name == null) {
        return Optional.empty(); // its application is being deleted
      }
      a = new Armed(
          t.appId(),
          name,
          TriggerSpec.stored(t.appId(), t.name(), t.spec()),
          t.created() == null ? 0 : t.created().toEpochMilli());
      if (parsed.size() > 2 * MAX_TRIGGERS) {
        parsed.clear();
      }
      parsed.put(cacheKey, a);
      return Optional.of(a);
    } catch (RuntimeException e) {
      LOG.warn("[app {}] trigger {} skipped: {}", t.appId(), t.name(), e.getMessage());
      return Optional.empty();
    }
  }
}
