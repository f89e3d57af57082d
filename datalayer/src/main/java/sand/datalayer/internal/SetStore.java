package sand.datalayer.internal;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import sand.datalayer.CanonicalEncoding;
import sand.datalayer.DataKind;
import sand.datalayer.DataMetadata;

/**
 * One application's sets on this host. A set is loaded whole from the global layer the first time it
 * is touched here; from then on memory holds it, and every change is backed up item by item.
 */
public final class SetStore {

  private static final class LocalSet {
    boolean loaded; // guarded by this
    final TreeSet<String> items = new TreeSet<>(CanonicalEncoding.ORDER); // guarded by this
  }

  private final AppContext ctx;
  private final ConcurrentHashMap<String, LocalSet> sets = new ConcurrentHashMap<>();

  public SetStore(AppContext ctx) {
    this.ctx = ctx;
  }

  /** Add; true when the item was not in the set yet. */
  public boolean add(String set, String item) {
    String app = ctx.app();
    return withSet(set, items -> {
      if (!items.add(item)) {
        return false;
      }
      ctx.backup(DataKind.SET, set, g -> g.addSetItem(app, set, item), false);
      return true;
    });
  }

  /** Remove; true when the item was in the set. */
  public boolean remove(String set, String item) {
    String app = ctx.app();
    return withSet(set, items -> {
      if (!items.remove(item)) {
        return false;
      }
      ctx.backup(DataKind.SET, set, g -> g.removeSetItem(app, set, item), false);
      return true;
    });
  }

  public boolean contains(String set, String item) {
    return withSet(set, items -> items.contains(item));
  }

  /** A copy of the set, in order. */
  public Set<String> retrieve(String set) {
    return withSet(set, LinkedHashSet::new);
  }

  public boolean deleteSet(String set) {
    String app = ctx.app();
    return withSet(set, items -> {
      if (items.isEmpty()) {
        return false;
      }
      items.clear();
      ctx.backup(DataKind.SET, set, g -> g.deleteSet(app, set), false);
      return true;
    });
  }

  public DataMetadata metadata(String set) {
    return withSet(set, items -> CanonicalEncoding.ofSetItems(set, items));
  }

  /** Run {@code op} on the set's items under its lock, loading the set on first touch. */
  private <T> T withSet(String set, Function<TreeSet<String>, T> op) {
    LocalSet s = sets.computeIfAbsent(set, n -> new LocalSet());
    synchronized (s) {
      if (!s.loaded) {
        s.items.addAll(ctx.readThrough(DataKind.SET, set, g -> g.readSet(ctx.app(), set)));
        s.loaded = true;
      }
      return op.apply(s.items);
    }
  }
}
