package sand.datalayer.internal;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.datalayer.DataLayerException;
import sand.datalayer.DataLayerException.Code;

/**
 * What one application's stores share: its name, the global layer, the write-behind queue, and its
 * memory account (quota, eviction). One per {@code ApplicationData}; dropped when the application is
 * revoked on this host.
 */
public final class AppContext {
  private static final Logger LOG = LoggerFactory.getLogger(AppContext.class);
  private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final String app;
  private final GlobalDataLayer global;
  private final WriteBehind writeBehind;
  private final Duration readThroughWait;
  private final AppMemory memory;
  private final List<Residents<?>> stores = new CopyOnWriteArrayList<>();
  private volatile boolean dropped;
  private volatile long lastWarn = System.nanoTime() - WARN_EVERY_NANOS;

  /** Items whose metadata is remembered: a data flag names few, and a report naming many must not grow this. */
  static final int METADATA_CACHED = 256;
  /** Metadata computed since each item's last write, most recently used last. Under itself. */
  private final Map<WriteBehind.Item, DataMetadata> metadata =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<WriteBehind.Item, DataMetadata> eldest) {
          return size() > METADATA_CACHED;
        }
      };
  /** Writes so far (under {@link #metadata}): metadata computed across a write is not remembered. */
  private long writes;

  private final LongAdder metadataComputed = new LongAdder();

  /**
   * @param readThroughWait longest wait for earlier writes to reach the global layer: on a miss, the
   *                        item's; when the quota is full of queued writes, any of them
   */
  public AppContext(
      String app,
      GlobalDataLayer global,
      WriteBehind writeBehind,
      Duration readThroughWait,
      AppMemory memory) {
    this.app = app;
    this.global = global;
    this.writeBehind = writeBehind;
    this.readThroughWait = readThroughWait;
    this.memory = memory;
  }

  public String app() {
    return app;
  }

  public GlobalDataLayer global() {
    return global;
  }

  public WriteBehind writeBehind() {
    return writeBehind;
  }

  /** Make this context's items the ones eviction (and usage) sees for the application; after its stores exist. */
  public void attach() {
    memory.attach(this);
  }

  /**
   * Drop every item from memory (the application was revoked) and release what it held; later calls
   * through this context are UNAUTHORIZED. Queued writes still go to the global layer, and their bytes
   * stay counted until they do.
   */
  public void drop() {
    dropped = true;
    synchronized (metadata) {
      metadata.clear();
    }
    memory.detach(this);
    for (Residents<?> r : stores) {
      r.dropAll();
    }
  }

  <R extends Resident> Residents<R> residents(DataKind kind, Function<String, R> create) {
    Residents<R> r = new Residents<>(this, kind, create);
    stores.add(r);
    return r;
  }

  boolean dropped() {
    return dropped;
  }

  DataLayerException revoked() {
    return new DataLayerException(
        Code.UNAUTHORIZED,
        "[app " + app + "] was revoked on this host while the call "
            + "ran; its data left this host's memory: call again with the application's current credential");
  }

  void addCandidates(List<Residents.Candidate> out) {
    for (Residents<?> r : stores) {
      r.addCandidates(out);
    }
  }

  // ---- memory

  /**
   * Reserve {@code bytes} for a write of {@code what}, evicting clean data as needed. When the quota
   * (or the host cap) is full of writes not yet in the global layer, wait up to the read-through wait
   * for some of them to get there; then QUOTA_EXCEEDED. Call it before changing anything, so a refused
   * write changes nothing.
   */
  void reserve(long bytes, String what) {
    HostMemory host = memory.host();
    long deadline = System.nanoTime() + readThroughWait.toNanos();
    while (true) {
      long seen = host.progress();
      HostMemory.Refusal r = host.reserve(memory, bytes);
      if (r == null) {
        return;
      }
      long left = deadline - System.nanoTime();
      if (host.progress() != seen && left > 0) {
        continue; // backups freed room while it was refused (the refusal may show it): try again
      }
      if (r.waiting() == 0 || left <= 0) {
        throw quotaExceeded(r, bytes, what);
      }
      try {
        host.awaitProgress(seen, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw quotaExceeded(r, bytes, what);
      }
    }
  }

  /** Reserve {@code bytes} to keep a value read from the global layer; false (never waits) when it does not fit. */
  boolean tryReserve(long bytes) {
    return memory.host().reserve(memory, bytes) == null;
  }

  /** Give back reserved bytes (a name or value left memory). */
  void release(long bytes) {
    memory.release(bytes);
  }

  /** A charge taking over {@code bytes} just reserved, for a value memory and its write may share. */
  Charge charge(long bytes) {
    return new Charge(memory, bytes);
  }

  private DataLayerException quotaExceeded(HostMemory.Refusal r, long bytes, String what) {
    String head =
        "[app " + app + "] cannot store " + what + " (" + bytes + " bytes with its bookkeeping): ";
    String fix =
        "; nothing was changed. The global data layer is behind or unreachable: retry later; or store "
            + "less per item / delete keys; the operator's setting is datalayer "
            + (r.hostCap() ? "max.bytes" : "app.max.bytes");
    String why = r.hostCap()
        ? "this host's local data layer holds " + r.hostHeld()
            + " bytes for all applications, its cap " + r.hostMax()
            + " bytes, and " + r.hostPending()
            + " of them wait for the global data layer (they cannot be evicted "
            + "before they reach it); the application holds " + r.appHeld() + " bytes (its quota "
            + r.appQuota()
            + " bytes), " + r.appPending() + " of them waiting"
        : "the application holds " + r.appHeld() + " bytes in this host's memory, its quota "
            + r.appQuota()
            + " bytes, and " + r.appPending()
            + " of them wait for the global data layer (they cannot be evicted "
            + "before they reach it)";
    long now = System.nanoTime();
    if (now - lastWarn >= WARN_EVERY_NANOS) {
      lastWarn = now;
      LOG.warn(
          "[app {}] writes refused: {} ({} quota)", app, why, r.hostCap() ? "host" : "application");
    }
    return new DataLayerException(Code.QUOTA_EXCEEDED, head + why + fix);
  }

  // ---- data flags (§4.3)

  /**
   * The metadata of an item's current value: remembered from an earlier call when the item was not written since,
   * else {@code compute}d (a SHA-256 over the whole value, maybe a read through the global layer) and remembered.
   * So it is computed once per write, however many reports name the item.
   */
  public DataMetadata metadata(DataKind kind, String name, Supplier<DataMetadata> compute) {
    WriteBehind.Item item = new WriteBehind.Item(app, kind, name);
    long seen;
    synchronized (metadata) {
      DataMetadata m = metadata.get(item);
      if (m != null) {
        return m;
      }
      seen = writes;
    }
    DataMetadata m = compute.get();
    metadataComputed.increment();
    synchronized (metadata) {
      // a write since 'seen' may have changed the value after it was read: then it is not
      // remembered
      if (writes == seen && !dropped) {
        metadata.put(item, m);
      }
    }
    return m;
  }

  /** How many times metadata was computed (not remembered) for this application. */
  public long metadataComputed() {
    return metadataComputed.sum();
  }

  // ---- global layer

  /**
   * Queue a write of one item, with the bytes it keeps: {@code ownBytes} (already reserved, taken over
   * by the write) and the value's {@code charge} when there is one (shared with memory). Call it while
   * holding the item's lock, so queue order is local order.
   */
  void backup(
      DataKind kind,
      String name,
      WriteBehind.Write write,
      boolean replacesWholeValue,
      long ownBytes,
      Charge value) {
    synchronized (metadata) { // the value changed: its metadata is computed again when next asked
      writes++;
      metadata.remove(new WriteBehind.Item(app, kind, name));
    }
    WriteBehind.Hold hold = memory.hold(ownBytes, value);
    try {
      writeBehind.submit(new WriteBehind.Item(app, kind, name), write, replacesWholeValue, hold);
    } catch (RuntimeException e) {
      hold.release();
      throw e;
    }
  }

  /**
   * Read an item through the global layer (a miss in memory). Writes of the item still on their way
   * there are waited for first (they exist only after this host dropped the application's memory), so
   * a read never returns a value older than one written here. A global layer that cannot answer is
   * UNAVAILABLE for the caller.
   */
  <T> T readThrough(DataKind kind, String name, Function<GlobalDataLayer, T> read) {
    if (name != null) {
      CompletableFuture<Void> earlier = writeBehind.backupOf(new WriteBehind.Item(app, kind, name));
      if (!earlier.isDone()) {
        try {
          earlier.get(readThroughWait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
          throw unavailable(kind, name, "earlier writes of it are still being backed up");
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw unavailable(kind, name, "interrupted");
        }
      }
    }
    try {
      return read.apply(global);
    } catch (GlobalUnavailableException e) {
      throw unavailable(kind, name, e.getMessage());
    }
  }

  private DataLayerException unavailable(DataKind kind, String name, String why) {
    String what = name == null ? "the keys" : kind + " '" + name + "'";
    return new DataLayerException(
        DataLayerException.Code.UNAVAILABLE,
        "[app " + app + "] " + what
            + " is not in this host's memory and the global data layer could not be read (" + why
            + "); retry when Cassandra is reachable again");
  }
}
