package sand.localbus.internal;

/**
 * What a {@link LocalQueue} tells its owner about messages leaving and coming back, so the bus can
 * account each application's bytes exactly: whoever enqueues a message reserves for it first; the queue
 * releases it when it is taken or dropped, and takes it again when a reply that could not be written
 * puts it back. Called under the queue's lock: keep it cheap and never call back into the queue.
 *
 * @param <E> what is queued
 */
public interface Ledger<E> {

  /** {@code e} left the queue: taken by a poller or dropped with the queue. */
  void released(E e);

  /** {@code e} is back in the queue (a reply failed); it may take its owner past a quota for a moment. */
  void retaken(E e);

  /** A ledger that keeps no accounts. */
  static <E> Ledger<E> none() {
    return new Ledger<>() {
      @Override
      public void released(E e) {}

      @Override
      public void retaken(E e) {}
    };
  }
}
