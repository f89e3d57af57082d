package sand.localbus.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToIntFunction;
import sand.localbus.QueueStats;

/**
 * One local queue: a bounded FIFO under one lock, with two kinds of waiting pollers.
 *
 * <p>An in-process poller (the host agent) blocks on a condition for the time it has left; each
 * message appended signals one, and a poller that leaves messages behind signals the next.
 *
 * <p>A remote poller (a Thrift long poll) parks a {@link Waiter} instead of a thread. The thread that
 * appends messages hands them to the first waiter it can claim and, after unlocking, answers it
 * itself ({@link Handoff#deliver}): the poller's reply leaves with no other thread woken. Waiters exist
 * only while the queue is empty (an append serves them at once), so FIFO order is the order of taking.
 * A reply that cannot be written puts its messages back at the head, in order, for the next poller.
 *
 * <p>A deleted queue accepts nothing more ({@link Offer#DELETED}: the caller gets the queue that
 * replaced it) and its waiting pollers return empty.
 *
 * @param <E> what is queued: the payload for a grain queue, payload and publisher for LQ_HA
 */
public final class LocalQueue<E> {

  /** Outcome of {@link #offer}. */
  public enum Offer {
    ENQUEUED,
    FULL,
    DELETED
  }

  private final String name;
  private final int capacity;
  private final ToIntFunction<? super E> bytes;
  private final Ledger<? super E> ledger;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final Backlog<E> items;
  private final ArrayDeque<Waiter<E>> waiters = new ArrayDeque<>();
  private boolean deleted;
  private long published;
  private long polled;

  /** A FIFO queue that keeps no accounts. */
  public LocalQueue(String name, int capacity, ToIntFunction<? super E> bytes) {
    this(name, capacity, bytes, Backlog.fifo(), Ledger.none());
  }

  /**
   * @param capacity the most messages the queue holds
   * @param bytes the size of a message, for {@link #poll}'s byte budget
   * @param backlog holds the messages in taking order (FIFO, or fair across publishers for LQ_HA)
   * @param ledger told of every message that leaves or comes back (per-application quotas)
   */
  public LocalQueue(
      String name,
      int capacity,
      ToIntFunction<? super E> bytes,
      Backlog<E> backlog,
      Ledger<? super E> ledger) {
    if (capacity < 1) {
      throw new IllegalArgumentException(
          "queue " + name + ": capacity must be at least 1, not " + capacity);
    }
    this.name = name;
    this.capacity = capacity;
    this.bytes = bytes;
    this.items = backlog;
    this.ledger = ledger;
  }

  public String name() {
    return name;
  }

  public int capacity() {
    return capacity;
  }

  /** Append {@code e} at the tail unless the queue is full or deleted; a waiting remote poller gets it now. */
  public Offer offer(E e) {
    Handoff<E> handoffs;
    lock.lock();
    try {
      if (deleted) {
        return Offer.DELETED;
      }
      if (items.size() >= capacity) {
        return Offer.FULL;
      }
      appendLocked(e);
      handoffs = dispatchLocked();
    } finally {
      lock.unlock();
    }
    Handoff.deliver(handoffs);
    return Offer.ENQUEUED;
  }

