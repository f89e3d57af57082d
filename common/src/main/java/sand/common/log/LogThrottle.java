package sand.common.log;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * At most one log line per interval for something that may happen on every request (a refused Thrift call, a
 * degraded Cassandra read, a rotated-out key used): the first time at once, then once an interval, so a flood
 * cannot flood the log. Thread-safe; callers count the occurrences themselves and put the count in the line.
 */
public final class LogThrottle {
  private final long intervalNanos;
  private final AtomicLong last;

  public LogThrottle(Duration interval) {
    this.intervalNanos = interval.toNanos();
    this.last = new AtomicLong(System.nanoTime() - intervalNanos);
  }

  /** True for the one caller that may log now. */
  public boolean allow() {
    long now = System.nanoTime();
    long prev = last.get();
    return now - prev >= intervalNanos && last.compareAndSet(prev, now);
  }
}
