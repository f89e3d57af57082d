package sand.hostagent.sandbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.SocketFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The install container's only way out: CONNECT to allowed host:port pairs, nothing else. */
class PackageIndexProxyTest {
  @TempDir
  Path tmp;

  private ServerSocket index;
  private final AtomicInteger accepted = new AtomicInteger();
  private PackageIndexProxy proxy;

  @BeforeEach
  void startIndex() throws IOException {
    index = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(() -> {
      while (!index.isClosed()) {
        try (Socket s = index.accept()) {
          accepted.incrementAndGet();
          byte[] b = s.getInputStream().readNBytes(4);
          s.getOutputStream()
              .write(("echo:" + new String(b, StandardCharsets.US_ASCII))
                  .getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
          return;
        }
      }
    });
    t.setDaemon(true);
    t.start();
  }

  @AfterEach
  void stop() throws IOException {
    if (proxy != null) {
      proxy.close();
    }
    index.close();
  }

  private String exchange(String request, byte[] then) throws IOException {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(tmp.resolve("proxy.sock")));
      OutputStream out = Channels.newOutputStream(ch);
      InputStream in = Channels.newInputStream(ch);
      try {
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        if (then != null) {
          out.write(then);
        }
        out.flush();
        ch.shutdownOutput();
      } catch (IOException e) {
        // A refused connection (503 at accept, over the cap) may be answered and closed before the
        // request is
        // written: a broken pipe here; its answer is still there to read.
      }
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
  }

