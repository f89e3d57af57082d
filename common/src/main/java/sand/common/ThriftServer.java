package sand.common;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TProcessor;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TIOStreamTransport;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TServerTransport;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Thrift service (binary protocol, unframed) on a TCP port or a Unix domain socket.
 *
 * <p>Thread per connection: a grain worker's long poll blocks only its own connection's thread, and
 * a request is served by a thread already blocked in read(), which is the lowest-latency path.
 */
public final class ThriftServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ThriftServer.class);

  private final String name;
  private final TServer server;
  private final TServerTransport transport;
  private final ExecutorService workers;
  private final String address;
  private final int port;
  private Thread serveThread;

  private ThriftServer(String name, TProcessor processor, TServerTransport transport, String address,
                       int port, int maxConnections) {
    this.name = name;
    this.transport = transport;
    this.address = address;
    this.port = port;
    AtomicInteger n = new AtomicInteger();
    this.workers = new ThreadPoolExecutor(0, maxConnections, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
        r -> {
          Thread t = new Thread(r, name + "-conn-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    this.server = new TThreadPoolServer(new TThreadPoolServer.Args(transport)
        .processor(processor)
        .executorService(workers));
  }

  /** Serve on host:port over TCP; port 0 picks a free port (see {@link #port()}). */
  public static ThriftServer tcp(String name, TProcessor processor, String host, int port, int maxConnections)
      throws TTransportException {
    TServerSocket socket = new TServerSocket(new TServerSocket.ServerSocketTransportArgs()
        .bindAddr(new InetSocketAddress(host, port)).backlog(1024));
    int bound = socket.getServerSocket().getLocalPort();
    return new ThriftServer(name, processor, socket, host + ":" + bound, bound, maxConnections);
  }

  /**
   * Serve on a Unix domain socket at {@code path} (replacing a stale socket file). The file is made
   * accessible to any local user: sandboxes run as a non-root user, and the credential still decides.
   */
  public static ThriftServer unix(String name, TProcessor processor, Path path, int maxConnections)
      throws IOException {
    return new ThriftServer(name, processor, new UnixServerTransport(path), "unix:" + path, -1, maxConnections);
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
        throw new IllegalStateException("[" + name + "] Thrift server on " + address + " did not start");
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

  @Override
  public void close() {
    server.stop();
    transport.close();
    // No interrupts: a connection thread ends when its connection does (the Unix transport closes its
    // connections above; an interrupted channel operation would only be logged as an error by Thrift).
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
  static TTransport channelTransport(SocketChannel ch, Runnable onClose) throws TTransportException {
    return new TIOStreamTransport(new TConfiguration(),
        new BufferedInputStream(new UnixServerTransport.ChannelInput(ch), 64 * 1024),
        new BufferedOutputStream(new UnixServerTransport.ChannelOutput(ch), 64 * 1024)) {
      @Override
      public void close() {
        super.close();
        onClose.run();
        try {
          ch.close();
        } catch (IOException ignored) {
          // closing a dead connection
        }
      }
    };
  }

  /** A server transport on a Unix domain socket (Java 16+ channels). */
  static final class UnixServerTransport extends TServerTransport {
    private final Path path;
    private final ServerSocketChannel channel;
    private final java.util.Set<SocketChannel> connections = java.util.concurrent.ConcurrentHashMap.newKeySet();

    UnixServerTransport(Path path) throws IOException {
      this.path = path;
      Files.createDirectories(path.toAbsolutePath().getParent());
      Files.deleteIfExists(path);
      channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      channel.bind(UnixDomainSocketAddress.of(path), 1024);
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-rw-rw-"));
    }

    @Override
    public void listen() {
      // Bound and listening since construction.
    }

    @Override
    public TTransport accept() throws TTransportException {
      try {
        SocketChannel ch = channel.accept();
        connections.add(ch);
        return channelTransport(ch, () -> connections.remove(ch));
      } catch (IOException e) {
        throw new TTransportException(TTransportException.NOT_OPEN, "unix socket " + path + " closed", e);
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
        } catch (java.nio.channels.ClosedChannelException e) {
          return -1; // closed under us (the server is stopping): the end of this connection, not an error
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
      for (SocketChannel c : connections) {
        try {
          c.close(); // ends the connection threads blocked reading it
        } catch (IOException ignored) {
          // already gone
        }
      }
      try {
        channel.close();
        Files.deleteIfExists(path);
      } catch (IOException e) {
        LOG.warn("closing unix socket {}: {}", path, e.toString());
      }
    }
  }
}
