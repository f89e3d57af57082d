package sand.localbus.internal;

import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread that ends long polls at their deadlines ({@link Timed#expire}), so that a parked poll
 * needs no thread of its own. Deadlines are kept sorted; a poll answered before its deadline is
 * {@link #remove}d. The thread sleeps until the earliest deadline it knows of and is woken only when a
 * new one comes earlier, which with one steady timeout is about once per timeout, not once per poll.
 */
public final class PollDeadlines implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PollDeadlines.class);
  private static final AtomicLong SEQUENCE = new AtomicLong();

  /** Something with a deadline; ordered by deadline, ties broken by {@link #sequence()}. */
  public interface Timed {
    /** The deadline, in {@link System#nanoTime()} terms. */
    long deadline();

    /** A number unique to this one, from {@link PollDeadlines#nextSequence()}. */
    long sequence();

    /** Called once on the deadline thread at or after the deadline, unless removed first; must not throw. */
    void expire();
  }

  /** A fresh tie-breaker for a {@link Timed}. */
  public static long nextSequence() {
    return SEQUENCE.incrementAndGet();
  }

  private static final Comparator<Timed> ORDER = (a, b) -> {
    int c = Long.compare(a.deadline() - b.deadline(), 0); // nanoTime values compare by difference
    return c != 0 ? c : Long.compare(a.sequence(), b.sequence());
  };
  private static final long IDLE = Long.MIN_VALUE;

  private final ConcurrentSkipListMap<Timed, Boolean> pending = new ConcurrentSkipListMap<>(ORDER);
  private final Thread thread;
  /** The deadline the thread sleeps until, or IDLE when it sleeps until woken. */
  private volatile long wakeAt = IDLE;

  private volatile boolean closed;

  public PollDeadlines(String name) {
    thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  public void add(Timed t) {
    pending.put(t, Boolean.TRUE);
    long w = wakeAt;
    if (w == IDLE || t.deadline() - w < 0) {
      LockSupport.unpark(thread);
    }
  }

  public void remove(Timed t) {
    pending.remove(t);
  }

  /** Deadlines not reached yet (for tests and metrics). */
  public int size() {
    return pending.size();
  }

  @Override
  public void close() {
    closed = true;
    LockSupport.unpark(thread);
  }

  private void run() {
    while (!closed) {
      Map.Entry<Timed, Boolean> first = pending.firstEntry();
      long now = System.nanoTime();
      if (first != null && first.getKey().deadline() - now <= 0) {
        if (pending.remove(first.getKey()) != null) {
          expire(first.getKey());
        }
        continue;
      }
      long next = first == null ? IDLE : first.getKey().deadline();
      wakeAt = next;
      // An add() that read the old wakeAt and did not wake us is seen here (both sides are
      // volatile).
      Map.Entry<Timed, Boolean> again = pending.firstEntry();
      if (again != null && (next == IDLE || again.getKey().deadline() - next < 0)) {
        continue;
      }
      if (next == IDLE) {
        LockSupport.park(this);
      } else {
        LockSupport.parkNanos(this, next - now);
      }
    }
  }

  private static void expire(Timed t) {
    try {
      t.expire();
    } catch (RuntimeException e) {
      LOG.error("expiring a long poll failed; the poll stays unanswered", e);
    }
  }
}
