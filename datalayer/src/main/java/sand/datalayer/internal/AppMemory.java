package sand.datalayer.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one application holds in this host's memory, against its quota: its items in memory plus its
 * writes waiting for the global layer ({@link Sizes} says what is counted). One per application name,
 * kept across a revoke, since writes queued before it still hold bytes until they are written.
 * Bytes are added only by {@link HostMemory#reserve}, and released exactly once by whoever took them
 * over (an item, a {@link Charge}, a queued write's {@link WriteBehind.Hold}).
 */
public final class AppMemory {
  private static final Logger LOG = LoggerFactory.getLogger(AppMemory.class);

  private final String app;
  private final HostMemory host;
  private final AtomicLong held = new AtomicLong();
  private final AtomicLong pending = new AtomicLong();
  private final AtomicLong evicted = new AtomicLong();
  /** The application's live data, whose clean items eviction may drop; null once revoked. */
  private final AtomicReference<AppContext> context = new AtomicReference<>();

  AppMemory(String app, HostMemory host) {
    this.app = app;
    this.host = host;
  }

  public String app() {
    return app;
  }

  /** Bytes counted against the quota. */
  public long held() {
    return held.get();
  }

  /** Of {@link #held()}, the bytes of writes not yet in the global layer. */
  public long pending() {
    return pending.get();
  }

  /** Items evicted so far. */
  public long evicted() {
    return evicted.get();
  }

  HostMemory host() {
    return host;
  }

  /** Listed in usage while the application is live here, or still holds bytes after a revoke. */
  public boolean listed() {
    return context.get() != null || held.get() != 0;
  }

  void attach(AppContext ctx) {
    context.set(ctx);
  }

  void detach(AppContext ctx) {
    context.compareAndSet(ctx, null);
  }

  /** Called by {@link HostMemory#reserve} only, under its lock. */
  void add(long bytes) {
    held.addAndGet(bytes);
  }

  /** Give back bytes taken over from a reservation (a value or name left memory, a write was stored). */
  void release(long bytes) {
    held.addAndGet(-bytes);
    host.released(bytes);
  }

  /**
   * The hold of a queued write: its own bytes ({@code ownBytes}, already reserved) and a reference to
   * the value's charge, both counted as pending until the write is in the global layer.
   */
  WriteBehind.Hold hold(long ownBytes, Charge value) {
    if (value != null) {
      value.retain();
    }
    long waiting = ownBytes + (value == null ? 0 : value.bytes());
    pending.addAndGet(waiting);
    return () -> {
      pending.addAndGet(-waiting);
      release(ownBytes);
      if (value != null) {
        value.release();
      }
      host.progressMade();
    };
  }

  /**
   * Evict clean items, least recently used first, until {@code enough} says so or no clean item is
   * left; returns how many were evicted. LRU is approximated: items are ordered by their last use when
   * the list is made (one scan and sort per call; callers evict in batches to a low-water mark so scans
   * are rare), and an item in use at that moment is skipped.
   */
  int evict(BooleanSupplier enough) {
    AppContext ctx = context.get();
    if (ctx == null || enough.getAsBoolean()) {
      return 0;
    }
    List<Residents.Candidate> candidates = new ArrayList<>();
    ctx.addCandidates(candidates);
    candidates.sort(Comparator.comparingLong(Residents.Candidate::lastUsed));
    long before = held.get();
    int n = 0;
    for (Residents.Candidate c : candidates) {
      if (enough.getAsBoolean()) {
        break;
      }
      if (c.evict().getAsBoolean()) {
        n++;
      }
    }
    evicted.addAndGet(n);
    if (n > 0) {
      LOG.debug(
          "[app {}] evicted {} clean items from memory ({} -> {} bytes)",
          app,
          n,
          before,
          held.get());
    }
    return n;
  }

  @Override
  public String toString() {
    return "[app " + app + "] " + held.get() + " bytes, " + pending.get() + " pending";
  }
}