  /**
   * Take up to {@code max} messages from the head, waiting up to {@code timeoutNanos} for the first.
   * Stops early once the messages taken reach {@code maxBytes} (the first is always taken). Returns
   * empty on timeout or when the queue is deleted.
   */
  public List<E> poll(int max, long maxBytes, long timeoutNanos) throws InterruptedException {
    lock.lockInterruptibly();
    try {
      long remaining = timeoutNanos;
      while (items.isEmpty()) {
        if (deleted || remaining <= 0) {
          return List.of();
        }
        remaining = notEmpty.awaitNanos(remaining);
      }
      return takeLocked(max, maxBytes);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Take what {@code waiter} may take now; or, when the queue is empty and {@code wait} is set, park
   * the waiter until a publisher, its timeout or the queue's deletion answers it.
   *
   * @return the messages taken (empty when the queue is deleted or nothing came and {@code wait} is
   *     false), or null when the waiter is parked
   */
  public List<E> pollOrPark(Waiter<E> waiter, boolean wait) {
    lock.lock();
    try {
      if (!items.isEmpty()) {
        return takeLocked(waiter.max, waiter.maxBytes);
      }
      if (deleted || !wait) {
        return List.of();
      }
      waiter.queue = this;
      waiters.addLast(waiter);
      return null;
    } finally {
      lock.unlock();
    }
  }

  /** A copy of what the queue holds now, head first. */
  public List<E> snapshot() {
    lock.lock();
    try {
      List<E> out = new ArrayList<>(items.size());
      items.forEach(out::add);
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** Messages in the queue now. */
  public int size() {
    lock.lock();
    try {
      return items.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Mark the queue deleted, drop its messages and answer its pollers with nothing.
   *
   * @return how many messages were dropped
   */
  public int delete() {
    List<Waiter<E>> claimed = new ArrayList<>();
    int dropped;
    lock.lock();
    try {
      deleted = true;
      dropped = clearLocked();
      for (Waiter<E> w : waiters) {
        if (w.claim()) {
          claimed.add(w);
        }
      }
      waiters.clear();
    } finally {
      lock.unlock();
    }
    for (Waiter<E> w : claimed) {
      w.deliver(List.of());
    }
    return dropped;
  }

  /** Drop the messages but keep the queue (LQ_HA, which is never replaced); pollers keep waiting. */
  public int clear() {
    lock.lock();
    try {
      return clearLocked();
    } finally {
      lock.unlock();
    }
  }

  /** Counters and the current length, for metrics. */
  public QueueStats stats() {
    lock.lock();
    try {
      return new QueueStats(
          name,
          items.size(),
          capacity,
          published,
          polled,
          lock.getWaitQueueLength(notEmpty) + waiters.size());
    } finally {
      lock.unlock();
    }
  }

  // Used by an atomic batch, which holds the locks of all its queues at once (taken in name order),
  // appends, dispatches each queue, unlocks, then delivers the handoffs.

  public void lock() {
    lock.lock();
  }

  public void unlock() {
    lock.unlock();
  }

  /** Free slots, or -1 when deleted; the caller holds the lock. */
  public int roomLocked() {
    return deleted ? -1 : capacity - items.size();
  }

  /** Append without checks; the caller holds the lock, has checked {@link #roomLocked()} and dispatches next. */
  public void appendLocked(E e) {
    items.addLast(e);
    published++;
    notEmpty.signal();
  }

  /**
   * Give what the queue holds to the remote pollers waiting on it, in their arrival order; the caller
   * holds the lock and, once unlocked, calls {@link Handoff#deliver} on the result.
   *
   * @return the handoffs to deliver, chained; null for none
   */
  public Handoff<E> dispatchLocked() {
    Handoff<E> first = null;
    Handoff<E> last = null;
    while (!items.isEmpty() && !waiters.isEmpty()) {
      Waiter<E> w = waiters.pollFirst();
      if (!w.claim()) {
        continue; // timed out or withdrawn meanwhile; whoever claimed it answers it
      }
      Handoff<E> h = new Handoff<>(this, w, takeLocked(w.max, w.maxBytes));
      if (first == null) {
        first = h;
      } else {
        last.next = h;
      }
      last = h;
    }
    return first;
  }

  /** Take a withdrawn waiter off the queue. */
  void forget(Waiter<E> w) {
    lock.lock();
    try {
      waiters.remove(w);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Messages taken by a poll whose reply could not be written (its poller died): back at the head, in
   * order, and on to the next waiter. Call without holding the queue's lock.
   */
  public void giveBack(List<E> messages) {
    if (!messages.isEmpty()) {
      Handoff.deliver(putBack(messages));
    }
  }

  /**
   * Put messages whose reply could not be written back at the head, in order, and hand them to the
   * next waiter. They may overshoot the capacity for a moment (other publishers filled the room they
   * left): a bound is never a reason to lose a message. A deleted queue drops them with the rest.
   */
  Handoff<E> putBack(List<E> messages) {
    lock.lock();
    try {
      if (deleted) {
        return null;
      }
      for (int i = messages.size() - 1; i >= 0; i--) {
        items.addFirst(messages.get(i));
        ledger.retaken(messages.get(i));
      }
      polled -= messages.size();
      notEmpty.signal();
      return dispatchLocked();
    } finally {
      lock.unlock();
    }
  }

  private List<E> takeLocked(int max, long maxBytes) {
    List<E> out = new ArrayList<>(Math.min(max, items.size()));
    long taken = 0;
    while (out.size() < max && !items.isEmpty()) {
      long size = bytes.applyAsInt(items.peekFirst());
      if (!out.isEmpty() && taken + size > maxBytes) {
        break;
      }
      E e = items.pollFirst();
      ledger.released(e);
      out.add(e);
      taken += size;
    }
    polled += out.size();
    if (!items.isEmpty()) {
      notEmpty.signal(); // what this poller left is for the next one
    }
    return out;
  }

  private int clearLocked() {
    int dropped = items.size();
    items.clear(ledger::released);
    notEmpty.signalAll();
    return dropped;
  }

  /**
   * Messages taken for a waiter under the queue lock, to be delivered after unlocking.
   *
   * @param <E> what the queue holds
   */
  public static final class Handoff<E> {
    private final LocalQueue<E> queue;
    private final Waiter<E> waiter;
    private final List<E> messages;
    private Handoff<E> next;

    private Handoff(LocalQueue<E> queue, Waiter<E> waiter, List<E> messages) {
      this.queue = queue;
      this.waiter = waiter;
      this.messages = messages;
    }

    /**
     * Answer every waiter of the chain (null is fine); messages of a reply that failed go back to
     * their queue and on to its next waiter. Call without holding any queue lock.
     */
    public static <E> void deliver(Handoff<E> chain) {
      for (Handoff<E> h = chain; h != null; ) {
        Handoff<E> retry = h.waiter.deliver(h.messages) ? null : h.queue.putBack(h.messages);
        if (retry != null) {
          Handoff<E> tail = retry;
          while (tail.next != null) {
            tail = tail.next;
          }
          tail.next = h.next;
          h = retry;
        } else {
          h = h.next;
        }
      }
    }
  }
}
