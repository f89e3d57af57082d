package sand.datalayer.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import sand.datalayer.CanonicalEncoding;
import sand.datalayer.DataKind;
import sand.datalayer.DataMetadata;

/**
 * One application's key-value entries on this host. Memory is a cache of the global layer that is
 * always at least as new: a key written or deleted here is "known" from then on (a delete leaves a
 * known-absent slot, so a read cannot fetch the old value back from the global layer before the delete
 * reaches it). A key absent from both stays unknown, so a later write by another host is seen.
 */
public final class KvStore {

  private static final class Slot {
    boolean known; // guarded by this
    byte[] value; // guarded by this; null = absent
  }

  private final AppContext ctx;
  private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();

  public KvStore(AppContext ctx) {
    this.ctx = ctx;
  }

  public void put(String key, byte[] value) {
    Slot s = slots.computeIfAbsent(key, k -> new Slot());
    synchronized (s) {
      s.known = true;
      s.value = value;
      String app = ctx.app();
      ctx.backup(DataKind.KV, key, g -> g.writeKv(app, key, value), true);
    }
  }

  public Optional<byte[]> get(String key) {
    Slot s = slots.get(key);
    if (s != null) {
      synchronized (s) {
        if (s.known) {
          return Optional.ofNullable(s.value);
        }
      }
    }
    // A miss: read through without holding a lock; a local write racing with it wins.
    Optional<byte[]> stored = ctx.readThrough(DataKind.KV, key, g -> g.readKv(ctx.app(), key));
    if (stored.isEmpty()) {
      return stored;
    }
    s = slots.computeIfAbsent(key, k -> new Slot());
    synchronized (s) {
      if (!s.known) {
        s.known = true;
        s.value = stored.get();
      }
      return Optional.ofNullable(s.value);
    }
  }

  /** Delete; true when the key existed (here or, for a key unknown here, in the global layer). */
  public boolean remove(String key) {
    Slot s = slots.computeIfAbsent(key, k -> new Slot());
    synchronized (s) {
      if (!s.known) {
        s.value = ctx.readThrough(DataKind.KV, key, g -> g.readKv(ctx.app(), key)).orElse(null);
      }
      if (s.value == null) {
        return false; // absent; a key absent everywhere stays unknown
      }
      s.known = true;
      s.value = null;
      String app = ctx.app();
      ctx.backup(DataKind.KV, key, g -> g.deleteKv(app, key), true);
      return true;
    }
  }

  /** Up to {@code count} keys after {@code startAfter}, in order: the global layer's, as changed here. */
  public List<String> listKeys(String startAfter, int count) {
    if (count == 0) {
      return List.of();
    }
    Map<String, Boolean> local = new TreeMap<>(CanonicalEncoding.ORDER); // key -> present here
    int deletedHere = 0;
    for (Map.Entry<String, Slot> e : slots.entrySet()) {
      if (CanonicalEncoding.ORDER.compare(e.getKey(), startAfter) <= 0) {
        continue;
      }
      Slot s = e.getValue();
      synchronized (s) {
        if (s.known) {
          local.put(e.getKey(), s.value != null);
          deletedHere += s.value == null ? 1 : 0;
        }
      }
    }
    // Ask for enough global keys that the ones deleted here cannot leave the page short.
    int ask = (int) Math.min(Integer.MAX_VALUE, (long) count + deletedHere);
    List<String> stored = ctx.readThrough(DataKind.KV, null, g -> g.listKeys(ctx.app(), startAfter, ask));
    TreeSet<String> merged = new TreeSet<>(CanonicalEncoding.ORDER);
    for (String k : stored) {
      if (!Boolean.FALSE.equals(local.get(k))) {
        merged.add(k);
      }
    }
    local.forEach((k, present) -> {
      if (present) {
        merged.add(k);
      }
    });
    List<String> page = new ArrayList<>(Math.min(count, merged.size()));
    for (String k : merged) {
      if (page.size() == count) {
        break;
      }
      page.add(k);
    }
    return page;
  }

  public DataMetadata metadata(String key) {
    return CanonicalEncoding.ofKvValue(key, get(key).orElse(null));
  }
}
