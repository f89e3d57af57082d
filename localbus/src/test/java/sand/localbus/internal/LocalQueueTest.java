package sand.localbus.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LocalQueueTest {
  private static final long SECONDS_30 = TimeUnit.SECONDS.toNanos(30);
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  private static LocalQueue<String> queue(int capacity) {
    return new LocalQueue<>("app/g", capacity, String::length);
  }

  /** Wait until {@code n} pollers are blocked in the queue's condition (or fail after 10 s). */
  static void awaitPollers(LocalQueue<?> q, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (q.stats().waitingPollers() < n) {
      assertTrue(System.nanoTime() < deadline, "pollers never blocked on " + q.name());
      Thread.sleep(2);
    }
  }

  @Test
  void fifoHoldsForEachOfConcurrentProducers() throws Exception {
    LocalQueue<String> q = queue(100_000);
    int producers = 4;
    int perProducer = 5000;
    List<Future<?>> running = new ArrayList<>();
    for (int p = 0; p < producers; p++) {
      int id = p;
      running.add(pool.submit(() -> {
        for (int i = 0; i < perProducer; i++) {
          assertEquals(LocalQueue.Offer.ENQUEUED, q.offer(id + ":" + i));
        }
      }));
    }
    int[] next = new int[producers];
    int received = 0;
    while (received < producers * perProducer) {
      for (String m : q.poll(1000, Long.MAX_VALUE, SECONDS_30)) {
        int id = Integer.parseInt(m.substring(0, m.indexOf(':')));
        assertEquals(
            next[id]++,
            Integer.parseInt(m.substring(m.indexOf(':') + 1)),
            "order of producer " + id);
        received++;
      }
    }
    for (Future<?> f : running) {
      f.get();
    }
    assertEquals(0, q.size());
    assertEquals(producers * perProducer, q.stats().published());
    assertEquals(producers * perProducer, q.stats().polled());
  }

  @Test
  void offerWakesABlockedPollerLongBeforeItsTimeout() throws Exception {
    LocalQueue<String> q = queue(10);
    long start = System.nanoTime();
    CompletableFuture<List<String>> polled =
        CompletableFuture.supplyAsync(() -> poll(q, 10, SECONDS_30), pool);
    awaitPollers(q, 1);
    q.offer("hello");
    assertEquals(List.of("hello"), polled.get(10, TimeUnit.SECONDS));
    assertTrue(
        System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20),
        "woken by the offer, not the timeout");
  }

  @Test
  void everyWaitingPollerGetsAMessageOfABurst() throws Exception {
    LocalQueue<String> q = queue(10);
    List<CompletableFuture<List<String>>> pollers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      pollers.add(CompletableFuture.supplyAsync(() -> poll(q, 1, SECONDS_30), pool));
    }
    awaitPollers(q, 3);
    q.lock();
    try { // one batch appends all three under the lock
      q.appendLocked("a");
      q.appendLocked("b");
      q.appendLocked("c");
    } finally {
      q.unlock();
    }
    List<String> got = new ArrayList<>();
    for (CompletableFuture<List<String>> p : pollers) {
      got.addAll(p.get(10, TimeUnit.SECONDS));
    }
    got.sort(null);
    assertEquals(List.of("a", "b", "c"), got);
  }

  @Test
  void timeoutReturnsEmptyAfterWaiting() throws Exception {
    LocalQueue<String> q = queue(10);
    long start = System.nanoTime();
    assertEquals(List.of(), q.poll(10, Long.MAX_VALUE, TimeUnit.MILLISECONDS.toNanos(200)));
    assertTrue(
        System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(190), "waited for the timeout");
    assertEquals(List.of(), q.poll(10, Long.MAX_VALUE, 0));
  }

  @Test
  void pollTakesAtMostMaxInOrder() throws Exception {
    LocalQueue<String> q = queue(10);
    for (String s : List.of("a", "b", "c", "d")) {
      q.offer(s);
    }
    assertEquals(List.of("a", "b", "c"), q.poll(3, Long.MAX_VALUE, 0));
    assertEquals(List.of("d"), q.poll(3, Long.MAX_VALUE, 0));
  }

  @Test
  void pollStopsAtTheByteBudgetButTakesAtLeastOne() throws Exception {
    LocalQueue<String> q = queue(10);
    for (String s : List.of("aaaa", "bbbb", "cccc")) {
      q.offer(s);
    }
    assertEquals(List.of("aaaa", "bbbb"), q.poll(10, 9, 0));
    assertEquals(List.of("cccc"), q.poll(10, 1, 0));
  }

  @Test
  void fullQueueRefusesWithoutDropping() throws Exception {
    LocalQueue<String> q = queue(2);
    q.offer("a");
    q.offer("b");
    assertEquals(LocalQueue.Offer.FULL, q.offer("c"));
    assertEquals(List.of("a", "b"), q.poll(10, Long.MAX_VALUE, 0));
  }

  @Test
  void deleteWakesPollersEmptyAndRefusesLaterOffers() throws Exception {
    LocalQueue<String> q = queue(10);
    CompletableFuture<List<String>> polled =
        CompletableFuture.supplyAsync(() -> poll(q, 10, SECONDS_30), pool);
    awaitPollers(q, 1);
    assertEquals(0, q.delete());
    assertEquals(List.of(), polled.get(10, TimeUnit.SECONDS));
    assertEquals(LocalQueue.Offer.DELETED, q.offer("late"));
  }

  @Test
  void interruptedPollerStops() {
    LocalQueue<String> q = queue(10);
    Thread.currentThread().interrupt();
    assertThrows(InterruptedException.class, () -> q.poll(1, 1, SECONDS_30));
  }

  @Test
  void capacityMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> queue(0));
  }

  private static List<String> poll(LocalQueue<String> q, int max, long timeoutNanos) {
    try {
      return q.poll(max, Long.MAX_VALUE, timeoutNanos);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
