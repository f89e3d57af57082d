package sand.datalayer;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.contracts.DataMetadata;
import sand.datalayer.DataLayerException.Code;

/**
 * Bytes per application in the global data layer (issue 26): counted as writes reach it, and a grain's write
 * refused with QUOTA_EXCEEDED while its application is at its quota.
 *
 * <p>What counts: the values of keys and of map entries, with their keys, and the items of sets. Counters do not
 * (8-byte numbers). The count is kept by the writer: {@link #metered()} wraps the global layer the write-behind
 * threads write to, reads the size of what a write replaces or deletes (kv: its stored size; a map entry: the entry;
 * a set item: whether it is there) and adds the difference to
 * the application's counter in the global layer ({@link GlobalDataLayer#addStoredBytes}), which every host shares.
 * It is approximate: two hosts replacing the same item at once may both give back the old size, a count lost to a
 * failure right after its write is lost, and a write counts once it reached the global layer: until then the
 * host it waits on counts its bytes (with their bookkeeping) as on their way, but other hosts do not see them.
 *
 * <p>The quota is the operator's {@code app.global.max.bytes}, or lower: the application's own counter
 * {@value #OWN_LIMIT}, when it exists (a developer may lower its application's quota, never raise it). This host
 * re-reads both the count and that counter at most every {@value #REFRESH_MS} ms per application; its own writes
 * count at once.
 */
public final class StorageQuota {
  private static final Logger LOG = LoggerFactory.getLogger(StorageQuota.class);

  /** The counter by which an application lowers its own quota (bytes; 0 or absent: the operator's). */
  public static final String OWN_LIMIT = "sand.quota.global.max.bytes";

  static final long REFRESH_MS = 1000;

  /** Bytes used and allowed. */
  public record Usage(long usedBytes, long maxBytes) {}

  private static final class App {
    volatile long used;
    volatile long max;
    volatile long refreshed =
        Long.MIN_VALUE / 2; // System.nanoTime() of the last read from the global layer
    long recordedMax = -1; // under the App's lock
  }

  private final GlobalDataLayer global;
  private final long operatorMax;
  private final ConcurrentHashMap<String, App> apps = new ConcurrentHashMap<>();
  private final GlobalDataLayer metered;

  /** Counts what is written to {@code global} through {@link #metered()}; {@code operatorMax}: app.global.max.bytes. */
  public StorageQuota(GlobalDataLayer global, long operatorMax) {
    this.global = global;
    this.operatorMax = operatorMax;
    this.metered = new Metered();
  }

  /** The global layer to write through, so that writes are counted. */
  public GlobalDataLayer metered() {
    return metered;
  }

  /**
   * Refuse (QUOTA_EXCEEDED, nothing changed) a write of {@code bytes} more by {@code app} when the application is
   * at its quota, counting the {@code pending} bytes of its writes on their way from this host (not counted yet).
   * A global layer that cannot be read leaves the last known count in force.
   */
  public void check(String app, long bytes, long pending, String what) {
    Usage u = usage(app);
    if (u.usedBytes() + pending + bytes > u.maxBytes()) {
      boolean own = u.maxBytes() < operatorMax;
      throw new DataLayerException(
          Code.QUOTA_EXCEEDED,
          "[app " + app + "] cannot store " + what + " (" + bytes
              + " bytes): the application stores " + u.usedBytes()
              + " bytes in the global data layer ("
              + pending + " more on their way from this host) and its quota is "
              + u.maxBytes() + " bytes ("
              + (own
                  ? "its own counter " + OWN_LIMIT + ", below the operator's "
                      + "datalayer app.global.max.bytes=" + operatorMax
                  : "datalayer app.global.max.bytes")
              + "); nothing was "
              + "changed: delete keys or maps to free space");
    }
  }

  /** The application's bytes stored and its quota, as this host knows them (re-read when older than a second). */
  public Usage usage(String app) {
    App a = apps.computeIfAbsent(app, k -> new App());
    if (System.nanoTime() - a.refreshed > TimeUnit.MILLISECONDS.toNanos(REFRESH_MS)) {
      refresh(app, a);
    }
    return new Usage(a.used, a.max);
  }

  private void refresh(String app, App a) {
    synchronized (a) {
      if (System.nanoTime() - a.refreshed <= TimeUnit.MILLISECONDS.toNanos(REFRESH_MS)) {
        return; // another caller just did
      }
      try {
        long own = global.readCounter(app, OWN_LIMIT).orElse(0L);
        a.max = own > 0 ? Math.min(own, operatorMax) : operatorMax;
        a.used = global.storedBytes(app);
        if (a.max != a.recordedMax) {
          global.writeStorageMax(app, a.max);
          a.recordedMax = a.max;
        }
      } catch (GlobalUnavailableException e) {
        LOG.debug("[app {}] could not read its stored bytes: {}", app, e.getMessage());
        if (a.recordedMax < 0) {
          a.max = operatorMax;
        }
      }
      a.refreshed = System.nanoTime();
    }
  }

