package sand.datalayer.internal;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * One application's sets on this host. A set is loaded whole from the global layer the first time it
 * is touched here; from then on memory holds it, and every change is backed up item by item. Eviction
 * and reads of a set that does not fit work as for maps ({@link MapStore}).
 */
public final class SetStore {

  private static final class LocalSet extends Resident {
    boolean loaded; // guarded by lock
    final TreeSet<String> items = new TreeSet<>(CanonicalEncoding.ORDER); // guarded by lock

    LocalSet(String name) {
      super(name);
    }

    @Override
    boolean inMemory() {
      return loaded;
    }

    @Override
    void unload(AppContext ctx) {
      ctx.release(bytes(name, items));
      items.clear();
      loaded = false;
    }
  }

  private final AppContext ctx;
  private final Residents<LocalSet> sets;

  public SetStore(AppContext ctx) {
    this.ctx = ctx;
    this.sets = ctx.residents(DataKind.SET, LocalSet::new);
  }

  /** Add; true when the item was not in the set yet. */
  public boolean add(String set, String item) {
    String app = ctx.app();
    return write(set, items -> {
      if (items.contains(item)) {
        return false;
      }
      long own = Sizes.write(set, item);
      ctx.reserve(Sizes.item(item) + own, "item '" + item + "' of set '" + set + "'");
      items.add(item);
      ctx.backup(DataKind.SET, set, g -> g.addSetItem(app, set, item), false, own, null);
      return true;
    });
  }

  /** Remove; true when the item was in the set. */
  public boolean remove(String set, String item) {
    String app = ctx.app();
    return write(set, items -> {
      if (!items.contains(item)) {
        return false;
      }
      long own = Sizes.write(set, item);
      ctx.reserve(own, "the removal of item '" + item + "' of set '" + set + "'");
      items.remove(item);
      ctx.release(Sizes.item(item));
      ctx.backup(DataKind.SET, set, g -> g.removeSetItem(app, set, item), false, own, null);
      return true;
    });
  }

  public boolean contains(String set, String item) {
    return read(set, items -> items.contains(item));
  }

  /** A copy of the set, in order. */
  public Set<String> retrieve(String set) {
    return read(set, LinkedHashSet::new);
  }

  public boolean deleteSet(String set) {
    String app = ctx.app();
    return write(set, items -> {
      if (items.isEmpty()) {
        return false;
      }
      long own = Sizes.write(set);
      ctx.reserve(own, "the delete of set '" + set + "'");
      ctx.release(bytes(set, items) - Sizes.item(set));
      items.clear();
      ctx.backup(DataKind.SET, set, g -> g.deleteSet(app, set), false, own, null);
      return true;
    });
  }

  public DataMetadata metadata(String set) {
    return read(set, items -> CanonicalEncoding.ofSetItems(set, items));
  }

  /** Run {@code op} on the set's items under its lock; a set that does not fit is read, not kept. */
  private <T> T read(String set, Function<TreeSet<String>, T> op) {
    LocalSet s = sets.lock(set);
    try {
      if (!s.loaded) {
        Set<String> stored = ctx.readThrough(DataKind.SET, set, g -> g.readSet(ctx.app(), set));
        if (!ctx.tryReserve(bytes(set, stored))) {
          TreeSet<String> once = new TreeSet<>(CanonicalEncoding.ORDER);
          once.addAll(stored);
          return op.apply(once);
        }
        s.items.addAll(stored);
        s.loaded = true;
      }
      return op.apply(s.items);
    } finally {
      sets.release(s);
    }
  }

  /** Run {@code op} on the set's items under its lock, loading it first; QUOTA_EXCEEDED when it cannot be kept. */
  private <T> T write(String set, Function<TreeSet<String>, T> op) {
    LocalSet s = sets.lock(set);
    try {
      if (!s.loaded) {
        Set<String> stored = ctx.readThrough(DataKind.SET, set, g -> g.readSet(ctx.app(), set));
        ctx.reserve(
            bytes(set, stored), "set '" + set + "' (loading it from the global data layer)");
        s.items.addAll(stored);
        s.loaded = true;
      }
      return op.apply(s.items);
    } finally {
      sets.release(s);
    }
  }

  private static long bytes(String set, Set<String> items) {
    long n = Sizes.item(set);
    for (String item : items) {
      n += Sizes.item(item);
    }
    return n;
  }
}
