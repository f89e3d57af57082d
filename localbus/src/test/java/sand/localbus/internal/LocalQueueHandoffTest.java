package sand.localbus.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The remote-poller side of a local queue: parked {@link Waiter}s answered by the publishing thread. */
class LocalQueueHandoffTest {
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  private static LocalQueue<String> queue(int capacity) {
    return new LocalQueue<>("app/g", capacity, String::length);
  }

  /** A waiter that records what it was answered with, and on which thread; can refuse (a dead connection). */
  static final class Recorder extends Waiter<String> {
    final List<List<String>> answers = new CopyOnWriteArrayList<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final CountDownLatch answered = new CountDownLatch(1);
    private final boolean writable;

    Recorder(int max, boolean writable) {
      super(max, Long.MAX_VALUE);
      this.writable = writable;
    }

    @Override
    protected boolean deliver(List<String> messages) {
      answers.add(messages);
      threads.add(Thread.currentThread());
      answered.countDown();
      return writable;
    }
  }

  @Test
  void thePublisherAnswersAParkedPollItselfInFifoOrder() throws Exception {
    LocalQueue<String> q = queue(100);
    Recorder first = new Recorder(10, true);
    Recorder second = new Recorder(10, true);
    assertNull(q.pollOrPark(first, true), "parked on an empty queue");
    assertNull(q.pollOrPark(second, true));
    assertEquals(2, q.stats().waitingPollers());
    Thread publisher = Thread.currentThread();
    assertEquals(LocalQueue.Offer.ENQUEUED, q.offer("m0"));
    assertEquals(
        List.of(List.of("m0")), first.answers, "the first parked poll gets the first message");
    assertSame(
        publisher,
        first.threads.get(0),
        "delivered on the publisher's thread, no wake-up in between");
    assertEquals(LocalQueue.Offer.ENQUEUED, q.offer("m1"));
    assertEquals(List.of(List.of("m1")), second.answers);
    assertEquals(0, q.size());
    assertEquals(0, q.stats().waitingPollers());
    assertEquals(2, q.stats().polled());
  }

  @Test
  void aPollFindingMessagesTakesThemWithoutParking() {
    LocalQueue<String> q = queue(100);
    q.offer("a");
    q.offer("b");
    q.offer("c");
    Recorder r = new Recorder(2, true);
    assertEquals(List.of("a", "b"), q.pollOrPark(r, true));
    assertEquals(List.of("c"), q.pollOrPark(new Recorder(2, true), false));
    assertEquals(
        List.of(),
        q.pollOrPark(new Recorder(2, true), false),
        "empty, no wait: answered empty at once");
    assertTrue(r.answers.isEmpty());
  }

  @Test
  void aReplyThatCannotBeWrittenPutsItsMessagesBackForTheNextPoller() throws Exception {
    LocalQueue<String> q = queue(100);
    Recorder dead = new Recorder(10, false);
    Recorder alive = new Recorder(10, true);
    q.pollOrPark(dead, true);
    q.pollOrPark(alive, true);
    q.lock(); // a batch of three, as publishBatch appends it
    q.appendLocked("b0");
    q.appendLocked("b1");
    q.appendLocked("b2");
    LocalQueue.Handoff<String> h = q.dispatchLocked();
    q.unlock();
    LocalQueue.Handoff.deliver(h);
    assertEquals(List.of(List.of("b0", "b1", "b2")), dead.answers, "tried the first poller");
    assertEquals(
        List.of(List.of("b0", "b1", "b2")),
        alive.answers,
        "then handed the same messages, in order, on");
    assertEquals(0, q.size());
    assertEquals(3, q.stats().polled(), "counted once");
  }

  @Test
  void withNoOtherPollerFailedMessagesGoBackAtTheHeadInOrder() throws Exception {
    LocalQueue<String> q = queue(3);
    Recorder dead = new Recorder(2, false);
    q.pollOrPark(dead, true);
    q.offer("m0"); // taken by the dead poller, back at the head
    q.offer("m1");
    q.offer("m2");
    assertEquals(List.of(List.of("m0")), dead.answers);
    assertEquals(List.of("m0", "m1", "m2"), q.poll(10, Long.MAX_VALUE, 0));
  }

  @Test
  void deletingTheQueueAnswersParkedPollsEmpty() {
    LocalQueue<String> q = queue(100);
    Recorder r = new Recorder(1, true);
    q.pollOrPark(r, true);
    assertEquals(0, q.delete());
    assertEquals(List.of(List.of()), r.answers);
    assertEquals(LocalQueue.Offer.DELETED, q.offer("late"));
    assertEquals(
        List.of(), q.pollOrPark(new Recorder(1, true), true), "a deleted queue parks nobody");
  }

  @Test
  void aWithdrawnPollIsNeverAnsweredByAPublisher() {
    LocalQueue<String> q = queue(100);
    Recorder r = new Recorder(1, true);
    q.pollOrPark(r, true);
    assertTrue(r.withdraw());
    assertFalse(r.withdraw(), "claimed once only");
    assertEquals(0, q.stats().waitingPollers());
    q.offer("m");
    assertTrue(r.answers.isEmpty());
    assertEquals(1, q.size(), "the message waits for the next poll");
  }

  @Test
  void timeoutRacingAPublishAnswersExactlyOnceAndLosesNothing() throws Exception {
    LocalQueue<String> q = queue(100_000);
    int iterations = 20_000;
    CyclicBarrier start = new CyclicBarrier(2);
    AtomicInteger delivered = new AtomicInteger();
    AtomicInteger timedOut = new AtomicInteger();
    for (int i = 0; i < iterations; i++) {
      Recorder r = new Recorder(1, true);
      assertNull(q.pollOrPark(r, true));
      String m = "m" + i;
      Future<?> publish = pool.submit(() -> {
        start.await();
        q.offer(m);
        return null;
      });
      start.await();
      if (r.withdraw()) { // the deadline thread's move
        r.deliver(List.of());
      }
      publish.get(10, TimeUnit.SECONDS);
      assertTrue(r.answered.await(10, TimeUnit.SECONDS));
      assertEquals(1, r.answers.size(), "answered exactly once");
      List<String> got = r.answers.get(0);
      if (got.isEmpty()) {
        timedOut.incrementAndGet();
        assertEquals(
            List.of(m), q.poll(1, Long.MAX_VALUE, 0), "a timed-out poll leaves the message queued");
      } else {
        delivered.incrementAndGet();
        assertEquals(List.of(m), got);
      }
      assertEquals(0, q.size());
      assertEquals(0, q.stats().waitingPollers());
    }
    assertEquals(iterations, delivered.get() + timedOut.get());
  }

  @Test
  void concurrentPublishersAndParkingPollersKeepEachProducersOrder() throws Exception {
    LocalQueue<String> q = queue(1_000_000);
    int producers = 3;
    int perProducer = 5000;
    List<Future<?>> running = new ArrayList<>();
    for (int p = 0; p < producers; p++) {
      int id = p;
      running.add(pool.submit(() -> {
        for (int i = 0; i < perProducer; i++) {
          q.offer(id + ":" + i);
        }
      }));
    }
    int[] next = new int[producers];
    int received = 0;
    while (received < producers * perProducer) {
      Recorder r = new Recorder(7, true);
      List<String> got = q.pollOrPark(r, true);
      if (got == null) {
        assertTrue(
            r.answered.await(10, TimeUnit.SECONDS),
            "a parked poll is answered by the next publish");
        got = r.answers.get(0);
      }
      for (String m : got) {
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
  }
}
