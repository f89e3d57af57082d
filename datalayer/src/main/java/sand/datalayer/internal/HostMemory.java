package sand.datalayer.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory of this host's local data layer: every application's account ({@link AppMemory}), the
 * per-application quota ({@code app.max.bytes}) and the host-wide cap ({@code max.bytes}).
 *
 * <p>Memory is a cache of the global layer. A reservation that does not fit first evicts clean items
 * of the application itself (down to a low-water mark, 1/8 of the quota below it, so the scan is not
 * repeated on every write); above the host cap it then evicts clean items of the largest holders first.
 * Only when that is not enough is it refused. Reservations are serialised (one lock); eviction under it
 * only ever tries item locks, so it cannot deadlock with writers holding them.
 */
public final class HostMemory {
  /**
   * Why a reservation was refused, as things stood then.
   *
   * @param hostCap true when the host cap refused it (the application was within its quota)
   */
  public record Refusal(
      boolean hostCap,
      long appHeld,
      long appPending,
      long appQuota,
      long hostHeld,
      long hostPending,
      long hostMax) {
    /** Bytes of writes whose backup would make room: none means waiting cannot help. */
    long waiting() {
      return hostCap ? hostPending : appPending;
    }
  }

  private final long maxBytes;
  private final long appMaxBytes;
  private final AtomicLong held = new AtomicLong();
  private final ConcurrentHashMap<String, AppMemory> apps = new ConcurrentHashMap<>();
  private final Object reserveLock = new Object();
  private final Object progressLock = new Object();
  private final AtomicLong progress = new AtomicLong();
  private final AtomicInteger waiters = new AtomicInteger();

  public HostMemory(long maxBytes, long appMaxBytes) {
    this.maxBytes = maxBytes;
    this.appMaxBytes = appMaxBytes;
  }

  /** The account of {@code app} (the same one across revokes). */
  public AppMemory account(String app) {
    return apps.computeIfAbsent(app, a -> new AppMemory(a, this));
  }

  public Collection<AppMemory> accounts() {
    return apps.values();
  }

  /** Bytes all applications hold. */
  public long held() {
    return held.get();
  }

  /** Reserve {@code bytes} for {@code a}, evicting clean items as needed; null when reserved, else why not. */
  Refusal reserve(AppMemory a, long bytes) {
    synchronized (reserveLock) {
      if (a.held() + bytes > appMaxBytes) {
        long level = appMaxBytes - bytes - appMaxBytes / 8;
        a.evict(() -> a.held() <= level);
        if (a.held() + bytes > appMaxBytes) {
          return refusal(false, a);
        }
      }
      if (held.get() + bytes > maxBytes) {
        evictLargestFirst(maxBytes - bytes - maxBytes / 16);
        if (held.get() + bytes > maxBytes) {
          return refusal(true, a);
        }
      }
      a.add(bytes);
      held.addAndGet(bytes);
      return null;
    }
  }

  /**
   * Evict from the largest holder until the host is down to {@code level} or it is no longer the
   * largest by a margin (1/64 of the cap, so two similar holders do not alternate item by item), then
   * from the next largest; a holder with nothing clean left is skipped.
   */
  private void evictLargestFirst(long level) {
    long margin = Math.max(1, maxBytes / 64);
    Set<AppMemory> exhausted = new HashSet<>();
    while (held.get() > level) {
      AppMemory largest = null;
      for (AppMemory m : apps.values()) {
        if (!exhausted.contains(m) && (largest == null || m.held() > largest.held())) {
          largest = m;
        }
      }
      if (largest == null) {
        return;
      }
      long runnerUp = 0;
      for (AppMemory m : apps.values()) {
        if (m != largest && !exhausted.contains(m)) {
          runnerUp = Math.max(runnerUp, m.held());
        }
      }
      AppMemory victim = largest;
      long floor = runnerUp - margin;
      if (victim.evict(() -> held.get() <= level || victim.held() < floor) == 0) {
        exhausted.add(victim);
      }
    }
  }

  private Refusal refusal(boolean hostCap, AppMemory a) {
    long hostPending = 0;
    for (AppMemory m : apps.values()) {
      hostPending += m.pending();
    }
    return new Refusal(
        hostCap, a.held(), a.pending(), appMaxBytes, held.get(), hostPending, maxBytes);
  }

  void released(long bytes) {
    held.addAndGet(-bytes);
  }

  /** A count of writes that reached the global layer (and so freed memory); see {@link #awaitProgress}. */
  long progress() {
    return progress.get();
  }

  /** Wake writers waiting for room: a write reached the global layer. */
  void progressMade() {
    progress.incrementAndGet();
    if (waiters.get() > 0) {
      synchronized (progressLock) {
        progressLock.notifyAll();
      }
    }
  }

  /** Wait up to {@code nanos} for a write to reach the global layer after {@code seen} was read. */
  void awaitProgress(long seen, long nanos) throws InterruptedException {
    long deadline = System.nanoTime() + nanos;
    synchronized (progressLock) {
      waiters.incrementAndGet();
      try {
        long left = nanos;
        while (progress.get() == seen && left > 0) {
          TimeUnit.NANOSECONDS.timedWait(progressLock, left);
          left = deadline - System.nanoTime();
        }
      } finally {
        waiters.decrementAndGet();
      }
    }
  }

  /** The accounts to list in usage. */
  public List<AppMemory> listed() {
    List<AppMemory> out = new ArrayList<>();
    for (AppMemory m : apps.values()) {
      if (m.listed()) {
        out.add(m);
      }
    }
    return out;
  }
}
