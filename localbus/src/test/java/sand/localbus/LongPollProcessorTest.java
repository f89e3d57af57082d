package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.localbus.LocalMessageBusTest.A;
import static sand.localbus.LocalMessageBusTest.HA;
import static sand.localbus.LocalMessageBusTest.b;
import static sand.localbus.TestClient.str;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.transport.TEndpointTransport;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TTransportException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.localbus.thrift.BusError;
import sand.localbus.thrift.BusErrorCode;
import sand.localbus.thrift.HostAgentMessage;
import sand.localbus.thrift.LocalBus;

/**
 * The long-poll processor without sockets: requests are serialized into memory, the processor runs
 * on one thread per simulated connection (as the server runs it), replies are read back from memory
 * or go to transports that fail or stall.
 */
class LongPollProcessorTest {
  private final LocalMessageBus bus = LocalMessageBusTest.newBus(LocalBusSettings.defaults());
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private LongPollProcessor processor = new LongPollProcessor(bus);

  @AfterEach
  void stop() {
    processor.close();
    pool.shutdownNow();
  }

  /** One client connection: its requests and the server's replies in memory, served on its own thread. */
  private final class Conn {
    final TMemoryBuffer requests = buffer();
    final Replies replies = replies();
    final TProtocol in = new TBinaryProtocol(requests);
    final TProtocol out;
    final LocalBus.Client client;
    final ExecutorService thread = Executors.newSingleThreadExecutor();

    Conn() {
      this(null);
    }

    /** A connection whose replies go to {@code sink} instead of memory (a failing or stalled socket). */
    Conn(TProtocol sink) {
      out = sink == null ? new TBinaryProtocol(replies) : sink;
      client = new LocalBus.Client(new TBinaryProtocol(replies), new TBinaryProtocol(requests));
    }

    /** The server thread of this connection handles the next request. */
    void serve() throws Exception {
      thread
          .submit(() -> {
            processor.process(in, out);
            return null;
          })
          .get(10, TimeUnit.SECONDS);
    }

    /** The server thread finds the connection closed by its client. */
    void disconnect() {
      Future<?> f = thread.submit(() -> {
        processor.process(in, out);
        return null;
      });
      assertThrows(Exception.class, () -> f.get(10, TimeUnit.SECONDS));
    }

    /** Bytes the server has written to this connection so far. */
    int written() {
      return replies.length();
    }
  }

  /** Replies in memory; a flush marks one whole reply written (the server flushes after each). */
  private static final class Replies extends TMemoryBuffer {
    volatile int flushed;

    Replies() throws TTransportException {
      super(1024);
    }

    @Override
    public void flush() {
      flushed++; // replies never overlap (ClientConnection), so one writer at a time
    }
  }

  private static Replies replies() {
    try {
      return new Replies();
    } catch (TTransportException e) {
      throw new IllegalStateException(e);
    }
  }

