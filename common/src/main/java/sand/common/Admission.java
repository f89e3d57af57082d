package sand.common;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.thrift.transport.TTransportException;

/**
 * One connection's standing with its endpoint: pending until a call presents a known credential, then
 * trusted for good; a pending connection past its deadline is expired (and closed by the server). The
 * two transitions race on one state, so a call whose credential is accepted is never cut by the deadline
 * afterwards, and an expired connection cannot be admitted.
 *
 * <p>It also holds what the connection's call being read has taken from the {@link ReadBudget}.
 */
public final class Admission {
  private static final int PENDING = 0;
  private static final int TRUSTED = 1;
  private static final int EXPIRED = 2;

  private final Predicate<String> authenticator;
  private final ReadBudget budget;
  private final long acceptedNanos;
  private final AtomicInteger state = new AtomicInteger(PENDING);
  private final AtomicLong taken = new AtomicLong();
  private volatile boolean closed;

  public Admission(Predicate<String> authenticator, ReadBudget budget, long acceptedNanos) {
    this.authenticator = authenticator;
    this.budget = budget;
    this.acceptedNanos = acceptedNanos;
  }

  /** True when {@code credential} is known; the first such call makes the connection trusted. */
  public boolean admit(String credential) throws TTransportException {
    if (!authenticator.test(credential)) {
      return false;
    }
    if (state.get() == TRUSTED || state.compareAndSet(PENDING, TRUSTED)) {
      return true;
    }
    throw new BoundedBinaryProtocol.Refused("connection expired before its first credential");
  }

  public boolean trusted() {
    return state.get() == TRUSTED;
  }

  /** Expire a connection still pending {@code timeoutNanos} after accept; true when it is now expired. */
  public boolean expireIfOverdue(long nowNanos, long timeoutNanos) {
    return nowNanos - acceptedNanos > timeoutNanos && state.compareAndSet(PENDING, EXPIRED);
  }

  /** Take {@code bytes} from the process's read budget for the call being read, or fail the connection. */
  public void take(long bytes) throws TTransportException {
    if (!budget.tryTake(bytes)) {
      throw new BoundedBinaryProtocol.Refused("the process's budget for calls being read ("
          + budget.maxBytes() + " bytes) is used up: connection closed, retry later");
    }
    taken.addAndGet(bytes);
    if (closed) {
      giveBackAll(); // closed meanwhile: nobody else will
    }
  }

  /** Give back what the call read so far has taken (it was read whole, or its connection ended). */
  public void giveBackAll() {
    long n = taken.getAndSet(0);
    if (n != 0) {
      budget.giveBack(n);
    }
  }

  /** The connection ended: give everything back now and on any later take. */
  public void close() {
    closed = true;
    giveBackAll();
  }
}
