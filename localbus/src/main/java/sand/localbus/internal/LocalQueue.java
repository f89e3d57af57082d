package sand.localbus.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToIntFunction;
import sand.localbus.QueueStats;

/**
 * One local queue: a bounded FIFO under one lock. A long poll waits on a condition for the time it has
 * left (no sleeping, no spinning); each message appended signals one waiting poller, and a poller that
 * leaves messages behind signals the next, so every waiter that can get a message is woken at once
 * without waking all of them for one message.
 *
 * <p>A deleted queue accepts nothing more ({@link Offer#DELETED}: the caller gets the queue that
 * replaced it) and its waiting pollers return empty.
 *
 * @param <E> what is queued: the payload for a grain queue, payload and publisher for LQ_HA
 */
public final class LocalQueue<E> {

  /** Outcome of {@link #offer}. */
  public enum Offer { ENQUEUED, FULL, DELETED }

  private final String name;
  private final int capacity;
  private final ToIntFunction<? super E> bytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final ArrayDeque<E> items = new ArrayDeque<>();
  private boolean deleted;
  private long published;
  private long polled;

  /**
   * @param capacity the most messages the queue holds
   * @param bytes the size of a message, for {@link #poll}'s byte budget
   */
  public LocalQueue(String name, int capacity, ToIntFunction<? super E> bytes) {
    if (capacity < 1) {
      throw new IllegalArgumentException("queue " + name + ": capacity must be at least 1, not " + capacity);
    }
    this.name = name;
    this.capacity = capacity;
    this.bytes = bytes;
  }

  public String name() {
    return name;
  }

  public int capacity() {
    return capacity;
  }

  /** Append {@code e} at the tail unless the queue is full or deleted. */
  public Offer offer(E e) {
    lock.lock();
    try {
      if (deleted) {
        return Offer.DELETED;
      }
      if (items.size() >= capacity) {
        return Offer.FULL;
      }
      appendLocked(e);
      return Offer.ENQUEUED;
    } finally {
      lock.unlock();
    }
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
      List<E> out = new ArrayList<>(Math.min(max, items.size()));
      long taken = 0;
      while (out.size() < max && !items.isEmpty()) {
        long size = bytes.applyAsInt(items.peekFirst());
        if (!out.isEmpty() && taken + size > maxBytes) {
          break;
        }
        out.add(items.pollFirst());
        taken += size;
      }
      polled += out.size();
      if (!items.isEmpty()) {
        notEmpty.signal(); // what this poller left is for the next one
      }
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
   * Mark the queue deleted, drop its messages and wake its pollers (they return empty).
   *
   * @return how many messages were dropped
   */
  public int delete() {
    lock.lock();
    try {
      deleted = true;
      return clearLocked();
    } finally {
      lock.unlock();
    }
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
      return new QueueStats(name, items.size(), capacity, published, polled, lock.getWaitQueueLength(notEmpty));
    } finally {
      lock.unlock();
    }
  }

  // Used by an atomic batch, which holds the locks of all its queues at once (taken in name order).

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

  /** Append without checks; the caller holds the lock and has checked {@link #roomLocked()}. */
  public void appendLocked(E e) {
    items.addLast(e);
    published++;
    notEmpty.signal();
  }

  private int clearLocked() {
    int dropped = items.size();
    items.clear();
    notEmpty.signalAll();
    return dropped;
  }
}
