package sand.common;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes that Thrift calls still being read may hold, across every endpoint of the process: many
 * callers each sending a large value at once cannot together exhaust the heap; the call that would go
 * beyond the budget has its connection closed instead.
 */
public final class ReadBudget {
  /** The process's budget: a quarter of the heap (the rest is the bus's and data layer's own, bounded by their quotas). */
  public static final ReadBudget PROCESS = new ReadBudget(Runtime.getRuntime().maxMemory() / 4);

  private final long maxBytes;
  private final AtomicLong used = new AtomicLong();

  public ReadBudget(long maxBytes) {
    if (maxBytes < 1) {
      throw new IllegalArgumentException("a read budget must be positive, not " + maxBytes);
    }
    this.maxBytes = maxBytes;
  }

  /** Take {@code bytes} from the budget; false (and nothing taken) when that would go beyond it. */
  public boolean tryTake(long bytes) {
    while (true) {
      long now = used.get();
      if (now + bytes > maxBytes) {
        return false;
      }
      if (used.compareAndSet(now, now + bytes)) {
        return true;
      }
    }
  }

  public void giveBack(long bytes) {
    used.addAndGet(-bytes);
  }

  public long used() {
    return used.get();
  }

  public long maxBytes() {
    return maxBytes;
  }
}
