package sand.hostagent.sandbox.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.URLDecoder;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import javax.net.SocketFactory;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only way out of a dependency-install container (docs/host-agent.md, Requirements): an HTTP CONNECT
 * proxy on a Unix socket that is mounted into that container alone, which opens a TCP connection only to
 * the {@code host:port} pairs the operator allows (the package index and its file host) and answers 403
 * to anything else; other methods get 405. TLS goes end to end between pip and the index: the proxy only
 * moves bytes. One proxy per install, closed with it.
 *
 * <p>An operator's index URL may carry credentials ({@code https://user:token@index.example/simple}). The tenant's
 * build code runs in the install container as pip's own user, so nothing pip can read may hold them: the container
 * is given {@link #LOCAL_ORIGIN} plus the index's path instead (a loopback origin, which pip trusts over plain
 * HTTP), pip sends those requests to this proxy as {@code GET http://127.0.0.1:9/...}, and the proxy forwards them
 * to the real index with the credentials as {@code Authorization: Basic}, over TLS when the index is https. Only
 * that host and port are reached this way; the tenant's code can fetch from the index (as pip can) but never
 * learns the credentials.
 *
 * <p>At most {@code maxConnections} connections are served at once (each holds two threads); one more is answered
 * 503 and closed, so a build step opening connections in a loop costs the agent nothing but a short-lived socket.
 */
public final class PackageIndexProxy implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PackageIndexProxy.class);
  private static final int MAX_HEAD = 8192;
  /** pip opens a few connections at a time; more than this at once is not pip. */
  public static final int MAX_CONNECTIONS = 16;
  /** The origin the install container is given for a credentialed index (see the class comment). */
  public static final String LOCAL_ORIGIN = "http://127.0.0.1:9";

  /**
   * The operator's package index when its URL carries credentials: where requests to {@link #LOCAL_ORIGIN} go.
   *
   * @param tls for an https index: the socket factory whose trust the index's certificate must pass
   */
  public record CredentialedIndex(URI url, SocketFactory tls) {
    public CredentialedIndex {
      if (url.getRawUserInfo() == null
          || url.getHost() == null
          || !(url.getScheme().equals("https") || url.getScheme().equals("http"))) {
        throw new IllegalArgumentException("not an http(s) URL with credentials");
      }
    }

    /** The URL pip is given instead: the same path on {@link #LOCAL_ORIGIN}, no credentials. */
    public String localUrl() {
      return LOCAL_ORIGIN + (url.getRawPath() == null ? "" : url.getRawPath());
    }

    int port() {
      return url.getPort() > 0 ? url.getPort() : url.getScheme().equals("https") ? 443 : 80;
    }

    String authorization() {
      String user =
          URLDecoder.decode(url.getRawUserInfo().replace("+", "%2B"), StandardCharsets.UTF_8);
      return "Basic " + Base64.getEncoder().encodeToString(user.getBytes(StandardCharsets.UTF_8));
    }

    /** Printable: the index without its credentials. */
    @Override
    public String toString() {
      return url.getScheme() + "://" + url.getHost() + ":" + port() + url.getRawPath();
    }
  }

  private final ServerSocketChannel server;
  private final Set<String> allowed;
  private final Duration connectTimeout;
  private final String who;
  private final Semaphore slots;
  private final int maxConnections;
  private final CredentialedIndex index;
  private final List<AutoCloseable> open = new CopyOnWriteArrayList<>();
  /** Distinct destinations refused, the first {@link #MAX_REFUSED} (a build step may ask in a loop). */
  private final Set<String> refused = Collections.synchronizedSet(new LinkedHashSet<>());

  static final int MAX_REFUSED = 32;
  private volatile boolean closed;

  private PackageIndexProxy(
      ServerSocketChannel server,
      Set<String> allowed,
      Duration connectTimeout,
      String who,
      int maxConnections,
      CredentialedIndex index) {
    this.server = server;
    this.allowed = allowed;
    this.connectTimeout = connectTimeout;
    this.who = who;
    this.slots = new Semaphore(maxConnections);
    this.maxConnections = maxConnections;
    this.index = index;
  }

  /**
   * Serve on {@code socket} (created, mode 0666: the container's unprivileged user connects to it).
   *
   * @param allowed {@code host:port} pairs that may be reached (lower-case host)
   * @param who     for log lines, e.g. "[host h1 app shop]"
   */
  public static PackageIndexProxy serve(
      Path socket, Set<String> allowed, Duration connectTimeout, String who) throws IOException {
    return serve(socket, allowed, connectTimeout, who, MAX_CONNECTIONS, null);
  }

  /**
   * As {@link #serve(Path, Set, Duration, String)}, with a cap on connections at once and, when the index's URL
   * carries credentials, that index (null: none).
   */
  public static PackageIndexProxy serve(
      Path socket,
      Set<String> allowed,
      Duration connectTimeout,
      String who,
      int maxConnections,
      CredentialedIndex index)
      throws IOException {
    Files.deleteIfExists(socket);
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-rw-rw-"));
    PackageIndexProxy p = new PackageIndexProxy(
        server, Set.copyOf(allowed), connectTimeout, who, maxConnections, index);
    Thread t = new Thread(p::acceptLoop, "pip-proxy");
    t.setDaemon(true);
    t.start();
    return p;
  }

  /** Destinations asked for and refused so far (for the error a failed install shows). */
  public List<String> refused() {
    synchronized (refused) {
      return List.copyOf(refused);
    }
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (!slots.tryAcquire()) {
        // A fresh Unix socket's buffer takes this short answer without blocking the accept loop.
        try (client) {
          reply(
              Channels.newOutputStream(client),
              503,
              "Service Unavailable",
              "more than " + maxConnections + " connections at once to the package index proxy");
        } catch (IOException e) {
          // the client left already
        }
        continue;
      }
      open.add(client);
      Thread t = new Thread(() -> serveOne(client), "pip-proxy-conn");
      t.setDaemon(true);
      t.start();
    }
  }

  private void serveOne(SocketChannel client) {
    try (client) {
      // Channel streams of one SocketChannel share a lock (a blocked read would block every write):
      // read the
      // head through a stream, then move bytes with the channel's own read and write, which may run
      // at once.
      InputStream in = Channels.newInputStream(client);
      OutputStream out = Channels.newOutputStream(client);
      String head = readHead(in);
      if (head == null) {
        return;
      }
      String[] first = head.split("\r\n", 2)[0].split(" ");
      if (index != null
          && first.length == 3
          && first[0].equals("GET")
          && first[1].startsWith(LOCAL_ORIGIN + "/")) {
        forwardToIndex(head, first[1].substring(LOCAL_ORIGIN.length()), out);
        return;
      }
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
        boolean isNew;
        synchronized (refused) {
          isNew = refused.size() < MAX_REFUSED && refused.add(host + ":" + port);
        }
        if (isNew) { // once per destination, so a loop of refused CONNECTs neither grows memory nor
          // floods the log
          LOG.warn(
              "{} pip asked for {}:{}, which is not an allowed package index (sandbox.pip.allowed.hosts): refused",
              who,
              host,
              port);
        }
        reply(out, 403, "Forbidden", host + ":" + port + " is not an allowed package index");
        return;
      }
      Socket upstream = new Socket();
      open.add(upstream);
      try (upstream) {
        upstream.connect(new InetSocketAddress(host, port), (int) connectTimeout.toMillis());
        upstream.setTcpNoDelay(true);
        out.write(
            "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        Thread down = new Thread(() -> toChannel(upstreamIn(upstream), client), "pip-proxy-down");
        down.setDaemon(true);
        down.start();
        fromChannel(client, upstream.getOutputStream());
        upstream.shutdownOutput();
        down.join(connectTimeout.toMillis());
      } catch (IOException e) {
        reply(out, 502, "Bad Gateway", "cannot reach " + host + ":" + port + ": " + e.getMessage());
      } finally {
        open.remove(upstream);
      }
    } catch (IOException e) {
      LOG.debug("{} pip proxy connection: {}", who, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      open.remove(client);
      slots.release();
    }
  }

  /**
   * One GET for the credentialed index: the request head re-written for the index (its Host, the operator's
   * credentials, no keep-alive), then the index's answer moved back as it comes until the index closes.
   */
  private void forwardToIndex(String head, String pathAndQuery, OutputStream out)
      throws IOException {
    StringBuilder req = new StringBuilder("GET ").append(pathAndQuery).append(" HTTP/1.1\r\n");
    String[] lines = head.split("\r\n");
    for (int i = 1; i < lines.length; i++) {
      String name = lines[i].contains(":")
          ? lines[i].substring(0, lines[i].indexOf(':')).strip().toLowerCase(Locale.ROOT)
          : "";
      if (!name.isEmpty()
          && !Set.of(
                  "host",
                  "authorization",
                  "proxy-authorization",
                  "connection",
                  "proxy-connection",
                  "keep-alive")
              .contains(name)) {
        req.append(lines[i]).append("\r\n");
      }
    }
    String host = index.url().getHost();
    int port = index.port();
    req.append("Host: ")
        .append(host)
        .append(port == 443 || port == 80 ? "" : ":" + port)
        .append("\r\n")
        .append("Authorization: ")
        .append(index.authorization())
        .append("\r\n")
        .append("Connection: close\r\n\r\n");
    SocketFactory factory =
        index.url().getScheme().equals("https") ? index.tls() : SocketFactory.getDefault();
    Socket upstream;
    Socket plain = new Socket();
    open.add(plain);
    try {
      plain.connect(new InetSocketAddress(host, port), (int) connectTimeout.toMillis());
      upstream = factory instanceof SSLSocketFactory tls
          ? tls.createSocket(plain, host, port, true)
          : plain;
      if (upstream instanceof SSLSocket ssl) {
        SSLParameters p = ssl.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS"); // the index's name, not only its chain
        ssl.setSSLParameters(p);
        ssl.startHandshake();
      }
    } catch (IOException e) {
      open.remove(plain);
      plain.close();
      reply(
          out,
          502,
          "Bad Gateway",
          "cannot reach the package index " + index + ": " + e.getMessage());
      return;
    }
    open.add(upstream);
    try (plain;
        upstream) {
      OutputStream up = upstream.getOutputStream();
      up.write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
      up.flush();
      upstream.getInputStream().transferTo(out);
      out.flush();
    } finally {
      open.remove(upstream);
      open.remove(plain);
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
        ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
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
    ByteBuffer b = ByteBuffer.allocate(64 * 1024);
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

  private static void reply(OutputStream out, int status, String reason, String body)
      throws IOException {
    byte[] b = (body + "\n").getBytes(StandardCharsets.UTF_8);
    out.write(
        ("HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain\r\nContent-Length: "
                + b.length + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
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
