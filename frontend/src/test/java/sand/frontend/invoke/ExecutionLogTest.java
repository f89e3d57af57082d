package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.InMemoryClusterStore;

/** The executions' records while Cassandra is away. */
class ExecutionLogTest {

  /** A store whose writes fail while {@code down} counts down (Cassandra away), then succeed. */
  static final class FlakyStore extends InMemoryClusterStore {
    final AtomicInteger down = new AtomicInteger();
    final AtomicInteger tries = new AtomicInteger();

    private void check() {
      tries.incrementAndGet();
      if (down.getAndDecrement() > 0) {
        throw new IllegalStateException("NoNodeAvailableException: no node was available");
      }
    }

    @Override
    public synchronized void startExecution(ExecutionRecord e, Duration ttl) {
      check();
      super.startExecution(e, ttl);
    }

    @Override
    public synchronized void endExecution(
        String id,
        String status,
        String result,
        String error,
        Instant finished,
        String timings,
        long rank,
        Duration ttl) {
      check();
      super.endExecution(id, status, result, error, finished, timings, rank, ttl);
    }
  }

  private static ExecutionRecord running(String id) {
    return new ExecutionRecord(
        id, "a0000000000001", "dev", "running", null, null, Instant.now(), null, "fe1", null);
  }

  @Test
  void aLongSynchronousExecutionIsListedWhileItRunsAQuickOneIsWrittenOnce() throws Exception {
    FlakyStore store = new FlakyStore();
    try (ExecutionLog log =
        new ExecutionLog(store, Duration.ofHours(1), 2, 16, Duration.ofMinutes(1))) {
      log.startedSynchronously(running("quick"));
      log.ended("quick", "succeeded", "1", null, Instant.now(), "[]", FrontendTables.resultRank(1))
          .get(10, TimeUnit.SECONDS);
      assertEquals(2, store.tries.get(), "the start and the end, in one write");
      log.startedSynchronously(running("long"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (store.execution("long").isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertEquals("running", store.execution("long").orElseThrow().status());
      log.ended("long", "succeeded", "2", null, Instant.now(), "[]", FrontendTables.resultRank(1))
          .get(10, TimeUnit.SECONDS);
      assertEquals("succeeded", store.execution("long").orElseThrow().status());
    }
  }

  @Test
  void aResultThatArrivesWhileCassandraIsAwayIsRecordedWhenItIsBack() throws Exception {
    FlakyStore store = new FlakyStore();
    store.down.set(3);
    try (ExecutionLog log =
        new ExecutionLog(store, Duration.ofHours(1), 2, 16, Duration.ofMinutes(1))) {
      log.startedSynchronously(running("e1"));
      log.ended(
              "e1",
              "succeeded",
              "{\"n\":1}",
              null,
              Instant.now(),
              "[]",
              FrontendTables.resultRank(1))
          .get(10, TimeUnit.SECONDS);
      assertEquals(5, store.tries.get(), "three failed tries, then the start and the end");
      assertEquals("succeeded", store.execution("e1").orElseThrow().status());
      assertEquals("{\"n\":1}", store.execution("e1").orElseThrow().result());
    }
  }

  @Test
  void aRecordIsGivenUpOnlyAfterItsRetries() throws Exception {
    FlakyStore store = new FlakyStore();
    store.down.set(Integer.MAX_VALUE);
    try (ExecutionLog log =
        new ExecutionLog(store, Duration.ofHours(1), 1, 16, Duration.ofMillis(600))) {
      log.started(running("e2"));
      long t0 = System.nanoTime();
      log.ended("e2", "succeeded", "1", null, Instant.now(), "[]", FrontendTables.resultRank(1))
          .get(10, TimeUnit.SECONDS);
      assertTrue(store.tries.get() >= 3, "tried again before giving up: " + store.tries.get());
      assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(600));
      assertTrue(store.execution("e2").isEmpty());
    }
  }

  /** Issue 26, finding 12: while Cassandra is away, what waits to be tried again is bounded; the rest is counted. */
  @Test
  void writesWaitingForCassandraAreBoundedAndTheRestCounted() throws Exception {
    FlakyStore store = new FlakyStore();
    store.down.set(Integer.MAX_VALUE);
    String big = "x".repeat(10_000); // 20 000 bytes as a Java string
    try (ExecutionLog log = new ExecutionLog(
        store, Duration.ofHours(1), 2, 16, Duration.ofMinutes(10), 100_000, 1000)) {
      List<CompletableFuture<Void>> writes = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        writes.add(log.ended(
            "e" + i, "succeeded", big, null, Instant.now(), "[]", FrontendTables.resultRank(1)));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (log.dropped() + log.retrying() < 50 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(log.retryBytes() <= 100_000, "bounded: " + log.retryBytes());
      assertTrue(
          log.dropped() >= 45,
          "the writes beyond the bound are given up and counted: " + log.dropped());
      assertEquals(
          log.dropped(), writes.stream().filter(CompletableFuture::isDone).count());
    }
  }
}
