package sand.localbus;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.thrift.ProcessFunction;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TBase;
import org.apache.thrift.TException;
import org.apache.thrift.TProcessor;
import org.apache.thrift.TSerializable;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.protocol.TProtocolException;
import org.apache.thrift.protocol.TProtocolUtil;
import org.apache.thrift.protocol.TType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.localbus.internal.LocalQueue;
import sand.localbus.internal.PollDeadlines;
import sand.localbus.thrift.LocalBus;

/**
 * The bus's Thrift processor: the generated one, except that a poll finding its queue empty does not
 * block its connection's thread. It parks a {@link RemotePoll} on the queue and the thread goes back
 * to reading its connection; the publisher that brings a message writes the poll's reply itself, so a
 * message crosses the bus with two wake-ups (the bus thread reading the publish, the poller reading
 * its reply) instead of three. A deadline thread answers the polls nobody published to, empty.
 *
 * <p>Needs a blocking server with a thread per connection ({@link sand.common.ThriftServer}): it
 * replies to a parked poll outside {@link #process}, onto the connection's output protocol.
 *
 * <p>Writing to another client's socket must not stall the writer (the host agent publishing in
 * process, say) because that client stopped reading: a watchdog closes a connection whose reply has
 * been blocked for {@link #STALLED_WRITE_MS} ms; the writer then fails and the messages go back to the
 * queue.
 */
