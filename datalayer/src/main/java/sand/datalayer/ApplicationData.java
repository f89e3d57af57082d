package sand.datalayer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.datalayer.DataLayerException.Code;
import sand.datalayer.internal.AppContext;
import sand.datalayer.internal.CounterStore;
import sand.datalayer.internal.KvStore;
import sand.datalayer.internal.MapStore;
import sand.datalayer.internal.SetStore;
import sand.datalayer.internal.WriteBehind;

/**
 * The data of one application in this host's local data layer: what a grain's calls reach once its
 * credential has named the application ({@link LocalDataLayer#forCredential}). All names are scoped to
 * this application; there is no way to name another application's data from here.
 *
 * <p>Writes apply to memory and are backed up to the global layer asynchronously, in order per item.
 * Reads are served from memory; a miss reads the global layer (UNAVAILABLE when it cannot be read;
 * an absent value is returned as absent). Maps and sets are loaded whole on their first touch here.
 *
 * <p>Memory is a cache: above the application's quota ({@code app.max.bytes}) its clean items (their
 * latest write is in the global layer) are evicted, least recently used first, and read through again
 * when next used. A write that finds the quota full of writes not yet in the global layer waits a
 * little for them, then gets QUOTA_EXCEEDED, and nothing changes. Reads never get QUOTA_EXCEEDED.
 *
 * <p>Names (keys, map and set names, map keys, set items, counter names) must be non-empty, well-formed
 * Unicode and at most {@value #MAX_NAME_BYTES} bytes in UTF-8 (BAD_REQUEST otherwise). Values above
 * {@code value.max.bytes} are TOO_LARGE. Byte arrays are not copied: do not modify an array after
 * passing it in, nor one handed out.
 */
public final class ApplicationData {
  /** Longest name, in UTF-8 bytes; Cassandra refuses keys above 64 KiB, and names are not payloads. */
  public static final int MAX_NAME_BYTES = GlobalDataLayer.MAX_NAME_BYTES;

  private final AppContext ctx;
  private final long valueMaxBytes;
  private final KvStore kv;
  private final MapStore maps;
  private final SetStore sets;
  private final CounterStore counters;

  ApplicationData(AppContext ctx, long valueMaxBytes) {
    this.ctx = ctx;
    this.valueMaxBytes = valueMaxBytes;
    this.kv = new KvStore(ctx);
    this.maps = new MapStore(ctx);
    this.sets = new SetStore(ctx);
    this.counters = new CounterStore(ctx);
    ctx.attach();
  }

  /** Drop this application's data from memory (it was revoked); calls through this object are then UNAUTHORIZED. */
  void drop() {
    ctx.drop();
  }

  public String application() {
    return ctx.app();
  }

  // ---- key-value

  public void put(String key, byte[] value) {
    kv.put(name("key", key), value("key '" + key + "'", value));
  }

  public Optional<byte[]> get(String key) {
    return kv.get(name("key", key));
  }

  /** Delete a key; true when it existed. */
  public boolean remove(String key) {
    return kv.remove(name("key", key));
  }

  /** Up to {@code count} keys after {@code start} ("" = from the first) in {@link CanonicalEncoding#ORDER}. */
  public List<String> listKeys(String start, int count) {
    if (count < 0) {
      throw bad("listKeys count must be >= 0, got " + count);
    }
    return kv.listKeys(start == null ? "" : start, count);
  }

  // ---- maps

  public void putMapEntry(String map, String key, byte[] value) {
    maps.put(
        name("map name", map),
        name("map key", key),
        value("entry '" + key + "' of map '" + map + "'", value));
  }

  public Optional<byte[]> getMapEntry(String map, String key) {
    return maps.get(name("map name", map), name("map key", key));
  }

  public boolean deleteMapEntry(String map, String key) {
    return maps.delete(name("map name", map), name("map key", key));
  }

  public boolean containsMapKey(String map, String key) {
    return maps.contains(name("map name", map), name("map key", key));
  }

  /** The map's keys in {@link CanonicalEncoding#ORDER}; empty for a map that does not exist. */
  public List<String> getMapKeys(String map) {
    return maps.keys(name("map name", map));
  }

  /** The whole map, in key order; empty for a map that does not exist. */
  public Map<String, byte[]> retrieveMap(String map) {
    return maps.retrieve(name("map name", map));
  }

  /** Delete every entry; true when the map had any. */
  public boolean deleteMap(String map) {
    return maps.deleteMap(name("map name", map));
  }

  // ---- sets

  /** True when the item was added (it was not in the set). */
  public boolean addSetEntry(String set, String item) {
    return sets.add(name("set name", set), name("set item", item));
  }

  /** True when the item was removed (it was in the set). */
  public boolean removeSetEntry(String set, String item) {
    return sets.remove(name("set name", set), name("set item", item));
  }

  public boolean containsSetItem(String set, String item) {
    return sets.contains(name("set name", set), name("set item", item));
  }

  /** The set's items in {@link CanonicalEncoding#ORDER}; empty for a set that does not exist. */
  public Set<String> retrieveSet(String set) {
    return sets.retrieve(name("set name", set));
  }

  public boolean deleteSet(String set) {
    return sets.deleteSet(name("set name", set));
  }

  // ---- counters (atomic on this host)

