package sand.hostagent.sandbox.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The HTTP client against a canned server on a Unix socket: framing of requests and of the three kinds of body. */
class UnixHttpClientTest {
  @TempDir
  Path tmp;

  private ServerSocketChannel server;
  private final AtomicReference<String> request = new AtomicReference<>();

  @AfterEach
  void close() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  /** Serve one connection: read the request head (and a body of Content-Length), answer {@code response}. */
  private Path serve(String response, long delayMs) throws IOException {
    Path sock = tmp.resolve("http.sock");
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(sock));
    Thread t = new Thread(() -> {
      try (SocketChannel c = server.accept()) {
        InputStream in = Channels.newInputStream(c);
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
          head.write(in.read());
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        int cl = h.indexOf("Content-Length: ");
        int n = cl < 0 ? 0 : Integer.parseInt(h.substring(cl + 16, h.indexOf("\r\n", cl)));
        request.set(h + new String(in.readNBytes(n), StandardCharsets.UTF_8));
        Thread.sleep(delayMs);
        c.write(ByteBuffer.wrap(response.getBytes(StandardCharsets.UTF_8)));
      } catch (IOException | InterruptedException ignored) {
        // the client gave up
      }
    });
    t.setDaemon(true);
    t.start();
    return sock;
  }

  @Test
  void sendsAJsonBodyAndReadsAContentLengthAnswer() throws Exception {
    Path sock = serve(
        "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n"
            + "{\"Id\":\"abc\"}\n",
        0);
    try (UnixHttpClient http = new UnixHttpClient(sock, 1 << 20)) {
      UnixHttpClient.Response r = http.request(
          "POST",
          "/v1.41/containers/create?name=x",
          "{\"Image\":\"i\"}".getBytes(StandardCharsets.UTF_8),
          Duration.ofSeconds(5));
      assertEquals(201, r.status());
      assertEquals("{\"Id\":\"abc\"}\n", r.text());
      assertEquals("application/json", r.headers().get("content-type"));
    }
    assertTrue(
        request.get().startsWith("POST /v1.41/containers/create?name=x HTTP/1.1\r\n"),
        request.get());
    assertTrue(request.get().contains("Content-Length: 13\r\n")
        && request.get().endsWith("\r\n\r\n{\"Image\":\"i\"}"));
  }

  @Test
  void readsAChunkedAnswer() throws Exception {
    Path sock = serve(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n",
        0);
    try (UnixHttpClient http = new UnixHttpClient(sock, 1 << 20)) {
      assertEquals(
          "hello, world",
          http.request("GET", "/v1.41/x", null, Duration.ofSeconds(5)).text());
    }
  }

  @Test
  void readsToTheEndWithoutALength() throws Exception {
    Path sock = serve("HTTP/1.1 200 OK\r\n\r\nall of it", 0);
    try (UnixHttpClient http = new UnixHttpClient(sock, 1 << 20)) {
      assertEquals(
          "all of it",
          http.request("GET", "/v1.41/x", null, Duration.ofSeconds(5)).text());
    }
  }

  @Test
  void aSlowServerTimesOut() throws Exception {
    Path sock = serve("HTTP/1.1 200 OK\r\n\r\nlate", 5_000);
    try (UnixHttpClient http = new UnixHttpClient(sock, 1 << 20)) {
      UnixHttpClient.TransportException e = assertThrows(
          UnixHttpClient.TransportException.class,
          () -> http.request("GET", "/v1.41/x", null, Duration.ofMillis(200)));
      assertTrue(e.getMessage().contains("timed out after 200 ms"), e.getMessage());
    }
  }

  @Test
  void aMissingSocketSaysWhere() {
    try (UnixHttpClient http = new UnixHttpClient(tmp.resolve("none.sock"), 1 << 20)) {
      UnixHttpClient.TransportException e = assertThrows(
          UnixHttpClient.TransportException.class,
          () -> http.request("GET", "/v1.41/_ping", null, Duration.ofSeconds(1)));
      assertTrue(e.getMessage().contains(tmp.resolve("none.sock").toString()), e.getMessage());
    }
  }
}
