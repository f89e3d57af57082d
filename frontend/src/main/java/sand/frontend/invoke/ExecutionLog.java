package sand.frontend.invoke;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.common.Backoff;

/**
 * The executions' bookkeeping in Cassandra, written behind the request path (docs/api.md "Executions"): a
 * request is answered as soon as its result arrives, and its 'running' and final records are written by a
 * few background threads, each with a time to live. The order the writes land in does not matter: the
 * final record carries a rank ({@link ClusterStore#resultRank}) and the highest rank wins. When the queue is
 * full the request's own thread writes (backpressure, nothing dropped). A synchronous request's id is known to
 * nobody before its answer carries it, so its start is held back and written with its end, in one write, unless it
 * runs longer than a second or two ({@link #HOLD_MS}). A write
 * that fails (Cassandra away) is tried again for up to 10 minutes, while the writes waiting to be tried again hold
 * less than {@link #MAX_RETRY_BYTES} and {@link #MAX_RETRIES} records: beyond, a failed write is given up at once
 * and counted ({@link #dropped}), so a long Cassandra outage costs bounded memory (issue 26, finding 12).
 */
public final class ExecutionLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutionLog.class);

  private final ClusterStore store;
  private final Duration ttl;
  private final ThreadPoolExecutor writers;
  private final Map<String, ExecutionRecord> heldBack = new ConcurrentHashMap<>();
  private final Duration retryFor;
  private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "execution-log-retry");
    t.setDaemon(true);
    return t;
  });
  private static final long MAX_RETRY_BYTES = 32L << 20;
  private static final int MAX_RETRIES = 10_000;
  private final AtomicLong retryBytes = new AtomicLong();
  private final AtomicInteger retrying = new AtomicInteger();
  private final AtomicLong dropped = new AtomicLong();
  private final long maxRetryBytes;
  private final int maxRetries;
  /** Pauses between tries of a failed write: Cassandra is usually back within seconds. */
  private static final Backoff PAUSES = Backoff.ofMillis(250, 5000);

  public ExecutionLog(ClusterStore store, Duration ttl, int threads, int queue) {
    this(store, ttl, threads, queue, Duration.ofMinutes(10));
  }

  /** @param retryFor how long a failed write is tried again before its record is given up (logged) */
  public ExecutionLog(ClusterStore store, Duration ttl, int threads, int queue, Duration retryFor) {
    this(store, ttl, threads, queue, retryFor, MAX_RETRY_BYTES, MAX_RETRIES);
  }

  /** @param maxRetryBytes, maxRetries what the writes waiting to be tried again may hold at most */
  public ExecutionLog(
      ClusterStore store,
      Duration ttl,
      int threads,
      int queue,
      Duration retryFor,
      long maxRetryBytes,
      int maxRetries) {
    this.maxRetryBytes = maxRetryBytes;
    this.maxRetries = maxRetries;
    this.store = store;
    this.ttl = ttl;
    this.retryFor = retryFor;
    this.writers = new ThreadPoolExecutor(
        threads,
        threads,
        0,
        TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(queue),
        r -> {
          Thread t = new Thread(r, "execution-log");
          t.setDaemon(true);
          return t;
        },
        new ThreadPoolExecutor.CallerRunsPolicy());
    retries.scheduleWithFixedDelay(
        this::releaseLongRunning, HOLD_MS, HOLD_MS, TimeUnit.MILLISECONDS);
  }

  /**
   * A synchronous request still running after one to two {@link #HOLD_MS}s gets its 'running' record now: a long
   * execution is listed while it runs (its logs too: a KNIX function that reads its workflow's logs finds its own),
   * and the quick ones, nearly all, still cost one write.
   */
  static final long HOLD_MS = 1000;

  private Set<String> heldAtLastLook = Set.of();

  private void releaseLongRunning() {
    try {
      for (String id : heldAtLastLook) {
        release(id);
      }
      heldAtLastLook = Set.copyOf(heldBack.keySet());
    } catch (RuntimeException e) {
      LOG.warn("writing long-running executions' starts failed: {}", e.toString());
    }
  }

  private Duration ttl() {
    return ttl;
  }

  /** Completes when the start is written (or given up after its retries). */
  CompletableFuture<Void> started(ExecutionRecord e) {
    return write("start", e.executionId(), 256, () -> store.startExecution(e, ttl));
  }

  /** A synchronous request started: its record is written with its end ({@link #ended}), or by {@link #release}. */
  void startedSynchronously(ExecutionRecord e) {
    heldBack.put(e.executionId(), e);
  }

  /** Write a held-back start now if its end has not come (a request that ended without a result). */
  void release(String executionId) {
    ExecutionRecord e = heldBack.remove(executionId);
    if (e != null) {
      started(e);
    }
  }

  /**
   * How the execution ended; {@code rank} decides between several ends of one execution. Completes when the
   * write is done (or was given up and logged after its retries).
   */
  CompletableFuture<Void> ended(
      String executionId,
      String status,
      String result,
      String error,
      Instant finished,
      String timings,
      long rank) {
    ExecutionRecord start = heldBack.remove(executionId);
    long size = 256 + length(result) + length(error) + length(timings);
    if (start != null) {
      return write(
          "start and end",
          executionId,
          size,
          () -> store.recordExecution(start, status, result, error, finished, timings, rank, ttl));
    } else {
      return write(
          "end",
          executionId,
          size,
          () ->
              store.endExecution(executionId, status, result, error, finished, timings, rank, ttl));
    }
  }

  /** Writes not yet done (metrics). */
  public int pending() {
    return writers.getQueue().size() + writers.getActiveCount();
  }

  private static long length(String s) {
    return s == null ? 0 : 2L * s.length();
  }

  /** Records given up because too much was waiting to be tried again (metrics). */
  public long dropped() {
    return dropped.get();
  }

  /** Writes waiting to be tried again. */
  int retrying() {
    return retrying.get();
  }

  /** Bytes held by writes waiting to be tried again (metrics). */
  public long retryBytes() {
    return retryBytes.get();
  }

  private CompletableFuture<Void> write(String what, String executionId, long size, Runnable w) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    attempt(what, executionId, size, w, done, System.nanoTime(), 0);
    return done;
  }

  /**
   * One try of a write; a failed one (Cassandra away) is tried again with a growing pause for up to
   * {@code retryFor}: a result that arrived while Cassandra was down is recorded when it is back.
   */
  private void attempt(
      String what,
      String executionId,
      long size,
      Runnable w,
      CompletableFuture<Void> done,
      long since,
      int failures) {
    Runnable once = () -> {
      try {
        w.run();
        if (failures > 0) {
          retrying.decrementAndGet();
          retryBytes.addAndGet(-size);
          LOG.info(
              "[execution {}] its {} is recorded after {} failed tries",
              executionId,
              what,
              failures);
        }
        done.complete(null);
      } catch (RuntimeException e) {
        if (System.nanoTime() - since > retryFor.toNanos() || retries.isShutdown()) {
          LOG.warn(
              "[execution {}] could not record its {}; given up after {} tries: {}",
              executionId,
              what,
              failures + 1,
              e.toString());
          if (failures > 0) {
            retrying.decrementAndGet();
            retryBytes.addAndGet(-size);
          }
          done.complete(null);
          return;
        }
        if (failures == 0) {
          if (retrying.incrementAndGet() > maxRetries
              | retryBytes.addAndGet(size) > maxRetryBytes) {
            retrying.decrementAndGet();
            retryBytes.addAndGet(-size);
            if (dropped.incrementAndGet() % 1000
                == 1) { // one line per thousand, not one per record
              LOG.warn(
                  "[execution {}] could not record its {}: {}; not tried again: the writes waiting for Cassandra "
                      + "hold the most allowed ({} records, {} bytes); {} given up so far",
                  executionId,
                  what,
                  e.toString(),
                  maxRetries,
                  maxRetryBytes,
                  dropped.get());
            }
            done.complete(null);
            return;
          }
          LOG.warn(
              "[execution {}] could not record its {}: {}; trying again",
              executionId,
              what,
              e.toString());
        }
        retries.schedule(
            () -> attempt(what, executionId, size, w, done, since, failures + 1),
            PAUSES.afterMs(failures + 1),
            TimeUnit.MILLISECONDS);
      }
    };
    if (writers.isShutdown()) {
      once.run(); // closing: this thread writes (the pool would drop it)
    } else {
      writers.execute(once);
    }
  }

  /** Finish the queued writes (bounded), then stop. */
  @Override
  public void close() {
    heldBack.keySet().forEach(this::release);
    retries.shutdown(); // a write failing from now on is given up at once
    writers.shutdown();
    try {
      if (!writers.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn(
            "{} execution records not written at shutdown", writers.getQueue().size());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
