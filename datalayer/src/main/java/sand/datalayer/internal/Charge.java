package sand.datalayer.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bytes of one value counted against an application while anything refers to it: memory (a kv slot or
 * map entry) and the write carrying it to the global layer share one charge, so a value is counted
 * once, and still counted after memory drops it while its write waits.
 */
final class Charge {
  private final AppMemory memory;
  private final long bytes;
  private final AtomicInteger refs = new AtomicInteger(1);

  /** Take over {@code bytes} already reserved for {@code memory}; the creator holds the first reference. */
  Charge(AppMemory memory, long bytes) {
    this.memory = memory;
    this.bytes = bytes;
  }

  long bytes() {
    return bytes;
  }

  void retain() {
    refs.incrementAndGet();
  }

  void release() {
    int left = refs.decrementAndGet();
    if (left == 0) {
      memory.release(bytes);
    } else if (left < 0) {
      throw new IllegalStateException("a value's charge was released twice (" + bytes + " bytes)");
    }
  }
}