  /**
   * Create a counter with value {@code initial}. Creating a counter that already exists resets it to
   * {@code initial} (no error): a grain can restart a count without deleting first.
   */
  public void createCounter(String counter, long initial) {
    counters.create(name("counter name", counter), initial);
  }

  /** The counter's value; NOT_FOUND when it does not exist. */
  public long getCounterValue(String counter) {
    return counters.get(name("counter name", counter));
  }

  /** Add {@code delta} atomically, return the new value; NOT_FOUND when the counter does not exist. */
  public long incrementCounter(String counter, long delta) {
    return counters.add(name("counter name", counter), delta);
  }

  /** Subtract {@code delta} atomically, return the new value; NOT_FOUND when the counter does not exist. */
  public long decrementCounter(String counter, long delta) {
    if (delta == Long.MIN_VALUE) {
      throw bad("decrementCounter delta " + delta + " cannot be negated; use incrementCounter");
    }
    return counters.add(name("counter name", counter), -delta);
  }

  /** Delete a counter; true when it existed. */
  public boolean deleteCounter(String counter) {
    return counters.delete(name("counter name", counter));
  }

  // ---- data backup flag (§4.3)

  /**
   * Metadata of the current value of an item as this host sees it (absent: size -1, sha256 ""). Computed once per
   * write of the item (then remembered): data flags name items many times.
   */
  public DataMetadata metadata(DataKind kind, String name) {
    String n = name(kind + " name", name);
    return ctx.metadata(kind, n, () -> switch (kind) {
      case KV -> kv.metadata(n);
      case MAP -> maps.metadata(n);
      case SET -> sets.metadata(n);
      case COUNTER -> counters.metadata(n);
    });
  }

  /** How many times {@link #metadata(DataKind, String)} computed metadata instead of remembering it. */
  public long metadataComputed() {
    return ctx.metadataComputed();
  }

  /** {@link #metadata(DataKind, String)} of each item; only kind and name of the arguments are read. */
  public List<DataMetadata> metadata(List<DataMetadata> items) {
    List<DataMetadata> out = new ArrayList<>(items.size());
    for (DataMetadata item : items) {
      out.add(metadata(item.kind(), item.name()));
    }
    return out;
  }

  /**
   * True when the global data layer holds exactly the value {@code expected} describes (an absent
   * {@code expected} matches an absent item). Used in recovery to decide whether an event whose data
   * backup had started must be processed again. UNAVAILABLE when the global layer cannot be read.
   */
  public boolean verifyGlobal(DataMetadata expected) {
    String n = name(expected.kind() + " name", expected.name());
    String app = ctx.app();
    return readGlobal(expected.kind(), n, app).sameValueAs(expected);
  }

  /** Wait up to {@code timeoutMs} until every write of this application so far is in the global layer. */
  public boolean flush(long timeoutMs) {
    if (timeoutMs < 0) {
      throw bad("flush timeout must be >= 0 ms, got " + timeoutMs);
    }
    return ctx.writeBehind().flush(ctx.app(), timeoutMs);
  }

  /** Completes when the latest write of the item so far is in the global layer (now, if none pending). */
  public CompletableFuture<Void> backupOf(DataKind kind, String name) {
    return ctx.writeBehind().backupOf(new WriteBehind.Item(ctx.app(), kind, name));
  }

  private DataMetadata readGlobal(DataKind kind, String n, String app) {
    try {
      GlobalDataLayer g = ctx.global();
      return switch (kind) {
        case KV -> g.kvMetadata(app, n).orElse(DataMetadata.absent(kind, n));
        case MAP -> CanonicalEncoding.ofMapEntries(n, g.readMap(app, n));
        case SET -> CanonicalEncoding.ofSetItems(n, g.readSet(app, n));
        case COUNTER ->
          CanonicalEncoding.ofCounterValue(n, g.readCounter(app, n).orElse(null));
      };
    } catch (GlobalUnavailableException e) {
      throw new DataLayerException(
          Code.UNAVAILABLE,
          "[app " + app + "] cannot verify " + kind + " '" + n
              + "': the global data layer could not be read (" + e.getMessage() + "); retry later",
          e);
    }
  }

  // ---- checks

  private String name(String what, String name) {
    if (name == null || name.isEmpty()) {
      throw bad("empty " + what + ": names must be non-empty strings");
    }
    if (name.length() * 3L > MAX_NAME_BYTES
        && name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
      throw bad(what + " '" + name.substring(0, 40) + "...' is longer than " + MAX_NAME_BYTES
          + " bytes in UTF-8");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < name.length()
          && Character.isLowSurrogate(name.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw bad(what + " contains an unpaired surrogate at index " + i + ": not valid Unicode");
      }
    }
    return name;
  }

  private byte[] value(String what, byte[] value) {
    if (value == null) {
      throw bad("no value given for " + what);
    }
    if (value.length > valueMaxBytes) {
      throw new DataLayerException(
          Code.TOO_LARGE,
          "[app " + ctx.app() + "] value for " + what + " is "
              + value.length + " bytes, above the limit of " + valueMaxBytes
              + " bytes (value.max.bytes); "
              + "split it, or store it elsewhere and put a reference");
    }
    return value;
  }

  private DataLayerException bad(String message) {
    return new DataLayerException(Code.BAD_REQUEST, "[app " + ctx.app() + "] " + message);
  }
}
