package sand.hostagent.bridge;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import sand.localbus.HostAgentMessage;

/**
 * The reports taken from LQ_HA, one queue per application, served round-robin: a report of the next application
 * with reports waiting, one report per turn. An application's queue is served by one thread at a time, so its
 * reports are handled in the order its instances published them (a {@code sent} report before the {@code
 * finished} one of the same event; a local delivery's backup before the report of the instance that ran it),
 * while another application's reports go on on another thread. Each queue is bounded in reports and bytes:
 * beyond, {@link #offer} refuses, and only that application waits for recovery.
 */
final class ReportLanes {

  /**
   * A report waiting, with the budget permits it holds ({@link HostAgentQueueProcessor}).
   *
   * @param app the application whose queue it joins: the bus's stamp, or for the host agent's own reports the
   *            application they name (so they keep their order with that application's reports)
   */
  record Item(String app, HostAgentMessage message, long taken, int permits) {}

  /** The next report to handle and the queue it came from (give it back with {@link #done}). */
  record Turn(Lane lane, Item item) {}

  static final class Lane {
    final String app;
    final ArrayDeque<Item> items = new ArrayDeque<>();
    long bytes;
    boolean busy; // a thread is handling one of its reports
    boolean ready; // in the round-robin queue

    Lane(String app) {
      this.app = app;
    }
  }

  private final int maxMessages;
  private final long maxBytes;
  private final Map<String, Lane> lanes = new HashMap<>();
  private final ArrayDeque<Lane> ready = new ArrayDeque<>();

  ReportLanes(int maxMessages, long maxBytes) {
    this.maxMessages = maxMessages;
    this.maxBytes = maxBytes;
  }

  /** Queue a report behind its application's others; false when that application's queue is full. */
  synchronized boolean offer(Item item) {
    String app = item.app();
    Lane l = lanes.computeIfAbsent(app, Lane::new);
    long size = item.message().payload().length;
    if (!l.items.isEmpty() && (l.items.size() >= maxMessages || l.bytes + size > maxBytes)) {
      return false;
    }
    l.items.add(item);
    l.bytes += size;
    if (!l.busy && !l.ready) {
      l.ready = true;
      ready.add(l);
      notifyAll();
    }
    return true;
  }

  /** The next application's next report, waiting up to {@code timeoutMs} (0: not at all); null if none. */
  synchronized Turn take(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (ready.isEmpty()) {
      long left = (deadline - System.nanoTime()) / 1_000_000L;
      if (left <= 0) {
        return null;
      }
      wait(left);
    }
    Lane l = ready.poll();
    l.ready = false;
    l.busy = true;
    Item it = l.items.poll();
    l.bytes -= it.message().payload().length;
    return new Turn(l, it);
  }

  /** The report of {@code turn} is handled: its application's next one may go (behind the others waiting). */
  synchronized void done(Turn turn) {
    Lane l = turn.lane();
    l.busy = false;
    if (!l.items.isEmpty()) {
      l.ready = true;
      ready.add(l);
      notifyAll();
    } else {
      lanes.remove(l.app, l); // an application without reports waiting costs nothing
    }
  }

  /** Drop every waiting report (closing); returns the budget permits they held. */
  synchronized long clear() {
    long permits = 0;
    for (Lane l : lanes.values()) {
      for (Item it : l.items) {
        permits += it.permits();
      }
      l.items.clear();
      l.bytes = 0;
    }
    ready.clear();
    return permits;
  }

  /** Reports waiting, all applications. */
  synchronized int size() {
    int n = 0;
    for (Lane l : lanes.values()) {
      n += l.items.size();
    }
    return n;
  }
}