final class LongPollProcessor implements TProcessor, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LongPollProcessor.class);
  static final long STALLED_WRITE_MS = 5_000;

  private final LocalMessageBus bus;

  @SuppressWarnings("rawtypes")
  private final Map<String, ProcessFunction<LocalBusService, ? extends TBase>> functions;

  private final LocalBusService service;
  private final PollDeadlines deadlines = new PollDeadlines("localbus-poll-deadlines");
  private final Set<ClientConnection> connections = ConcurrentHashMap.newKeySet();
  private final ThreadLocal<ClientConnection> current = new ThreadLocal<>();
  private final Thread watchdog;
  private final long stalledWriteNanos;
  private volatile boolean closed;

  LongPollProcessor(LocalMessageBus bus) {
    this(bus, STALLED_WRITE_MS);
  }

  /** @param stalledWriteMs how long a reply to a parked poll may stay blocked before its connection is closed */
  LongPollProcessor(LocalMessageBus bus, long stalledWriteMs) {
    this.stalledWriteNanos = TimeUnit.MILLISECONDS.toNanos(stalledWriteMs);
    this.bus = bus;
    this.service = new LocalBusService(bus);
    this.functions = Map.copyOf(new LocalBus.Processor<>(service).getProcessMapView());
    this.watchdog = new Thread(this::watch, "localbus-write-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }

  @Override
  public void process(TProtocol in, TProtocol out) throws TException {
    ClientConnection c = connection(in, out);
    try {
      TMessage msg = in.readMessageBegin();
      c.settle();
      switch (msg.name) {
        case "poll" -> poll(c, msg.seqid);
        case "pollHostAgent" -> pollHostAgent(c, msg.seqid);
        default -> delegate(c, msg);
      }
    } catch (TException | RuntimeException | Error e) {
      // The server closes the connection after this: nobody may answer its parked poll any more.
      ended(c);
      throw e;
    }
  }

  /** Polls parked now (for tests). */
  int parkedPolls() {
    return deadlines.size();
  }

  /** Stop the deadline and watchdog threads; parked polls are answered empty. */
  @Override
  public void close() {
    closed = true;
    watchdog.interrupt();
    deadlines.close();
    for (ClientConnection c : connections) {
      RemotePoll<?> p = c.parked();
      if (p != null) {
        p.expire();
      }
    }
  }

  private void poll(ClientConnection c, int seqid) throws TException {
    LocalBus.poll_args args = new LocalBus.poll_args();
    if (!readArgs(c, "poll", seqid, args)) {
      return;
    }
    try {
      LocalQueue<?> q = bus.queueToPoll(args.credential, args.queue);
      if (bus.isHostAgentQueue(q)) {
        @SuppressWarnings("unchecked")
        LocalQueue<HostAgentMessage> ha = (LocalQueue<HostAgentMessage>) q;
        serve(
            c,
            "poll",
            seqid,
            ha,
            args.maxMessages,
            args.timeoutMs,
            LongPollProcessor::hostAgentPayloads);
      } else {
        @SuppressWarnings("unchecked")
        LocalQueue<byte[]> grain = (LocalQueue<byte[]>) q;
        serve(
            c, "poll", seqid, grain, args.maxMessages, args.timeoutMs, LongPollProcessor::payloads);
      }
    } catch (BusException e) {
      c.reply("poll", seqid, new LocalBus.poll_result().setErr(LocalBusService.toBusError(e)));
    } catch (RuntimeException e) {
      internalError(c, "poll", seqid, e);
    }
  }

  private void pollHostAgent(ClientConnection c, int seqid) throws TException {
    LocalBus.pollHostAgent_args args = new LocalBus.pollHostAgent_args();
    if (!readArgs(c, "pollHostAgent", seqid, args)) {
      return;
    }
    try {
      serve(
          c,
          "pollHostAgent",
          seqid,
          bus.hostAgentQueueToPoll(args.credential),
          args.maxMessages,
          args.timeoutMs,
          LongPollProcessor::hostAgentMessages);
    } catch (BusException e) {
      c.reply(
          "pollHostAgent",
          seqid,
          new LocalBus.pollHostAgent_result().setErr(LocalBusService.toBusError(e)));
    } catch (RuntimeException e) {
      internalError(c, "pollHostAgent", seqid, e);
    }
  }

  /** A bug, answered as the generated processor does: logged, and an internal error for the client. */
  private static void internalError(
      ClientConnection c, String method, int seqid, RuntimeException e) throws TException {
    LOG.error("[localbus] internal error processing {}", method, e);
    c.fail(
        method,
        seqid,
        new TApplicationException(
            TApplicationException.INTERNAL_ERROR, "Internal error processing " + method));
  }

  /** Reply now with what the queue holds, or park the poll until a publisher, the deadline or a deletion. */
  private <E> void serve(
      ClientConnection c,
      String method,
      int seqid,
      LocalQueue<E> q,
      int maxMessages,
      int timeoutMs,
      Function<List<E>, TSerializable> result)
      throws TException {
    long timeout =
        closed ? 0 : TimeUnit.MILLISECONDS.toNanos(LocalMessageBus.clampTimeoutMs(timeoutMs));
    RemotePoll<E> p = new RemotePoll<>(
        c,
        method,
        seqid,
        result,
        LocalMessageBus.clampMaxMessages(maxMessages),
        deadlines,
        System.nanoTime() + timeout);
    List<E> now = q.pollOrPark(p, timeout > 0);
    if (now != null) {
      try {
        c.reply(method, seqid, result.apply(now));
      } catch (TException | RuntimeException e) {
        // The poller is gone (on a Unix socket the write fails at once): what it took goes back
        // first in line.
        q.giveBack(now);
        throw e;
      }
      return;
    }
    c.park(p);
    deadlines.add(p);
    if (p.claimed()) {
      deadlines.remove(p); // answered before its deadline was even registered
    } else if (closed) {
      p.expire(); // close() may have swept the connections before this poll parked
    }
  }

  private void delegate(ClientConnection c, TMessage msg) throws TException {
    @SuppressWarnings("rawtypes")
    ProcessFunction<LocalBusService, ? extends TBase> fn = functions.get(msg.name);
    if (fn == null) {
      TProtocolUtil.skip(c.in, TType.STRUCT);
      c.in.readMessageEnd();
      c.fail(
          msg.name,
          msg.seqid,
          new TApplicationException(
              TApplicationException.UNKNOWN_METHOD, "Invalid method name: '" + msg.name + "'"));
      return;
    }
    fn.process(msg.seqid, c.in, c.out, service);
  }

  /** Read a call's arguments; a malformed call is answered with a protocol error, as the generated code does. */
  private static boolean readArgs(ClientConnection c, String method, int seqid, TBase<?, ?> args)
      throws TException {
    try {
      args.read(c.in);
    } catch (TProtocolException e) {
      c.in.readMessageEnd();
      c.fail(
          method,
          seqid,
          new TApplicationException(TApplicationException.PROTOCOL_ERROR, e.getMessage()));
      return false;
    }
    c.in.readMessageEnd();
    return true;
  }

  private ClientConnection connection(TProtocol in, TProtocol out) {
    ClientConnection c = current.get();
    if (c != null && c.in == in) {
      return c;
    }
    if (c != null) {
      ended(c); // this pooled thread served another connection, which ended without telling us
    }
    c = new ClientConnection(in, out);
    connections.add(c);
    current.set(c);
    return c;
  }

  private void ended(ClientConnection c) {
    c.close();
    connections.remove(c);
    if (current.get() == c) {
      current.remove();
    }
  }

  /** Every fifth of the limit, close the connections whose parked poll's reply has been blocked too long. */
  private void watch() {
    long period = Math.max(1, TimeUnit.NANOSECONDS.toMillis(stalledWriteNanos) / 5);
    while (!closed) {
      try {
        Thread.sleep(period);
      } catch (InterruptedException e) {
        return;
      }
      long now = System.nanoTime();
      for (ClientConnection c : connections) {
        if (c.stalled(now, stalledWriteNanos)) {
          LOG.warn(
              "[localbus] a client has not read its long poll's reply for {} ms; closing its connection "
                  + "(the messages go back to the queue)",
              TimeUnit.NANOSECONDS.toMillis(stalledWriteNanos));
          c.kill();
        }
      }
    }
  }

  private static TSerializable payloads(List<byte[]> messages) {
    List<ByteBuffer> out = new ArrayList<>(messages.size());
    for (byte[] m : messages) {
      out.add(ByteBuffer.wrap(m));
    }
    return new LocalBus.poll_result().setSuccess(out);
  }

  private static TSerializable hostAgentPayloads(List<HostAgentMessage> messages) {
    List<ByteBuffer> out = new ArrayList<>(messages.size());
    for (HostAgentMessage m : messages) {
      out.add(ByteBuffer.wrap(m.payload()));
    }
    return new LocalBus.poll_result().setSuccess(out);
  }

  private static TSerializable hostAgentMessages(List<HostAgentMessage> messages) {
    return new LocalBus.pollHostAgent_result().setSuccess(HostAgentMessage.toThrift(messages));
  }
}
