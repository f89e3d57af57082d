package sand.localbus;

import java.util.List;
import java.util.function.Function;
import org.apache.thrift.TSerializable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.localbus.internal.PollDeadlines;
import sand.localbus.internal.Waiter;

/**
 * A Thrift long poll parked on an empty queue: whoever claims it writes its reply (the messages, or
 * nothing on timeout or deletion) onto the poller's connection with the request's sequence id.
 *
 * @param <E> what the queue holds
 */
final class RemotePoll<E> extends Waiter<E> implements PollDeadlines.Timed {
  private static final Logger LOG = LoggerFactory.getLogger(RemotePoll.class);

  private final ClientConnection connection;
  private final String method;
  private final int seqid;
  private final Function<List<E>, TSerializable> result;
  private final PollDeadlines deadlines;
  private final long deadline;
  private final long sequence = PollDeadlines.nextSequence();
  private boolean answered; // guarded by this

  RemotePoll(
      ClientConnection connection,
      String method,
      int seqid,
      Function<List<E>, TSerializable> result,
      int max,
      PollDeadlines deadlines,
      long deadline) {
    super(max, LocalMessageBus.POLL_MAX_BYTES);
    this.connection = connection;
    this.method = method;
    this.seqid = seqid;
    this.result = result;
    this.deadlines = deadlines;
    this.deadline = deadline;
  }

  @Override
  protected boolean deliver(List<E> messages) {
    try {
      boolean written = connection.replyFromElsewhere(method, seqid, result.apply(messages));
      if (LOG.isDebugEnabled()) {
        LOG.debug(
            "[queue {}] long poll answered with {} messages{}",
            queueName(),
            messages.size(),
            written ? "" : ", but its connection is gone: they go back to the queue");
      }
      return written;
    } catch (RuntimeException e) {
      LOG.error("[queue {}] building a long poll's reply failed", queueName(), e);
      return false;
    } finally {
      // Off the critical path: the poller has its reply.
      deadlines.remove(this);
      answered();
    }
  }

  /** The deadline passed: answer empty unless a publisher got there first. */
  @Override
  public void expire() {
    if (withdraw()) {
      deliver(List.of());
    }
  }

  /** The connection is gone: nobody is answered. */
  void abandon() {
    if (withdraw()) {
      deadlines.remove(this);
      answered();
    }
  }

  /** Wait until whoever claimed this poll has finished writing its reply. */
  synchronized void awaitAnswered() throws InterruptedException {
    while (!answered) {
      wait();
    }
  }

  private synchronized void answered() {
    answered = true;
    notifyAll();
  }

  @Override
  public long deadline() {
    return deadline;
  }

  @Override
  public long sequence() {
    return sequence;
  }
}
