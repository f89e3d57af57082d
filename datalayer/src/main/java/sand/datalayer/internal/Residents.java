package sand.datalayer.internal;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import sand.contracts.DataKind;

/**
 * The items of one kind of one application in memory, by name. An item is removed from the map (and
 * marked dead) when it is evicted, dropped, or left with nothing in memory, so names that were only
 * read, or are absent everywhere, do not accumulate.
 */
final class Residents<R extends Resident> {
  /** An item eviction may try, with its last use when the candidates were listed. */
  record Candidate(long lastUsed, BooleanSupplier evict) {}

  private final AppContext ctx;
  private final DataKind kind;
  private final Function<String, R> create;
  private final ConcurrentHashMap<String, R> map = new ConcurrentHashMap<>();

  Residents(AppContext ctx, DataKind kind, Function<String, R> create) {
    this.ctx = ctx;
    this.kind = kind;
    this.create = create;
  }

  /**
   * The live item named {@code name} (created empty when absent), locked by this thread; hand it back
   * with {@link #release}. UNAUTHORIZED once the application was revoked on this host.
   */
  R lock(String name) {
    while (true) {
      R r = map.computeIfAbsent(name, create);
      r.lock.lock();
      if (!r.dead) {
        if (ctx.dropped()) {
          release(r);
          throw ctx.revoked();
        }
        r.touch();
        return r;
      }
      r.lock.unlock(); // evicted meanwhile: its successor is (or will be) in the map
    }
  }

  /** Unlock; an item left with nothing in memory and no reader waiting leaves the map. */
  void release(R r) {
    try {
      if (!r.dead && !r.inMemory() && r.readers == 0) {
        r.dead = true;
        map.remove(r.name, r);
      }
    } finally {
      r.lock.unlock();
    }
  }

  /** Every item now in the map (weakly consistent: for listings). */
  Iterable<R> all() {
    return map.values();
  }

  void addCandidates(List<Candidate> out) {
    for (R r : map.values()) {
      out.add(new Candidate(r.lastUsed, () -> tryEvict(r)));
    }
  }

  /**
   * Evict {@code r} if it is clean: its latest write is in the global layer, so it can be read back
   * (a known-absent key too: its delete reached the global layer). Never waits for a lock, and never
   * takes an item this thread is writing.
   */
  boolean tryEvict(R r) {
    if (r.lock.isHeldByCurrentThread() || !r.lock.tryLock()) {
      return false;
    }
    try {
      if (r.dead
          || !r.inMemory()
          || r.readers > 0
          || !ctx.writeBehind().isClean(new WriteBehind.Item(ctx.app(), kind, r.name))) {
        return false;
      }
      r.unload(ctx);
      r.dead = true;
      map.remove(r.name, r);
      return true;
    } finally {
      r.lock.unlock();
    }
  }

  /** Drop every item, clean or not (the application was revoked); their queued writes still go out. */
  void dropAll() {
    for (R r : map.values()) {
      r.lock.lock();
      try {
        if (!r.dead) {
          if (r.inMemory()) {
            r.unload(ctx);
          }
          r.dead = true;
          map.remove(r.name, r);
        }
      } finally {
        r.lock.unlock();
      }
    }
  }
}
