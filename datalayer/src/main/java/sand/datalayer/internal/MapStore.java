package sand.datalayer.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import sand.datalayer.CanonicalEncoding;
import sand.datalayer.DataKind;
import sand.datalayer.DataMetadata;

/**
 * One application's maps on this host. A map is loaded whole from the global layer the first time it
 * is touched here; from then on memory holds it, and every change is backed up entry by entry.
 */
public final class MapStore {

  private static final class LocalMap {
    boolean loaded; // guarded by this
    final TreeMap<String, byte[]> entries = new TreeMap<>(CanonicalEncoding.ORDER); // guarded by this
  }

  private final AppContext ctx;
  private final ConcurrentHashMap<String, LocalMap> maps = new ConcurrentHashMap<>();

  public MapStore(AppContext ctx) {
    this.ctx = ctx;
  }

  public void put(String map, String key, byte[] value) {
    String app = ctx.app();
    withMap(map, entries -> {
      entries.put(key, value);
      ctx.backup(DataKind.MAP, map, g -> g.writeMapEntry(app, map, key, value), false);
      return null;
    });
  }

  public Optional<byte[]> get(String map, String key) {
    return withMap(map, entries -> Optional.ofNullable(entries.get(key)));
  }

  public boolean delete(String map, String key) {
    String app = ctx.app();
    return withMap(map, entries -> {
      if (entries.remove(key) == null) {
        return false;
      }
      ctx.backup(DataKind.MAP, map, g -> g.deleteMapEntry(app, map, key), false);
      return true;
    });
  }

  public boolean contains(String map, String key) {
    return withMap(map, entries -> entries.containsKey(key));
  }

  public List<String> keys(String map) {
    return withMap(map, entries -> new ArrayList<>(entries.keySet()));
  }

  /** A copy of the map, in key order (the arrays are shared: do not modify them). */
  public Map<String, byte[]> retrieve(String map) {
    return withMap(map, LinkedHashMap::new);
  }

  public boolean deleteMap(String map) {
    String app = ctx.app();
    return withMap(map, entries -> {
      if (entries.isEmpty()) {
        return false;
      }
      entries.clear();
      ctx.backup(DataKind.MAP, map, g -> g.deleteMap(app, map), false);
      return true;
    });
  }

  public DataMetadata metadata(String map) {
    return withMap(map, entries -> CanonicalEncoding.ofMapEntries(map, entries));
  }

  /** Run {@code op} on the map's entries under its lock, loading the map on first touch. */
  private <T> T withMap(String map, Function<TreeMap<String, byte[]>, T> op) {
    LocalMap m = maps.computeIfAbsent(map, n -> new LocalMap());
    synchronized (m) {
      if (!m.loaded) {
        m.entries.putAll(ctx.readThrough(DataKind.MAP, map, g -> g.readMap(ctx.app(), map)));
        m.loaded = true;
      }
      return op.apply(m.entries);
    }
  }
}
