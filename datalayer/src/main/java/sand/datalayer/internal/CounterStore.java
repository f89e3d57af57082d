package sand.datalayer.internal;

import sand.cluster.globaldata.CanonicalEncoding;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.datalayer.DataLayerException;

/**
 * One application's counters on this host: atomic here (each counter has its own lock), backed up as
 * absolute values (the last write wins in the global layer). Known/unknown, eviction and read-through
 * work as in {@link KvStore}; a counter counts as an item plus {@value Sizes#COUNTER_BYTES} bytes.
 */
public final class CounterStore {

  private static final class Counter extends Resident {
    boolean known; // guarded by lock
    Long value; // guarded by lock; null = absent

    Counter(String name) {
      super(name);
    }

    @Override
    boolean inMemory() {
      return known;
    }

    @Override
    void unload(AppContext ctx) {
      ctx.release(resident(name));
      known = false;
      value = null;
    }
  }

  private final AppContext ctx;
  private final Residents<Counter> counters;

  public CounterStore(AppContext ctx) {
    this.ctx = ctx;
    this.counters = ctx.residents(DataKind.COUNTER, Counter::new);
  }

  /** Create the counter with {@code initial}; an existing counter is reset to {@code initial}. */
  public void create(String name, long initial) {
    Counter c = counters.lock(name);
    try {
      set(c, initial);
    } finally {
      counters.release(c);
    }
  }

  public long get(String name) {
    Counter c = counters.lock(name);
    try {
      if (c.known) {
        return require(name, c.value);
      }
      c.readers++;
    } finally {
      c.lock.unlock();
    }
    Long stored;
    try {
      stored = ctx.readThrough(DataKind.COUNTER, name, g -> g.readCounter(ctx.app(), name))
          .orElse(null);
    } catch (RuntimeException e) {
      c.lock.lock();
      c.readers--;
      counters.release(c);
      throw e;
    }
    c.lock.lock();
    try {
      c.readers--;
      if (!c.dead && !c.known && stored != null && ctx.tryReserve(resident(name))) {
        c.known = true;
        c.value = stored;
      }
      return require(name, c.known ? c.value : stored);
    } finally {
      counters.release(c);
    }
  }

  /** Add {@code delta} atomically and return the new value; NOT_FOUND when the counter does not exist. */
  public long add(String name, long delta) {
    Counter c = counters.lock(name);
    try {
      long current = require(name, current(c));
      long now;
      try {
        now = Math.addExact(current, delta);
      } catch (ArithmeticException e) {
        throw new DataLayerException(
            DataLayerException.Code.BAD_REQUEST,
            "counter '" + name + "' (" + current + ") would overflow adding " + delta);
      }
      set(c, now);
      return now;
    } finally {
      counters.release(c);
    }
  }

  /** Delete; true when the counter existed. */
  public boolean delete(String name) {
    Counter c = counters.lock(name);
    try {
      if (current(c) == null) {
        return false;
      }
      long own = Sizes.write(name);
      ctx.reserve((c.known ? 0 : resident(name)) + own, "the delete of counter '" + name + "'");
      c.known = true;
      c.value = null;
      String app = ctx.app();
      ctx.backup(DataKind.COUNTER, name, g -> g.deleteCounter(app, name), true, own, null);
      return true;
    } finally {
      counters.release(c);
    }
  }

  public DataMetadata metadata(String name) {
    Counter c = counters.lock(name);
    try {
      Long v = current(c);
      if (!c.known && v != null && ctx.tryReserve(resident(name))) {
        c.known = true;
        c.value = v;
      }
      return CanonicalEncoding.ofCounterValue(name, v);
    } finally {
      counters.release(c);
    }
  }

  /** The counter's value: memory's when known, else the global layer's (read through, not kept). Under c's lock. */
  private Long current(Counter c) {
    return c.known
        ? c.value
        : ctx.readThrough(DataKind.COUNTER, c.name, g -> g.readCounter(ctx.app(), c.name))
            .orElse(null);
  }

  /** Set the counter to {@code value} and back it up; QUOTA_EXCEEDED changes nothing. Under c's lock. */
  private void set(Counter c, long value) {
    long own = Sizes.write(c.name) + Sizes.COUNTER_BYTES;
    ctx.reserve((c.known ? 0 : resident(c.name)) + own, "counter '" + c.name + "'");
    c.known = true;
    c.value = value;
    String app = ctx.app();
    String name = c.name;
    ctx.backup(DataKind.COUNTER, name, g -> g.writeCounter(app, name, value), true, own, null);
  }

  private static long resident(String name) {
    return Sizes.item(name) + Sizes.COUNTER_BYTES;
  }

  private long require(String name, Long value) {
    if (value == null) {
      throw new DataLayerException(
          DataLayerException.Code.NOT_FOUND,
          "[app " + ctx.app() + "] no counter named '" + name
              + "': create it first (createCounter)");
    }
    return value;
  }
}
