package sand.datalayer.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * One application's maps on this host. A map is loaded whole from the global layer the first time it
 * is touched here; from then on memory holds it, and every change is backed up entry by entry. A map
 * is evicted whole, once all its writes are in the global layer, and loaded again on its next touch.
 * A read of a map that does not fit in the quota is served from the global layer without keeping it.
 */
public final class MapStore {

  private static final class LocalMap extends Resident {
    boolean loaded; // guarded by lock
    final TreeMap<String, byte[]> entries =
        new TreeMap<>(CanonicalEncoding.ORDER); // guarded by lock
    final HashMap<String, Charge> charges =
        new HashMap<>(); // guarded by lock; each entry's value bytes

    LocalMap(String name) {
      super(name);
    }

    @Override
    boolean inMemory() {
      return loaded;
    }

    @Override
    void unload(AppContext ctx) {
      long names = Sizes.item(name);
      for (String key : entries.keySet()) {
        names += Sizes.item(key);
      }
      ctx.release(names);
      charges.values().forEach(Charge::release);
      entries.clear();
      charges.clear();
      loaded = false;
    }

    /** Put an entry whose bytes are reserved; returns the replaced value's charge (to release), or null. */
    Charge put(AppContext ctx, String key, byte[] value) {
      entries.put(key, value);
      return charges.put(key, ctx.charge(value.length));
    }
  }

  private final AppContext ctx;
  private final Residents<LocalMap> maps;

  public MapStore(AppContext ctx) {
    this.ctx = ctx;
    this.maps = ctx.residents(DataKind.MAP, LocalMap::new);
  }

  public void put(String map, String key, byte[] value) {
    String app = ctx.app();
    write(map, m -> {
      long own = Sizes.write(map, key);
      long names = m.entries.containsKey(key) ? 0 : Sizes.item(key);
      ctx.reserve(names + value.length + own, "entry '" + key + "' of map '" + map + "'");
      Charge old = m.put(ctx, key, value);
      ctx.backup(
          DataKind.MAP,
          map,
          g -> g.writeMapEntry(app, map, key, value),
          false,
          own,
          m.charges.get(key));
      if (old != null) {
        old.release();
      }
      return null;
    });
  }

  public Optional<byte[]> get(String map, String key) {
    return read(map, entries -> Optional.ofNullable(entries.get(key)));
  }

  public boolean delete(String map, String key) {
    String app = ctx.app();
    return write(map, m -> {
      if (!m.entries.containsKey(key)) {
        return false;
      }
      long own = Sizes.write(map, key);
      ctx.reserve(own, "the delete of entry '" + key + "' of map '" + map + "'");
      m.entries.remove(key);
      ctx.release(Sizes.item(key));
      ctx.backup(DataKind.MAP, map, g -> g.deleteMapEntry(app, map, key), false, own, null);
      m.charges.remove(key).release();
      return true;
    });
  }

  public boolean contains(String map, String key) {
    return read(map, entries -> entries.containsKey(key));
  }

  public List<String> keys(String map) {
    return read(map, entries -> new ArrayList<>(entries.keySet()));
  }

  /** A copy of the map, in key order (the arrays are shared: do not modify them). */
  public Map<String, byte[]> retrieve(String map) {
    return read(map, LinkedHashMap::new);
  }

  public boolean deleteMap(String map) {
    String app = ctx.app();
    return write(map, m -> {
      if (m.entries.isEmpty()) {
        return false;
      }
      long own = Sizes.write(map);
      ctx.reserve(own, "the delete of map '" + map + "'");
      long keys = 0;
      for (String key : m.entries.keySet()) {
        keys += Sizes.item(key);
      }
      ctx.release(keys);
      ctx.backup(DataKind.MAP, map, g -> g.deleteMap(app, map), false, own, null);
      m.charges.values().forEach(Charge::release);
      m.charges.clear();
      m.entries.clear();
      return true;
    });
  }

  public DataMetadata metadata(String map) {
    return read(map, entries -> CanonicalEncoding.ofMapEntries(map, entries));
  }

  /** Run {@code op} on the map's entries under its lock; a map that does not fit is read, not kept. */
  private <T> T read(String map, Function<TreeMap<String, byte[]>, T> op) {
    LocalMap m = maps.lock(map);
    try {
      if (!m.loaded) {
        Map<String, byte[]> stored =
            ctx.readThrough(DataKind.MAP, map, g -> g.readMap(ctx.app(), map));
        if (!ctx.tryReserve(bytes(map, stored))) {
          TreeMap<String, byte[]> once = new TreeMap<>(CanonicalEncoding.ORDER);
          once.putAll(stored);
          return op.apply(once);
        }
        load(m, stored);
      }
      return op.apply(m.entries);
    } finally {
      maps.release(m);
    }
  }

  /** Run {@code op} on the map under its lock, loading it first; QUOTA_EXCEEDED when it cannot be kept. */
  private <T> T write(String map, Function<LocalMap, T> op) {
    LocalMap m = maps.lock(map);
    try {
      if (!m.loaded) {
        Map<String, byte[]> stored =
            ctx.readThrough(DataKind.MAP, map, g -> g.readMap(ctx.app(), map));
        ctx.reserve(
            bytes(map, stored), "map '" + map + "' (loading it from the global data layer)");
        load(m, stored);
      }
      return op.apply(m);
    } finally {
      maps.release(m);
    }
  }

  /** Install a map read from the global layer; its {@link #bytes} are reserved. */
  private void load(LocalMap m, Map<String, byte[]> stored) {
    stored.forEach((k, v) -> m.put(ctx, k, v));
    m.loaded = true;
  }

  private static long bytes(String map, Map<String, byte[]> entries) {
    long n = Sizes.item(map);
    for (Map.Entry<String, byte[]> e : entries.entrySet()) {
      n += Sizes.item(e.getKey()) + e.getValue().length;
    }
    return n;
  }
}
