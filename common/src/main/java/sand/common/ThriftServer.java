package sand.common;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TProcessor;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TIOStreamTransport;
import org.apache.thrift.transport.TServerTransport;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.log.LogThrottle;

/**
 * A Thrift service (binary protocol, unframed) on a TCP port or a Unix domain socket.
 *
 * <p>Thread per connection: a grain worker's long poll blocks only its own connection's thread, and
 * a request is served by a thread already blocked in read(), which is the lowest-latency path.
 *
 * <p>Nobody is trusted before a known credential ({@link ThriftLimits}): calls are read with
 * {@link BoundedBinaryProtocol}; connections beyond {@link ThriftLimits#maxConnections()} are closed at
 * accept; a connection that has not presented a known credential {@link ThriftLimits#authTimeoutMs()}
 * after accept is closed, so a flood of silent connections holds a thread each for seconds, not for ever.
 */
public final class ThriftServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ThriftServer.class);

  /** One thread for every endpoint's deadline sweeps (there is an endpoint per application). */
  private static final ScheduledExecutorService SWEEPER =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "thrift-auth-deadlines");
        t.setDaemon(true);
        return t;
      });

  private final String name;
  private final TServer server;
  private final ChannelServerTransport transport;
  private final ExecutorService workers;
  private final String address;
  private final int port;
  private final ScheduledFuture<?> sweep;
  private Thread serveThread;

  private ThriftServer(
      String name,
      TProcessor processor,
      ChannelServerTransport transport,
      String address,
      int port,
      ThriftLimits limits) {
    this.name = name;
    this.transport = transport;
    this.address = address;
    this.port = port;
    AtomicInteger n = new AtomicInteger();
    // As many threads as connections may be open: the transport refuses the ones beyond.
    this.workers = new ThreadPoolExecutor(
        0, limits.maxConnections(), 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
          Thread t = new Thread(r, name + "-conn-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.server = new TThreadPoolServer(new TThreadPoolServer.Args(transport)
        .processor(quietlyRefusing(processor))
        .inputProtocolFactory(t -> new BoundedBinaryProtocol(t, ((Connection) t).admission, limits))
        .outputProtocolFactory(new TBinaryProtocol.Factory())
        .executorService(workers));
    long period = Math.max(50, Math.min(1_000, limits.authTimeoutMs() / 4));
    this.sweep = SWEEPER.scheduleWithFixedDelay(
        transport::closeOverdue, period, period, TimeUnit.MILLISECONDS);
  }

  /**
   * A refused call closes its connection as an end of stream would (TThreadPoolServer logs anything else
   * with its stack trace at ERROR, one per connection: a flood of bombs would flood the log); refusals are
   * logged here, at most one line per 10 s, with their count.
   */
  private TProcessor quietlyRefusing(TProcessor processor) {
    AtomicLong refusals = new AtomicLong();
    LogThrottle throttle = new LogThrottle(Duration.ofSeconds(10));
    return (in, out) -> {
      try {
        processor.process(in, out);
      } catch (BoundedBinaryProtocol.Refused e) {
        long n = refusals.incrementAndGet();
        if (throttle.allow()) {
          LOG.warn(
              "[{}] closed a connection: {} ({} refused calls so far)", name, e.getMessage(), n);
        }
        throw new TTransportException(
            TTransportException.END_OF_FILE, "refused: " + e.getMessage(), e);
      }
    };
  }

  /** Serve on host:port over TCP; port 0 picks a free port (see {@link #port()}). */
  public static ThriftServer tcp(
      String name, TProcessor processor, String host, int port, ThriftLimits limits)
      throws TTransportException {
    ChannelServerTransport socket;
    try {
      socket = new ChannelServerTransport(
          name, StandardProtocolFamily.INET, new InetSocketAddress(host, port), null, limits);
    } catch (IOException e) {
      throw new TTransportException(
          TTransportException.NOT_OPEN, "cannot bind " + host + ":" + port + ": " + e, e);
    }
    int bound = socket.localPort();
    return new ThriftServer(name, processor, socket, host + ":" + bound, bound, limits);
  }

  /**
   * Serve on a Unix domain socket at {@code path} (replacing a stale socket file). The file is made
   * accessible to any local user: sandboxes run as a non-root user, and the credential still decides.
   */
  public static ThriftServer unix(String name, TProcessor processor, Path path, ThriftLimits limits)
      throws IOException {
    Files.createDirectories(path.toAbsolutePath().getParent());
    Files.deleteIfExists(path);
    return new ThriftServer(
        name,
        processor,
        new ChannelServerTransport(
            name, StandardProtocolFamily.UNIX, UnixDomainSocketAddress.of(path), path, limits),
        "unix:" + path,
        -1,
        limits);
  }

  /**
   * Serve over TCP an endpoint that checks its callers' credentials itself: any credential is let through
   * to it, but reads are still bounded (chunked, {@link #ANY_CALLER_STRING_MAX_BYTES} per string, the
   * process's read budget) and a connection must present one within the default deadline.
   */
  public static ThriftServer tcp(
      String name, TProcessor processor, String host, int port, int maxConnections)
      throws TTransportException {
    return tcp(name, processor, host, port, anyCaller(maxConnections));
  }

  /** Same as {@link #tcp(String, TProcessor, String, int, int)} on a Unix domain socket. */
  public static ThriftServer unix(String name, TProcessor processor, Path path, int maxConnections)
      throws IOException {
    return unix(name, processor, path, anyCaller(maxConnections));
  }

  /** Largest string of an endpoint that lets any credential through: Thrift's own default message limit. */
  public static final int ANY_CALLER_STRING_MAX_BYTES = 100 << 20;

  private static ThriftLimits anyCaller(int maxConnections) {
    return new ThriftLimits(
        credential -> true,
        maxConnections,
        ANY_CALLER_STRING_MAX_BYTES,
        ThriftLimits.CONTAINER_MAX,
        ThriftLimits.AUTH_TIMEOUT_MS);
  }

  /**
   * Start serving on a background thread; returns once the accept loop runs. (TThreadPoolServer clears
   * its stop flag when serve() begins, so a close() racing ahead of that would be lost and the loop
   * would spin on a closed socket.)
   */
  public ThriftServer start() {
    serveThread = new Thread(server::serve, name + "-accept");
    serveThread.setDaemon(true);
    serveThread.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!server.isServing()) {
      if (!serveThread.isAlive() || System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "[" + name + "] Thrift server on " + address + " did not start");
      }
      Thread.onSpinWait();
      Thread.yield();
    }
    LOG.info("[{}] serving Thrift on {}", name, address);
    return this;
  }

  public int port() {
    return port;
  }

  public String address() {
    return address;
  }

  /** Connections open now (for tests and metrics). */
  public int openConnections() {
    return transport.connections.size();
  }

  /** Connections refused at accept because the endpoint was full, since it started. */
  public long refusedConnections() {
    return transport.refused.get();
  }

  @Override
  public void close() {
    sweep.cancel(false);
    server.stop();
    transport.close();
    // No interrupts: a connection thread ends when its connection does (the transport closes its
    // connections above; an interrupted channel operation would only be logged as an error by
    // Thrift).
    workers.shutdown();
    LOG.info("[{}] stopped serving on {}", name, address);
  }

  /** A client connection to a Thrift service on a Unix domain socket (same transport as the server side). */
  public static TTransport connectUnix(Path path) throws IOException, TTransportException {
    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
    ch.connect(UnixDomainSocketAddress.of(path));
    return channelTransport(ch, () -> {});
  }

  /**
   * A blocking channel as a buffered, full-duplex Thrift transport (see {@code ChannelInput}); closing it
   * closes the channel and runs {@code onClose}.
   */
  static TTransport channelTransport(SocketChannel ch, Runnable onClose)
      throws TTransportException {
    return new Connection(ch, onClose, null);
  }

  /** A served (or client) connection: the channel's streams, and the caller's standing on the server side. */
  static final class Connection extends TIOStreamTransport {
    final Admission admission;
    private final SocketChannel ch;
    private final Runnable onClose;

    Connection(SocketChannel ch, Runnable onClose, Admission admission) throws TTransportException {
      super(
          new TConfiguration(),
          new BufferedInputStream(new ChannelServerTransport.ChannelInput(ch), 64 * 1024),
          new BufferedOutputStream(new ChannelServerTransport.ChannelOutput(ch), 64 * 1024));
      this.ch = ch;
      this.onClose = onClose;
      this.admission = admission;
    }

    @Override
    public void close() {
      abort(); // first: a flush below must not wait for a peer that stopped reading
      super.close();
      onClose.run();
    }

    /**
     * Close the channel only: its reader and any blocked writer fail at once, and the connection's thread
     * then closes the rest (another thread must not take the streams' locks, which a blocked writer holds).
     */
    void abort() {
      try {
        ch.close();
      } catch (IOException ignored) {
        // closing a dead connection
      }
      if (admission != null) {
        admission.close();
      }
    }
  }

  /**
   * A server transport on a TCP or Unix domain socket channel (Java 16+). It counts its open
   * connections: one beyond the limit is closed at once (a thread each is what they cost).
   */
  static final class ChannelServerTransport extends TServerTransport {
    private final String name;
    private final Path path;
    private final ServerSocketChannel channel;
    private final ThriftLimits limits;
    final Set<Connection> connections = ConcurrentHashMap.newKeySet();
    final AtomicLong refused = new AtomicLong();
    private final AtomicInteger expired = new AtomicInteger();
    private final LogThrottle refusalLog =
        new LogThrottle(Duration.ofSeconds(10)); // a flood must not flood the log

    ChannelServerTransport(
        String name, ProtocolFamily family, SocketAddress bind, Path path, ThriftLimits limits)
        throws IOException {
      this.name = name;
      this.path = path;
      this.limits = limits;
      channel = ServerSocketChannel.open(family);
      if (family == StandardProtocolFamily.INET) {
        channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      }
      channel.bind(bind, 1024);
      if (path != null) {
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-rw-rw-"));
      }
    }

    int localPort() {
      try {
        return ((InetSocketAddress) channel.getLocalAddress()).getPort();
      } catch (IOException e) {
        return -1;
      }
    }

    @Override
    public void listen() {
      // Bound and listening since construction.
    }

    @Override
    public TTransport accept() throws TTransportException {
      while (true) {
        SocketChannel ch;
        try {
          ch = channel.accept();
        } catch (IOException e) {
          throw new TTransportException(TTransportException.NOT_OPEN, name + " socket closed", e);
        }
        if (connections.size() >= limits.maxConnections()) {
          refuse(ch);
          continue;
        }
        try {
          if (path == null) {
            ch.setOption(
                StandardSocketOptions.TCP_NODELAY,
                true); // small request/response: never wait for Nagle
          }
          Connection[] self = new Connection[1];
          self[0] = new Connection(
              ch,
              () -> connections.remove(self[0]),
              new Admission(limits.authenticator(), ReadBudget.PROCESS, System.nanoTime()));
          connections.add(self[0]);
          return self[0];
        } catch (IOException | TTransportException e) {
          closeQuietly(ch);
        }
      }
    }

    private void refuse(SocketChannel ch) {
      long n = refused.incrementAndGet(); // counted before the caller can see it closed
      closeQuietly(ch);
      if (refusalLog.allow()) {
        LOG.warn(
            "[{}] {} connections open, the most allowed: refusing more ({} refused so far)",
            name,
            limits.maxConnections(),
            n);
      }
    }

    /** Close the connections that have not presented a known credential in time. */
    void closeOverdue() {
      long now = System.nanoTime();
      long timeout = TimeUnit.MILLISECONDS.toNanos(limits.authTimeoutMs());
      int n = 0;
      for (Connection c : connections) {
        if (c.admission.expireIfOverdue(now, timeout)) {
          c.abort(); // its thread's blocked read ends, and the thread with it
          n++;
        }
      }
      if (n > 0 && expired.getAndAdd(n) % 1000 < n) {
        LOG.warn(
            "[{}] closed {} connection(s) that presented no known credential within {} ms",
            name,
            n,
            limits.authTimeoutMs());
      }
    }

    private static void closeQuietly(SocketChannel ch) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // refusing a connection that already went away
      }
    }

    /**
     * Reads a blocking channel. Not {@link Channels#newInputStream}: its streams hold the channel's
     * blocking lock for the whole of a read, so a reply written by another thread (the bus hands a
     * message to a long poll from the publisher's thread) would wait for the next request to arrive.
     */
    private static final class ChannelInput extends InputStream {
      private final SocketChannel ch;

      ChannelInput(SocketChannel ch) {
        this.ch = ch;
      }

      @Override
      public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        try {
          return len == 0 ? 0 : ch.read(ByteBuffer.wrap(b, off, len));
        } catch (ClosedChannelException e) {
          return -1; // closed under us (the server is stopping): the end of this connection, not an
          // error
        }
      }

      @Override
      public void close() throws IOException {
        ch.close();
      }
    }

    /** Writes a blocking channel, without the blocking lock (see {@link ChannelInput}). */
    private static final class ChannelOutput extends OutputStream {
      private final SocketChannel ch;

      ChannelOutput(SocketChannel ch) {
        this.ch = ch;
      }

      @Override
      public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(b, off, len);
        while (buf.hasRemaining()) {
          ch.write(buf);
        }
      }

      @Override
      public void close() throws IOException {
        ch.close();
      }
    }

    @Override
    public void close() {
      try {
        channel.close();
        if (path != null) {
          Files.deleteIfExists(path);
        }
      } catch (IOException e) {
        LOG.warn("closing {} socket {}: {}", name, path, e.toString());
      }
      for (Connection c : connections) {
        c.abort(); // ends the connection threads blocked reading it
      }
    }
  }
}
