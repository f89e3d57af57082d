package sand.datalayer.internal;

import java.util.concurrent.ConcurrentHashMap;
import sand.datalayer.CanonicalEncoding;
import sand.datalayer.DataKind;
import sand.datalayer.DataLayerException;
import sand.datalayer.DataMetadata;

/**
 * One application's counters on this host: atomic here (each counter has its own lock), backed up as
 * absolute values (the last write wins in the global layer). Known/unknown works as in {@link KvStore}.
 */
public final class CounterStore {

  private static final class Counter {
    boolean known; // guarded by this
    Long value; // guarded by this; null = absent
  }

  private final AppContext ctx;
  private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

  public CounterStore(AppContext ctx) {
    this.ctx = ctx;
  }

  /** Create the counter with {@code initial}; an existing counter is reset to {@code initial}. */
  public void create(String name, long initial) {
    Counter c = counters.computeIfAbsent(name, n -> new Counter());
    synchronized (c) {
      c.known = true;
      c.value = initial;
      write(name, initial);
    }
  }

  public long get(String name) {
    Counter c = counters.get(name);
    if (c != null) {
      synchronized (c) {
        if (c.known) {
          return require(name, c.value);
        }
      }
    }
    Long stored = ctx.readThrough(DataKind.COUNTER, name, g -> g.readCounter(ctx.app(), name)).orElse(null);
    require(name, stored);
    c = counters.computeIfAbsent(name, n -> new Counter());
    synchronized (c) {
      if (!c.known) {
        c.known = true;
        c.value = stored;
      }
      return require(name, c.value);
    }
  }

  /** Add {@code delta} atomically and return the new value; NOT_FOUND when the counter does not exist. */
  public long add(String name, long delta) {
    Counter c = counters.computeIfAbsent(name, n -> new Counter());
    synchronized (c) {
      load(name, c);
      long now;
      try {
        now = Math.addExact(require(name, c.value), delta);
      } catch (ArithmeticException e) {
        throw new DataLayerException(DataLayerException.Code.BAD_REQUEST,
            "counter '" + name + "' (" + c.value + ") would overflow adding " + delta);
      }
      c.value = now;
      write(name, now);
      return now;
    }
  }

  /** Delete; true when the counter existed. */
  public boolean delete(String name) {
    Counter c = counters.computeIfAbsent(name, n -> new Counter());
    synchronized (c) {
      load(name, c);
      if (c.value == null) {
        return false;
      }
      c.value = null;
      String app = ctx.app();
      ctx.backup(DataKind.COUNTER, name, g -> g.deleteCounter(app, name), true);
      return true;
    }
  }

  public DataMetadata metadata(String name) {
    Counter c = counters.computeIfAbsent(name, n -> new Counter());
    synchronized (c) {
      load(name, c);
      return CanonicalEncoding.ofCounterValue(name, c.value);
    }
  }

  /** Make the counter known (read through on a miss); an absent counter stays unknown. */
  private void load(String name, Counter c) {
    if (!c.known) {
      c.value = ctx.readThrough(DataKind.COUNTER, name, g -> g.readCounter(ctx.app(), name)).orElse(null);
      c.known = c.value != null;
    }
  }

  private void write(String name, long value) {
    String app = ctx.app();
    ctx.backup(DataKind.COUNTER, name, g -> g.writeCounter(app, name, value), true);
  }

  private long require(String name, Long value) {
    if (value == null) {
      throw new DataLayerException(DataLayerException.Code.NOT_FOUND,
          "[app " + ctx.app() + "] no counter named '" + name + "': create it first (createCounter)");
    }
    return value;
  }
}