  private static TMemoryBuffer buffer() {
    try {
      return new TMemoryBuffer(1024);
    } catch (TTransportException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void awaitReply(Conn c) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    // a whole reply: its first bytes are visible long before the writing thread is done
    while (c.replies.flushed == 0) {
      assertTrue(System.nanoTime() < deadline, "no reply was written");
      Thread.sleep(1);
    }
  }

  private void awaitParked(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (processor.parkedPolls() != n) {
      assertTrue(System.nanoTime() < deadline, "parked polls never reached " + n);
      Thread.sleep(1);
    }
  }

  @Test
  void aParkedPollIsAnsweredByThePublishingThread() throws Exception {
    Conn c = new Conn();
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    assertEquals(0, c.written(), "parked: the server thread went back to reading without replying");
    assertEquals(1, processor.parkedPolls());
    bus.publish(A, "a/g", b("hello")); // in process, as the host agent publishes
    assertTrue(c.written() > 0, "the publisher wrote the reply before publish returned");
    assertEquals(
        List.of("hello"), c.client.recv_poll().stream().map(TestClient::str).toList());
    assertEquals(0, processor.parkedPolls());
    assertEquals(0, bus.length(A, "a/g"));
  }

  @Test
  void aReplyThatCannotBeWrittenLosesNothingAndDoesNotFailThePublisher() throws Exception {
    FakeSocket broken = new FakeSocket(FakeSocket.Mode.FAIL);
    Conn c = new Conn(new TBinaryProtocol(broken));
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    bus.publish(A, "a/g", b("kept"));
    assertTrue(broken.closed, "the failed connection is closed");
    assertEquals(
        List.of("kept"),
        bus.poll(A, "a/g", 10, 0).stream().map(LocalMessageBusTest::s).toList());
  }

  @Test
  void aClientThatStopsReadingIsCutOffAndItsMessagesKept() throws Exception {
    processor.close();
    processor = new LongPollProcessor(bus, 200);
    FakeSocket stalled = new FakeSocket(FakeSocket.Mode.STALL);
    Conn c = new Conn(new TBinaryProtocol(stalled));
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    Future<?> publish = pool.submit(() -> bus.publish(A, "a/g", b("kept")));
    publish.get(10, TimeUnit.SECONDS); // returns once the watchdog closed the stalled connection
    assertTrue(stalled.closed);
    assertEquals(
        List.of("kept"),
        bus.poll(A, "a/g", 10, 0).stream().map(LocalMessageBusTest::s).toList());
  }

  @Test
  void aRequestSentBeforeThePollsReplyGetsThePollAnsweredFirst() throws Exception {
    Conn c = new Conn();
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    c.client.send_length(A, "a/g");
    c.serve();
    // Read raw: the generated client checks each reply against its last call only.
    TProtocol replies = new TBinaryProtocol(c.replies);
    TMessage first = replies.readMessageBegin();
    assertEquals("poll", first.name, "the poll is answered ahead of the next request");
    LocalBus.poll_result poll = new LocalBus.poll_result();
    poll.read(replies);
    replies.readMessageEnd();
    assertEquals(List.of(), poll.success, "empty");
    TMessage second = replies.readMessageBegin();
    assertEquals("length", second.name);
    assertEquals(first.seqid + 1, second.seqid);
    LocalBus.length_result length = new LocalBus.length_result();
    length.read(replies);
    assertEquals(0, length.success);
    bus.publish(A, "a/g", b("m"));
    assertEquals(1, bus.length(A, "a/g"), "nobody waits any more");
  }

  @Test
  void theDeadlineAnswersEmptyAndOnlyOnce() throws Exception {
    Conn c = new Conn();
    c.client.send_poll(A, "a/g", 10, 50);
    c.serve();
    awaitParked(0);
    awaitReply(c); // the deadline thread unparks the poll, then writes its reply
    assertEquals(List.of(), c.client.recv_poll());
    int written = c.written();
    bus.publish(A, "a/g", b("later"));
    assertEquals(written, c.written(), "no second reply");
    assertEquals(1, bus.length(A, "a/g"));
  }

  @Test
  void aClosedConnectionIsNeverWrittenTo() throws Exception {
    Conn c = new Conn();
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    c.disconnect(); // end of stream where the next request would be
    assertEquals(0, processor.parkedPolls());
    assertEquals(
        0,
        bus.queueStats().stream()
            .filter(q -> q.queue().equals("a/g"))
            .findFirst()
            .orElseThrow()
            .waitingPollers());
    bus.publish(A, "a/g", b("kept"));
    assertEquals(0, c.written());
    assertEquals(1, bus.length(A, "a/g"));
  }

  @Test
  void severalConnectionsParkOnOneQueueAndAreServedInTurn() throws Exception {
    Conn first = new Conn();
    Conn second = new Conn();
    first.client.send_poll(A, "a/g", 1, 30_000);
    first.serve();
    second.client.send_poll(A, "a/g", 1, 30_000);
    second.serve();
    bus.publishBatch(
        A,
        List.of(
            new Delivery("a/g", b("m0")),
            new Delivery("a/g", b("m1")),
            new Delivery("a/g", b("m2"))));
    assertEquals(
        List.of("m0"), first.client.recv_poll().stream().map(TestClient::str).toList());
    assertEquals(
        List.of("m1"), second.client.recv_poll().stream().map(TestClient::str).toList());
    assertEquals(
        List.of("m2"),
        bus.poll(A, "a/g", 10, 0).stream().map(LocalMessageBusTest::s).toList());
  }

  @Test
  void hostAgentPollsParkToo() throws Exception {
    Conn byName = new Conn();
    byName.client.send_poll(HA, "__ha__", 1, 30_000);
    byName.serve();
    Conn agent = new Conn();
    agent.client.send_pollHostAgent(HA, 1, 30_000);
    agent.serve();
    bus.publish(A, "__ha__", b("first"));
    bus.publish(A, "__ha__", b("second"));
    assertEquals(
        List.of("first"),
        byName.client.recv_poll().stream().map(TestClient::str).toList());
    HostAgentMessage m = agent.client.recv_pollHostAgent().get(0);
    assertEquals("a", m.application);
    assertEquals("second", str(m.payload));
  }

  @Test
  void refusalsAndUnknownCallsAreAnsweredLikeTheGeneratedProcessor() throws Exception {
    Conn c = new Conn();
    c.client.send_poll(A, "b/g", 1, 30_000);
    c.serve();
    assertEquals(BusErrorCode.UNAUTHORIZED, assertThrows(BusError.class, c.client::recv_poll).code);
    c.client.send_pollHostAgent(A, 1, 0);
    c.serve();
    assertEquals(
        BusErrorCode.UNAUTHORIZED, assertThrows(BusError.class, c.client::recv_pollHostAgent).code);
    c.client.send_poll(A, "no-slash", 1, 0);
    c.serve();
    assertEquals(BusErrorCode.BAD_REQUEST, assertThrows(BusError.class, c.client::recv_poll).code);
    TProtocol raw = new TBinaryProtocol(c.requests);
    raw.writeMessageBegin(new TMessage("noSuchCall", TMessageType.CALL, 77));
    raw.writeStructBegin(new TStruct("args"));
    raw.writeFieldStop();
    raw.writeStructEnd();
    raw.writeMessageEnd();
    c.serve();
    TProtocol replies = new TBinaryProtocol(c.replies);
    TMessage reply = replies.readMessageBegin();
    assertEquals(TMessageType.EXCEPTION, reply.type);
    assertEquals(77, reply.seqid);
    assertEquals(
        TApplicationException.UNKNOWN_METHOD,
        TApplicationException.readFrom(replies).getType());
    c.client.send_length(A, "a/g"); // the connection still works
    c.serve();
    assertEquals(0, c.client.recv_length());
  }

  @Test
  void closingTheProcessorAnswersParkedPollsEmpty() throws Exception {
    Conn c = new Conn();
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    processor.close();
    assertEquals(List.of(), c.client.recv_poll());
    c.client.send_poll(A, "a/g", 10, 30_000);
    c.serve();
    assertEquals(List.of(), c.client.recv_poll(), "a closing bus parks no new poll");
  }

  /** A socket's write side that fails, or blocks until closed (a client that stopped reading). */
  static final class FakeSocket extends TEndpointTransport {
    enum Mode {
      FAIL,
      STALL
    }

    private final Mode mode;
    private final CountDownLatch closing = new CountDownLatch(1);
    volatile boolean closed;

    FakeSocket(Mode mode) throws TTransportException {
      super(new TConfiguration());
      this.mode = mode;
    }

    @Override
    public boolean isOpen() {
      return !closed;
    }

    @Override
    public void open() {}

    @Override
    public void close() {
      closed = true;
      closing.countDown();
    }

    @Override
    public int read(byte[] buf, int off, int len) throws TTransportException {
      throw new TTransportException(TTransportException.END_OF_FILE, "write-only");
    }

    @Override
    public void write(byte[] buf, int off, int len) throws TTransportException {
      if (mode == Mode.STALL) {
        try {
          closing.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      throw new TTransportException(TTransportException.UNKNOWN, "Broken pipe");
    }
  }
}
