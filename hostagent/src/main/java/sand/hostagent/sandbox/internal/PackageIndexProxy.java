package sand.hostagent.sandbox.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only way out of a dependency-install container (docs/host-agent.md, Requirements): an HTTP CONNECT
 * proxy on a Unix socket that is mounted into that container alone, which opens a TCP connection only to
 * the {@code host:port} pairs the operator allows (the package index and its file host) and answers 403
 * to anything else; other methods get 405. TLS goes end to end between pip and the index: the proxy only
 * moves bytes. One proxy per install, closed with it.
 */
public final class PackageIndexProxy implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PackageIndexProxy.class);
  private static final int MAX_HEAD = 8192;

  private final ServerSocketChannel server;
  private final Set<String> allowed;
  private final Duration connectTimeout;
  private final String who;
  private final List<AutoCloseable> open = new CopyOnWriteArrayList<>();
  private final List<String> refused = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  private PackageIndexProxy(ServerSocketChannel server, Set<String> allowed, Duration connectTimeout, String who) {
    this.server = server;
    this.allowed = allowed;
    this.connectTimeout = connectTimeout;
    this.who = who;
  }

  /**
   * Serve on {@code socket} (created, mode 0666: the container's unprivileged user connects to it).
   *
   * @param allowed {@code host:port} pairs that may be reached (lower-case host)
   * @param who     for log lines, e.g. "[host h1 app shop]"
   */
  public static PackageIndexProxy serve(Path socket, Set<String> allowed, Duration connectTimeout, String who)
      throws IOException {
    Files.deleteIfExists(socket);
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
    PackageIndexProxy p = new PackageIndexProxy(server, Set.copyOf(allowed), connectTimeout, who);
    Thread t = new Thread(p::acceptLoop, "pip-proxy");
    t.setDaemon(true);
    t.start();
    return p;
  }

  /** Destinations asked for and refused so far (for the error a failed install shows). */
  public List<String> refused() {
    return List.copyOf(refused);
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      open.add(client);
      Thread t = new Thread(() -> serveOne(client), "pip-proxy-conn");
      t.setDaemon(true);
      t.start();
    }
  }

  private void serveOne(SocketChannel client) {
    try (client) {
      // Channel streams of one SocketChannel share a lock (a blocked read would block every write): read the
      // head through a stream, then move bytes with the channel's own read and write, which may run at once.
      InputStream in = Channels.newInputStream(client);
      OutputStream out = Channels.newOutputStream(client);
      String head = readHead(in);
      if (head == null) {
        return;
      }
      String[] first = head.split("\r\n", 2)[0].split(" ");
      if (first.length != 3 || !first[0].equals("CONNECT")) {
        reply(out, 405, "Method Not Allowed", "only CONNECT to the package index is allowed");
        return;
      }
      String target = first[1].toLowerCase(Locale.ROOT);
      int colon = target.lastIndexOf(':');
      String host = colon < 0 ? target : target.substring(0, colon);
      int port;
      try {
        port = colon < 0 ? 443 : Integer.parseInt(target.substring(colon + 1));
      } catch (NumberFormatException e) {
        reply(out, 400, "Bad Request", "bad CONNECT target");
        return;
      }
      if (!allowed.contains(host + ":" + port)) {
        refused.add(host + ":" + port);
        LOG.warn("{} pip asked for {}:{}, which is not an allowed package index (sandbox.pip.allowed.hosts): refused",
            who, host, port);
        reply(out, 403, "Forbidden", host + ":" + port + " is not an allowed package index");
        return;
      }
      Socket upstream = new Socket();
      open.add(upstream);
      try (upstream) {
        upstream.connect(new InetSocketAddress(host, port), (int) connectTimeout.toMillis());
        upstream.setTcpNoDelay(true);
        out.write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        Thread down = new Thread(() -> toChannel(upstreamIn(upstream), client), "pip-proxy-down");
        down.setDaemon(true);
        down.start();
        fromChannel(client, upstream.getOutputStream());
        upstream.shutdownOutput();
        down.join(connectTimeout.toMillis());
      } catch (IOException e) {
        reply(out, 502, "Bad Gateway", "cannot reach " + host + ":" + port + ": " + e.getMessage());
      }
    } catch (IOException e) {
      LOG.debug("{} pip proxy connection: {}", who, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      open.remove(client);
    }
  }

  private static InputStream upstreamIn(Socket s) {
    try {
      return s.getInputStream();
    } catch (IOException e) {
      return InputStream.nullInputStream();
    }
  }

  /** Upstream to the container, until either side closes. */
  private static void toChannel(InputStream from, SocketChannel to) {
    byte[] buf = new byte[64 * 1024];
    try {
      int n;
      while ((n = from.read(buf)) >= 0) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(buf, 0, n);
        while (b.hasRemaining()) {
          to.write(b);
        }
      }
      to.shutdownOutput();
    } catch (IOException e) {
      // either side closed: the connection is over
    }
  }

  /** The container to upstream, until either side closes. */
  private static void fromChannel(SocketChannel from, OutputStream to) {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(64 * 1024);
    try {
      while (from.read(b) >= 0) {
        to.write(b.array(), 0, b.position());
        to.flush();
        b.clear();
      }
    } catch (IOException e) {
      // either side closed: the connection is over
    }
  }

  /** The request head up to the blank line, or null when the client sent none. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    byte[] end = {'\r', '\n', '\r', '\n'};
    while (head.size() < MAX_HEAD) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      if (matched == 4) {
        return head.toString(StandardCharsets.ISO_8859_1);
      }
    }
    return null;
  }

  private static void reply(OutputStream out, int status, String reason, String body) throws IOException {
    byte[] b = (body + "\n").getBytes(StandardCharsets.UTF_8);
    out.write(("HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain\r\nContent-Length: " + b.length
        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(b);
    out.flush();
  }

  @Override
  public void close() {
    closed = true;
    List<AutoCloseable> all = new ArrayList<>(open);
    all.add(server);
    for (AutoCloseable c : all) {
      try {
        c.close();
      } catch (Exception ignored) {
        // already closed
      }
    }
  }
}
