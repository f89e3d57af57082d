package sand.datalayer.internal;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.contracts.DataKind;

/**
 * Asynchronous backup of local writes to the global data layer (paper §4.3), like the local bus's
 * backup to the global bus: in order per item, never dropped, retried with exponential back-off while
 * the global layer fails.
 *
 * <p>Each item (application, kind, name) is served by one of N single-thread shards, chosen by hash,
 * so writes to one item reach the global layer in the order they were submitted; writes to different
 * items proceed in parallel. A failing write is retried until it succeeds, holding back the writes
 * queued behind it in its shard (that is what keeps the order). Callers submit while holding the
 * item's lock, so the queue order is the order of the local writes.
 *
 * <p>A write that replaces the whole value (a key-value put or delete, a counter's absolute value)
 * takes the place of a replaceable write of the same item still waiting in the queue: only the last
 * value matters, and a burst of writes to a hot key or counter during an outage then costs one queue
 * slot instead of one per write. The global layer still sees the item's values in local order.
 *
 * <p>Each write carries a {@link Hold} on the bytes it keeps in memory (counted against its
 * application's quota), given back when the write is in the global layer or replaced by a newer one.
 */
public final class WriteBehind implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WriteBehind.class);

  /** One data item of one application: the unit of ordering. */
  public record Item(String app, DataKind kind, String name) {
    @Override
    public String toString() {
      return "[app " + app + "] " + kind + " '" + name + "'";
    }
  }

  /** The bytes a queued write keeps in memory; released once, when it is written or replaced. */
  @FunctionalInterface
  public interface Hold {
    Hold NONE = () -> {};

    void release();
  }

  /** The global-layer call a local write turns into. */
  @FunctionalInterface
  public interface Write {
    void applyTo(GlobalDataLayer global);
  }

  private static final class Pending {
    final Item item;
    final boolean replaceable;
    final CompletableFuture<Void> done = new CompletableFuture<>();
    Write write; // guarded by the shard
    Hold hold; // guarded by the shard until started
    boolean started; // guarded by the shard

    Pending(Item item, Write write, boolean replaceable, Hold hold) {
      this.item = item;
      this.write = write;
      this.replaceable = replaceable;
      this.hold = hold;
    }
  }

  private final GlobalDataLayer global;
  private final Duration firstBackoff;
  private final Duration maxBackoff;
  private final Shard[] shards;
  /** The last write submitted per item and not yet in the global layer. */
  private final ConcurrentHashMap<Item, Pending> latest = new ConcurrentHashMap<>();

  private final AtomicLong pending = new AtomicLong();
  private volatile boolean stopping;

  public WriteBehind(
      GlobalDataLayer global, int threads, Duration firstBackoff, Duration maxBackoff) {
    if (threads < 1) {
      throw new IllegalArgumentException("write-behind needs at least one thread, got " + threads);
    }
    this.global = global;
    this.firstBackoff = firstBackoff;
    this.maxBackoff = maxBackoff;
    this.shards = new Shard[threads];
    for (int i = 0; i < threads; i++) {
      shards[i] = new Shard(i);
      shards[i].thread.start();
    }
  }

  /**
   * Queue {@code write} of {@code item} behind the item's earlier writes; {@code hold} is released once
   * the write is in the global layer (or replaced). Returns a future completed once the write is in the
   * global layer (dependent actions run on the backup thread: keep them short).
   */
  public CompletableFuture<Void> submit(Item item, Write write, boolean replaceable, Hold hold) {
    if (stopping) {
      throw new IllegalStateException(
          "the local data layer is closed; " + item + " was not written");
    }
    Shard shard = shards[Math.floorMod(item.hashCode(), shards.length)];
    synchronized (shard) {
      Pending last = latest.get(item);
      if (replaceable && last != null && last.replaceable && !last.started) {
        Hold replaced = last.hold;
        last.write = write;
        last.hold = hold;
        replaced.release();
        return last.done.copy();
      }
      Pending p = new Pending(item, write, replaceable, hold);
      latest.put(item, p);
      pending.incrementAndGet();
      shard.queue.addLast(p);
      shard.notifyAll();
      return p.done.copy();
    }
  }

  /** Completes when the latest write of {@code item} so far is in the global layer (now, if none is pending). */
  public CompletableFuture<Void> backupOf(Item item) {
    Pending p = latest.get(item);
    return p == null ? CompletableFuture.completedFuture(null) : p.done.copy();
  }

  /**
   * True when every write of {@code item} submitted so far is in the global layer: memory may then drop
   * the item and read it back later. Call it holding the item's lock, so no write can be submitted meanwhile.
   */
  public boolean isClean(Item item) {
    return !latest.containsKey(item);
  }

  /** Wait up to {@code timeoutMs} until every write of {@code app} submitted so far is in the global layer. */
  public boolean flush(String app, long timeoutMs) {
    return await(item -> item.app().equals(app), timeoutMs);
  }

  /** Wait up to {@code timeoutMs} until every write submitted so far is in the global layer. */
  public boolean flushAll(long timeoutMs) {
    return await(item -> true, timeoutMs);
  }

  /** Writes queued or being retried (a replaced write counts once): for metrics. */
  public long pendingWrites() {
    return pending.get();
  }

  /** Stop the backup threads now; writes still queued are not written (flush first). */
  @Override
  public void close() {
    stopping = true;
    for (Shard s : shards) {
      s.thread.interrupt();
    }
    for (Shard s : shards) {
      try {
        s.thread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    long left = pending.get();
    if (left > 0) {
      LOG.error("write-behind stopped with {} writes not in the global data layer", left);
    }
  }

  private boolean await(Predicate<Item> which, long timeoutMs) {
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (Pending p : latest.values()) {
      if (which.test(p.item)) {
        waits.add(p.done);
      }
    }
    if (waits.isEmpty()) {
      return true;
    }
    try {
      CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
          .get(timeoutMs, TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) {
      throw new IllegalStateException("a backup future failed", e); // never completed exceptionally
    }
  }

  private final class Shard implements Runnable {
    final ArrayDeque<Pending> queue = new ArrayDeque<>(); // guarded by this
    final Thread thread;

    Shard(int index) {
      thread = new Thread(this, "datalayer-backup-" + index);
      thread.setDaemon(true);
    }

    @Override
    public void run() {
      while (!stopping) {
        Pending p;
        Write write;
        Hold hold;
        synchronized (this) {
          while (queue.isEmpty() && !stopping) {
            try {
              wait();
            } catch (InterruptedException e) {
              return;
            }
          }
          if (stopping) {
            return;
          }
          p = queue.pollFirst();
          p.started = true;
          write = p.write;
          hold = p.hold;
        }
        if (!applyWithRetry(p.item, write)) {
          return; // stopping
        }
        synchronized (this) {
          latest.remove(p.item, p);
        }
        pending.decrementAndGet();
        hold.release(); // before done: a writer waiting for room sees it as soon as flush() would
        p.done.complete(null); // outside the lock: dependents may take item locks
      }
    }

    /** Apply until it succeeds; false when interrupted by close(). */
    private boolean applyWithRetry(Item item, Write write) {
      long backoff = firstBackoff.toMillis();
      for (int attempt = 1; ; attempt++) {
        try {
          write.applyTo(global);
          if (attempt > 1) {
            LOG.info("{} backed up to the global data layer after {} attempts", item, attempt);
          } else {
            LOG.debug("{} backed up to the global data layer", item);
          }
          return true;
        } catch (RuntimeException e) {
          if (attempt == 1 || attempt % 20 == 0) {
            LOG.warn(
                "{}: backup to the global data layer failed (attempt {}), retrying every <= {} ms "
                    + "until it succeeds; {} writes pending: {}",
                item,
                attempt,
                maxBackoff.toMillis(),
                pending.get(),
                e.toString());
          }
        }
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException e) {
          return false;
        }
        backoff = Math.min(backoff * 2, maxBackoff.toMillis());
      }
    }
  }
}