  @Test
  void anAllowedHostIsReachedThroughConnect() throws Exception {
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"),
        Set.of("127.0.0.1:" + index.getLocalPort()),
        Duration.ofSeconds(5),
        "[test]");
    String reply = exchange(
        "CONNECT 127.0.0.1:" + index.getLocalPort() + " HTTP/1.1\r\nHost: x\r\n\r\n",
        "ping".getBytes(StandardCharsets.US_ASCII));
    assertTrue(reply.startsWith("HTTP/1.1 200 Connection established\r\n\r\n"), reply);
    assertTrue(reply.endsWith("echo:ping"), reply);
    assertEquals(1, accepted.get());
  }

  @Test
  void anyOtherHostOrPortIsRefusedWithoutAConnection() throws Exception {
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"), Set.of("index.example:443"), Duration.ofSeconds(5), "[test]");
    String reply =
        exchange("CONNECT 127.0.0.1:" + index.getLocalPort() + " HTTP/1.1\r\n\r\n", null);
    assertTrue(reply.startsWith("HTTP/1.1 403 Forbidden"), reply);
    assertTrue(reply.contains("is not an allowed package index"), reply);
    assertEquals(0, accepted.get(), "no connection was made");
    assertEquals(List.of("127.0.0.1:" + index.getLocalPort()), proxy.refused());
  }

  @Test
  void refusedDestinationsAreRememberedOnceAndBounded() throws Exception {
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"), Set.of("index.example:443"), Duration.ofSeconds(5), "[test]");
    for (int i = 0; i < 200; i++) {
      String reply = exchange("CONNECT h" + (i % 100) + ".example:443 HTTP/1.1\r\n\r\n", null);
      assertTrue(reply.startsWith("HTTP/1.1 403"), reply);
    }
    assertEquals(PackageIndexProxy.MAX_REFUSED, proxy.refused().size());
    assertEquals("h0.example:443", proxy.refused().get(0));
  }

  @Test
  void plainHttpRequestsAreNotForwarded() throws Exception {
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"),
        Set.of("127.0.0.1:" + index.getLocalPort()),
        Duration.ofSeconds(5),
        "[test]");
    String reply =
        exchange("GET http://127.0.0.1:" + index.getLocalPort() + "/ HTTP/1.1\r\n\r\n", null);
    assertTrue(reply.startsWith("HTTP/1.1 405 Method Not Allowed"), reply);
    assertEquals(0, accepted.get());
  }

  @Test
  void connectionsBeyondTheCapAreAnswered503AndCostNoThread() throws Exception {
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"),
        Set.of("index.example:443"),
        Duration.ofSeconds(5),
        "[test]",
        2,
        null);
    int threadsBefore = Thread.activeCount();
    List<SocketChannel> held = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) { // connections that never send their head: each holds a slot
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(tmp.resolve("proxy.sock")));
        held.add(ch);
      }
      for (int i = 0; i < 50; i++) { // answered at once, before they send anything
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
          ch.connect(UnixDomainSocketAddress.of(tmp.resolve("proxy.sock")));
          String reply =
              new String(Channels.newInputStream(ch).readAllBytes(), StandardCharsets.US_ASCII);
          assertTrue(reply.startsWith("HTTP/1.1 503 Service Unavailable"), reply);
        }
      }
      assertTrue(
          Thread.activeCount() <= threadsBefore + 2,
          "one thread per held connection, none for the refused: " + threadsBefore + " -> "
              + Thread.activeCount());
    } finally {
      for (SocketChannel ch : held) {
        ch.close();
      }
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    String reply = "";
    while (System.nanoTime()
        < deadline) { // the held connections' slots come back once they are closed
      try {
        reply = exchange("CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", null);
      } catch (IOException e) {
        // Still over the cap: refused (503 and closed) while the request was on its way, which
        // resets the
        // connection before the answer is read. Try again.
        reply = e.toString();
      }
      if (reply.startsWith("HTTP/1.1 403")) {
        break;
      }
      Thread.sleep(50);
    }
    assertTrue(reply.startsWith("HTTP/1.1 403"), reply);
  }

  @Test
  void aCredentialedIndexIsReachedWithItsCredentialsWhichTheClientNeverSees() throws Exception {
    ServerSocket upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    String[] seen = new String[1];
    Thread t = new Thread(() -> {
      try (upstream;
          Socket s = upstream.accept()) {
        InputStream in = s.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
          head.append((char) in.read());
        }
        seen[0] = head.toString();
        s.getOutputStream()
            .write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nlinks"
                .getBytes(StandardCharsets.US_ASCII));
      } catch (IOException e) {
        seen[0] = e.toString();
      }
    });
    t.setDaemon(true);
    t.start();
    PackageIndexProxy.CredentialedIndex index = new PackageIndexProxy.CredentialedIndex(
        URI.create("http://ops:s%40cret@127.0.0.1:" + upstream.getLocalPort() + "/simple"),
        SocketFactory.getDefault());
    assertEquals("http://127.0.0.1:9/simple", index.localUrl());
    assertTrue(!index.toString().contains("cret"), index.toString());
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"), Set.of(), Duration.ofSeconds(5), "[test]", 4, index);

    String reply = exchange(
        "GET http://127.0.0.1:9/simple/six/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"
            + "Accept: text/html\r\nConnection: keep-alive\r\nAuthorization: Basic Zm9yZ2Vk\r\n\r\n",
        null);
    t.join(5000);
    assertTrue(reply.startsWith("HTTP/1.1 200 OK") && reply.endsWith("links"), reply);
    assertEquals(
        "GET /simple/six/ HTTP/1.1\r\nAccept: text/html\r\nHost: 127.0.0.1:"
            + upstream.getLocalPort()
            + "\r\nAuthorization: Basic "
            + Base64.getEncoder().encodeToString("ops:s@cret".getBytes(StandardCharsets.UTF_8))
            + "\r\nConnection: close\r\n\r\n",
        seen[0]);
  }

  @Test
  void withACredentialedIndexOtherPlainRequestsAreStillRefused() throws Exception {
    PackageIndexProxy.CredentialedIndex index = new PackageIndexProxy.CredentialedIndex(
        URI.create("https://ops:secret@index.example/simple"), SocketFactory.getDefault());
    proxy = PackageIndexProxy.serve(
        tmp.resolve("proxy.sock"),
        Set.of("127.0.0.1:" + index().getLocalPort()),
        Duration.ofSeconds(5),
        "[test]",
        4,
        index);
    String reply =
        exchange("GET http://127.0.0.1:" + index().getLocalPort() + "/ HTTP/1.1\r\n\r\n", null);
    assertTrue(reply.startsWith("HTTP/1.1 405 Method Not Allowed"), reply);
    assertEquals(0, accepted.get());
  }

  private ServerSocket index() {
    return index;
  }
}
