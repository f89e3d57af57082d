package sand.datalayer.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * One application's key-value entries on this host. Memory is a cache of the global layer that is
 * always at least as new: a key written or deleted here is "known" from then on (a delete leaves a
 * known-absent slot, so a read cannot fetch the old value back from the global layer before the delete
 * reaches it). A key absent from both stays unknown, so a later write by another host is seen.
 *
 * <p>A known key may be evicted only once its latest write (or delete) is in the global layer; it is
 * then unknown again and read through on its next use. A slot being read through is kept (not
 * evictable), so a value read before a local write was evicted cannot be installed over it.
 */
public final class KvStore {

  private static final class Slot extends Resident {
    boolean known; // guarded by lock
    byte[] value; // guarded by lock; null = absent
    Charge charge; // guarded by lock; the value's bytes, null when absent

    Slot(String key) {
      super(key);
    }

    @Override
    boolean inMemory() {
      return known;
    }

    @Override
    void unload(AppContext ctx) {
      ctx.release(Sizes.item(name));
      if (charge != null) {
        charge.release();
      }
      known = false;
      value = null;
      charge = null;
    }
  }

  private final AppContext ctx;
  private final Residents<Slot> slots;

  public KvStore(AppContext ctx) {
    this.ctx = ctx;
    this.slots = ctx.residents(DataKind.KV, Slot::new);
  }

  public void put(String key, byte[] value) {
    Slot s = slots.lock(key);
    try {
      long own = Sizes.write(key);
      ctx.reserve((s.known ? 0 : Sizes.item(key)) + value.length + own, "key '" + key + "'");
      Charge old = s.charge;
      s.known = true;
      s.value = value;
      s.charge = ctx.charge(value.length);
      String app = ctx.app();
      ctx.backup(DataKind.KV, key, g -> g.writeKv(app, key, value), true, own, s.charge);
      if (old != null) {
        old.release();
      }
    } finally {
      slots.release(s);
    }
  }

  public Optional<byte[]> get(String key) {
    Slot s = slots.lock(key);
    try {
      if (s.known) {
        return Optional.ofNullable(s.value);
      }
      s.readers++;
    } finally {
      s.lock.unlock();
    }
    // A miss: read through without holding the lock; a local write racing with it wins.
    Optional<byte[]> stored;
    try {
      stored = ctx.readThrough(DataKind.KV, key, g -> g.readKv(ctx.app(), key));
    } catch (RuntimeException e) {
      s.lock.lock();
      s.readers--;
      slots.release(s);
      throw e;
    }
    s.lock.lock();
    try {
      s.readers--;
      if (!s.dead && !s.known && stored.isPresent()) {
        byte[] v = stored.get();
        if (ctx.tryReserve(Sizes.item(key) + v.length)) { // else served without keeping it
          s.known = true;
          s.value = v;
          s.charge = ctx.charge(v.length);
        }
      }
      return s.known ? Optional.ofNullable(s.value) : stored;
    } finally {
      slots.release(s);
    }
  }

  /** Delete; true when the key existed (here or, for a key unknown here, in the global layer). */
  public boolean remove(String key) {
    Slot s = slots.lock(key);
    try {
      boolean present = s.known
          ? s.value != null
          : ctx.readThrough(DataKind.KV, key, g -> g.readKv(ctx.app(), key)).isPresent();
      if (!present) {
        return false; // absent; a key absent everywhere stays unknown
      }
      long own = Sizes.write(key);
      ctx.reserve((s.known ? 0 : Sizes.item(key)) + own, "the delete of key '" + key + "'");
      Charge old = s.charge;
      s.known = true;
      s.value = null;
      s.charge = null;
      String app = ctx.app();
      ctx.backup(DataKind.KV, key, g -> g.deleteKv(app, key), true, own, null);
      if (old != null) {
        old.release();
      }
      return true;
    } finally {
      slots.release(s);
    }
  }

  /** Up to {@code count} keys after {@code startAfter}, in order: the global layer's, as changed here. */
  public List<String> listKeys(String startAfter, int count) {
    if (count == 0) {
      return List.of();
    }
    Map<String, Boolean> local = new TreeMap<>(CanonicalEncoding.ORDER); // key -> present here
    int deletedHere = 0;
    for (Slot s : slots.all()) {
      if (CanonicalEncoding.ORDER.compare(s.name, startAfter) <= 0) {
        continue;
      }
      s.lock.lock();
      try {
        if (!s.dead && s.known) {
          local.put(s.name, s.value != null);
          deletedHere += s.value == null ? 1 : 0;
        }
      } finally {
        s.lock.unlock();
      }
    }
    // Ask for enough global keys that the ones deleted here cannot leave the page short.
    int ask = (int) Math.min(Integer.MAX_VALUE, (long) count + deletedHere);
    List<String> stored =
        ctx.readThrough(DataKind.KV, null, g -> g.listKeys(ctx.app(), startAfter, ask));
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