  private void count(String app, long delta) {
    if (delta == 0) {
      return;
    }
    try {
      global.addStoredBytes(app, delta);
    } catch (
        GlobalUnavailableException e) { // the write is in: not retried for its count, which is lost
      LOG.warn("[app {}] {} bytes stored were not counted: {}", app, delta, e.getMessage());
    }
    App a = apps.get(app);
    if (a != null) {
      synchronized (a) {
        a.used += delta;
      }
    }
  }

  private static long name(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /** The global layer as the write-behind sees it: writes and deletes of values counted. */
  private final class Metered implements GlobalDataLayer {
    @Override
    public void createSchema() {
      global.createSchema();
    }

    @Override
    public long maxValueBytes() {
      return global.maxValueBytes();
    }

    @Override
    public Optional<byte[]> readKv(String app, String key) {
      return global.readKv(app, key);
    }

    @Override
    public Optional<DataMetadata> kvMetadata(String app, String key) {
      return global.kvMetadata(app, key);
    }

    private long storedKv(String app, String key) {
      return global.kvMetadata(app, key).map(m -> m.size() + name(key)).orElse(0L);
    }

    @Override
    public void writeKv(String app, String key, byte[] value) {
      long old = storedKv(app, key);
      global.writeKv(app, key, value);
      count(app, name(key) + value.length - old);
    }

    @Override
    public void deleteKv(String app, String key) {
      long old = storedKv(app, key);
      global.deleteKv(app, key);
      count(app, -old);
    }

    @Override
    public List<String> listKeys(String app, String startAfter, int count) {
      return global.listKeys(app, startAfter, count);
    }

    @Override
    public List<String> listMaps(String app, String startAfter, int count) {
      return global.listMaps(app, startAfter, count);
    }

    @Override
    public List<String> listSets(String app, String startAfter, int count) {
      return global.listSets(app, startAfter, count);
    }

    @Override
    public List<String> listCounters(String app, String startAfter, int count) {
      return global.listCounters(app, startAfter, count);
    }

    @Override
    public Optional<byte[]> readMapEntry(String app, String map, String key) {
      return global.readMapEntry(app, map, key);
    }

    @Override
    public Map<String, byte[]> readMap(String app, String map) {
      return global.readMap(app, map);
    }

    private long storedEntry(String app, String map, String key) {
      return global.readMapEntry(app, map, key).map(v -> v.length + name(key)).orElse(0L);
    }

    @Override
    public void writeMapEntry(String app, String map, String key, byte[] value) {
      long old = storedEntry(app, map, key);
      global.writeMapEntry(app, map, key, value);
      count(app, name(key) + value.length - old);
    }

    @Override
    public void deleteMapEntry(String app, String map, String key) {
      long old = storedEntry(app, map, key);
      global.deleteMapEntry(app, map, key);
      count(app, -old);
    }

    @Override
    public void deleteMap(String app, String map) {
      long old = 0;
      for (Map.Entry<String, byte[]> e : global.readMap(app, map).entrySet()) {
        old += name(e.getKey()) + e.getValue().length;
      }
      global.deleteMap(app, map);
      count(app, -old);
    }

    @Override
    public Set<String> readSet(String app, String set) {
      return global.readSet(app, set);
    }

    @Override
    public boolean containsSetItem(String app, String set, String item) {
      return global.containsSetItem(app, set, item);
    }

    @Override
    public void addSetItem(String app, String set, String item) {
      boolean had = global.containsSetItem(app, set, item);
      global.addSetItem(app, set, item);
      count(app, had ? 0 : name(item));
    }

    @Override
    public void removeSetItem(String app, String set, String item) {
      boolean had = global.containsSetItem(app, set, item);
      global.removeSetItem(app, set, item);
      count(app, had ? -name(item) : 0);
    }

    @Override
    public void deleteSet(String app, String set) {
      long old = 0;
      for (String item : global.readSet(app, set)) {
        old += name(item);
      }
      global.deleteSet(app, set);
      count(app, -old);
    }

    @Override
    public Optional<Long> readCounter(String app, String name) {
      return global.readCounter(app, name);
    }

    @Override
    public void writeCounter(String app, String name, long value) {
      global.writeCounter(app, name, value);
    }

    @Override
    public void deleteCounter(String app, String name) {
      global.deleteCounter(app, name);
    }

    @Override
    public void addStoredBytes(String app, long delta) {
      global.addStoredBytes(app, delta);
    }

    @Override
    public long storedBytes(String app) {
      return global.storedBytes(app);
    }

    @Override
    public void writeStorageMax(String app, long maxBytes) {
      global.writeStorageMax(app, maxBytes);
    }

    @Override
    public Optional<Long> storageMax(String app) {
      return global.storageMax(app);
    }

    @Override
    public void close() {
      global.close();
    }
  }
}
