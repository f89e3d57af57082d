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
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
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
          s.getOutputStream().write(("echo:" + new String(b, StandardCharsets.US_ASCII)).getBytes(StandardCharsets.US_ASCII));
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
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      if (then != null) {
        out.write(then);
      }
      out.flush();
      ch.shutdownOutput();
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    }
  }

  @Test
  void anAllowedHostIsReachedThroughConnect() throws Exception {
    proxy = PackageIndexProxy.serve(tmp.resolve("proxy.sock"), Set.of("127.0.0.1:" + index.getLocalPort()),
        Duration.ofSeconds(5), "[test]");
    String reply = exchange("CONNECT 127.0.0.1:" + index.getLocalPort() + " HTTP/1.1\r\nHost: x\r\n\r\n",
        "ping".getBytes(StandardCharsets.US_ASCII));
    assertTrue(reply.startsWith("HTTP/1.1 200 Connection established\r\n\r\n"), reply);
    assertTrue(reply.endsWith("echo:ping"), reply);
    assertEquals(1, accepted.get());
  }

  @Test
  void anyOtherHostOrPortIsRefusedWithoutAConnection() throws Exception {
    proxy = PackageIndexProxy.serve(tmp.resolve("proxy.sock"), Set.of("index.example:443"), Duration.ofSeconds(5),
        "[test]");
    String reply = exchange("CONNECT 127.0.0.1:" + index.getLocalPort() + " HTTP/1.1\r\n\r\n", null);
    assertTrue(reply.startsWith("HTTP/1.1 403 Forbidden"), reply);
    assertTrue(reply.contains("is not an allowed package index"), reply);
    assertEquals(0, accepted.get(), "no connection was made");
    assertEquals(List.of("127.0.0.1:" + index.getLocalPort()), proxy.refused());
  }

  @Test
  void plainHttpRequestsAreNotForwarded() throws Exception {
    proxy = PackageIndexProxy.serve(tmp.resolve("proxy.sock"), Set.of("127.0.0.1:" + index.getLocalPort()),
        Duration.ofSeconds(5), "[test]");
    String reply = exchange("GET http://127.0.0.1:" + index.getLocalPort() + "/ HTTP/1.1\r\n\r\n", null);
    assertTrue(reply.startsWith("HTTP/1.1 405 Method Not Allowed"), reply);
    assertEquals(0, accepted.get());
  }
}
