package sand.localbus.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * A poll parked on an empty {@link LocalQueue} without a thread blocked on it: the publisher that
 * brings messages hands them over by calling {@link #deliver} itself (for a Thrift poll: it writes the
 * reply onto the poller's connection), which saves waking a thread in between.
 *
 * <p>Exactly one party answers a waiter: whoever wins {@link #claim()} (a publisher, the poll's
 * timeout, the queue's deletion, the connection going away) and then calls {@link #deliver} once, or
 * nothing at all when the connection is gone.
 *
 * @param <E> what the queue holds
 */
public abstract class Waiter<E> {
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(Waiter.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private static final int WAITING = 0;
  private static final int CLAIMED = 1;

  final int max;
  final long maxBytes;
  private volatile int state;
  /** The queue it waits on; set under that queue's lock when registered. */
  volatile LocalQueue<E> queue;

  /**
   * @param max most messages to take (at least 1)
   * @param maxBytes stop taking once the payloads reach this (the first is always taken)
   */
  protected Waiter(int max, long maxBytes) {
    this.max = max;
    this.maxBytes = maxBytes;
  }

  /** Win the right to answer this poll; true for exactly one caller. */
  public final boolean claim() {
    return STATE.compareAndSet(this, WAITING, CLAIMED);
  }

  public final boolean claimed() {
    return state != WAITING;
  }

  /**
   * Claim it and take it off its queue (timeout, connection closed). The caller then answers it with
   * {@link #deliver} (an empty reply) or not at all (nobody left to answer).
   */
  public final boolean withdraw() {
    if (!claim()) {
      return false;
    }
    LocalQueue<E> q = queue;
    if (q != null) {
      q.forget(this);
    }
    return true;
  }

  /** The name of the queue it waits on, for logs. */
  public final String queueName() {
    LocalQueue<E> q = queue;
    return q == null ? "(none)" : q.name();
  }

  /**
   * Answer the poll with {@code messages} (none on timeout or deletion). Called once by whoever
   * claimed it, never under a queue lock; must not throw.
   *
   * @return false when the reply could not be written: the messages did not reach the poller (the
   *     queue puts them back)
   */
  protected abstract boolean deliver(List<E> messages);
}
