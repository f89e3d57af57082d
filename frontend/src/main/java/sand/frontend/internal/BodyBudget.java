package sand.frontend.internal;

/**
 * Admission of request bodies: the bytes of bodies this frontend holds in memory at once, over all requests. A
 * body is read whole (its declared length taken from the budget first) or not at all: a request that finds the
 * budget spent answers 503 at once instead of growing the heap until the JVM runs out (finding 6 of issue 26: 40
 * callers posting 9 MB each took a 384 MB frontend down). The bytes go back when the request is answered.
 */
public final class BodyBudget {
  private final long capacity;
  private long used;
  private long refused;

  public BodyBudget(long capacity) {
    this.capacity = capacity;
  }

  /** Take {@code bytes} from the budget, or false (nothing taken) when that would exceed it. */
  public synchronized boolean tryTake(long bytes) {
    if (bytes > capacity - used) {
      refused++;
      return false;
    }
    used += bytes;
    return true;
  }

  public synchronized void give(long bytes) {
    used = Math.max(0, used - bytes);
  }

  long capacity() {
    return capacity;
  }

  /** Bytes of bodies held now (metrics). */
  public synchronized long used() {
    return used;
  }

  /** Bodies refused so far for want of budget (metrics). */
  public synchronized long refused() {
    return refused;
  }
}
