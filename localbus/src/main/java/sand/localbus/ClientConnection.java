package sand.localbus;

import java.io.IOException;
import java.util.List;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TException;
import org.apache.thrift.TSerializable;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection of the Thrift server as {@link LongPollProcessor} sees it: the protocols its
 * server thread reads and writes, and the long poll parked on it, if any.
 *
 * <p>Replies are written by the connection's own thread, except a parked poll's, which is written by
 * whoever answers it (a publisher, the deadline thread, a queue deletion) while the connection's thread
 * is blocked reading the next request. The two never overlap: a client sends nothing before the reply
 * of its poll, and the connection's thread waits for that reply to be out ({@link #settle}) before it
 * writes anything else.
 */
final class ClientConnection {
  private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);

  final TProtocol in;
  final TProtocol out;
  private volatile RemotePoll<?> parked;
  /** When a write by another thread began (System.nanoTime(), never 0); 0 when none runs. */
  private volatile long writingSince;

  private volatile boolean closed;

  ClientConnection(TProtocol in, TProtocol out) {
    this.in = in;
    this.out = out;
  }

  /** The connection's own thread replies. */
  void reply(String method, int seqid, TSerializable result) throws TException {
    write(method, TMessageType.REPLY, seqid, result);
  }

  /** The connection's own thread answers a call with a Thrift application error. */
  void fail(String method, int seqid, TApplicationException error) throws TException {
    write(method, TMessageType.EXCEPTION, seqid, error);
  }

  /**
   * Reply to the parked poll from another thread. A connection that stays unwritable (a client that
   * stopped reading) is closed by the processor's watchdog, so this cannot block its caller for long.
   *
   * @return false when the reply was not written (connection closed or failing; it is closed now)
   */
  boolean replyFromElsewhere(String method, int seqid, TSerializable result) {
    if (closed) {
      return false;
    }
    long now = System.nanoTime();
    writingSince = now == 0 ? 1 : now;
    try {
      write(method, TMessageType.REPLY, seqid, result);
      return true;
    } catch (TException | RuntimeException e) {
      LOG.debug("[localbus] reply to a long poll failed, closing its connection: {}", e.toString());
      kill();
      return false;
    } finally {
      writingSince = 0;
    }
  }

  /** True when a write by another thread has been blocked for more than {@code limitNanos}. */
  boolean stalled(long now, long limitNanos) {
    long since = writingSince;
    return since != 0 && now - since > limitNanos;
  }

  void park(RemotePoll<?> poll) {
    parked = poll;
  }

  RemotePoll<?> parked() {
    return parked;
  }

  /**
   * Called by the connection's thread with each new request, before it writes anything: the parked
   * poll's reply must be out first. Normally it is (the client waited for it); a client that sent
   * more without waiting gets that poll answered empty now, ahead of the new request's reply.
   */
  void settle() throws TException {
    RemotePoll<?> p = parked;
    if (p == null) {
      return;
    }
    parked = null;
    if (p.withdraw()) {
      p.deliver(List.of());
    }
    try {
      p.awaitAnswered();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TTransportException(
          TTransportException.UNKNOWN, "interrupted while a long poll was answered");
    }
  }

  /** The connection ended: nobody answers its parked poll, and no reply is written to it any more. */
  void close() {
    closed = true;
    RemotePoll<?> p = parked;
    parked = null;
    if (p != null) {
      p.abandon();
    }
  }

  /** Close the socket under the connection's thread (blocked in a read) and any writer. */
  void kill() {
    closed = true;
    TTransport t = out.getTransport();
    try {
      if (t instanceof TSocket s && s.getSocket() != null) {
        s.getSocket().close(); // the reading thread gets an exception, not a half-closed stream
      } else {
        t.close();
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("[localbus] closing a failed connection: {}", e.toString());
    }
  }

  private void write(String method, byte type, int seqid, TSerializable result) throws TException {
    out.writeMessageBegin(new TMessage(method, type, seqid));
    result.write(out);
    out.writeMessageEnd();
    out.getTransport().flush();
  }
}
