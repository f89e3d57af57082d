package sand.localbus;

/**
 * A snapshot of one local queue, for metrics: gauges (length, pollers) and counters (published,
 * polled; they restart from zero when a deleted queue is created again).
 *
 * @param queue the queue name
 * @param length messages in the queue
 * @param capacity the most messages it holds
 * @param published messages appended since the queue was created
 * @param polled messages taken since the queue was created
 * @param waitingPollers pollers blocked in a long poll on it (idle grain workers)
 */
public record QueueStats(
    String queue, int length, int capacity, long published, long polled, int waitingPollers) {

  /** The application owning this grain queue ({@code <application>/<grain>}), or null for LQ_HA. */
  public String application() {
    int slash = queue.indexOf('/');
    return slash > 0 ? queue.substring(0, slash) : null;
  }
}
