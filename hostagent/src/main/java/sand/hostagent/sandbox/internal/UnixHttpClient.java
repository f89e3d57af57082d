package sand.hostagent.sandbox.internal;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A minimal HTTP/1.1 client over a Unix domain socket (Java 16+ channels): one connection per request
 * ({@code Connection: close}), bodies by Content-Length, chunked transfer encoding or end of stream.
 * Enough for the Docker Engine API, which is all it is for.
 *
 * <p>A blocking Unix {@link SocketChannel} has no read timeout, so a watchdog closes the channel when a
 * request runs past its deadline; the blocked read then fails and the call reports the timeout.
 */
public final class UnixHttpClient implements AutoCloseable {

  /** A response: status, lower-cased headers, the whole (de-chunked) body. */
  public record Response(int status, Map<String, String> headers, byte[] body) {
    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** The request did not complete: connection refused, reset, or past its deadline. */
  public static final class TransportException extends IOException {
    public TransportException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final Path socket;
  private final long maxBodyBytes;
  private final ScheduledExecutorService watchdog =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "docker-http-watchdog");
        t.setDaemon(true);
        return t;
      });

  public UnixHttpClient(Path socket, long maxBodyBytes) {
    this.socket = socket;
    this.maxBodyBytes = maxBodyBytes;
  }

  public Path socket() {
    return socket;
  }

  /** Send one request ({@code body} may be null) and read the whole response within {@code timeout}. */
  public Response request(String method, String target, byte[] body, Duration timeout)
      throws TransportException {
    AtomicBoolean timedOut = new AtomicBoolean();
    SocketChannel ch;
    try {
      ch = SocketChannel.open(StandardProtocolFamily.UNIX);
    } catch (IOException e) {
      throw new TransportException("cannot open a Unix socket: " + e.getMessage(), e);
    }
    ScheduledFuture<?> alarm = watchdog.schedule(
        () -> {
          timedOut.set(true);
          closeQuietly(ch);
        },
        timeout.toMillis(),
        TimeUnit.MILLISECONDS);
    try {
      ch.connect(UnixDomainSocketAddress.of(socket));
      OutputStream out = Channels.newOutputStream(ch);
      StringBuilder head = new StringBuilder()
          .append(method)
          .append(' ')
          .append(target)
          .append(" HTTP/1.1\r\n")
          .append("Host: docker\r\n")
          .append("User-Agent: sand-hostagent\r\n")
          .append("Connection: close\r\n");
      if (body != null) {
        head.append("Content-Type: application/json\r\nContent-Length: ")
            .append(body.length)
            .append("\r\n");
      } else if (!method.equals("GET") && !method.equals("DELETE")) {
        head.append("Content-Length: 0\r\n");
      }
      head.append("\r\n");
      out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      return readResponse(new BufferedInputStream(Channels.newInputStream(ch), 64 * 1024), method);
    } catch (IOException e) {
      if (timedOut.get()) {
        throw new TransportException(
            method + " " + target + " timed out after " + timeout.toMillis() + " ms", e);
      }
      throw new TransportException(method + " " + target + " on " + socket + " failed: " + e, e);
    } finally {
      alarm.cancel(false);
      closeQuietly(ch);
    }
  }

  private Response readResponse(InputStream in, String method) throws IOException {
    String statusLine = readLine(in);
    if (statusLine == null || !statusLine.startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP response: " + statusLine);
    }
    String[] parts = statusLine.split(" ", 3);
    int status = Integer.parseInt(parts[1]);
    Map<String, String> headers = new TreeMap<>();
    for (String line = readLine(in); line != null && !line.isEmpty(); line = readLine(in)) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        headers.put(
            line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
            line.substring(colon + 1).trim());
      }
    }
    byte[] body;
    if (method.equals("HEAD") || status == 204 || status == 304 || status / 100 == 1) {
      body = new byte[0];
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      body = readChunked(in);
    } else if (headers.containsKey("content-length")) {
      long n = Long.parseLong(headers.get("content-length"));
      checkSize(n);
      body = in.readNBytes((int) n);
      if (body.length != n) {
        throw new IOException("response body ended after " + body.length + " of " + n + " bytes");
      }
    } else {
      body = readLimited(in);
    }
    return new Response(status, headers, body);
  }

  private byte[] readChunked(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (; ; ) {
      String sizeLine = readLine(in);
      if (sizeLine == null) {
        throw new IOException("chunked body ended without its last chunk");
      }
      int semi = sizeLine.indexOf(';');
      long size = Long.parseLong((semi >= 0 ? sizeLine.substring(0, semi) : sizeLine).trim(), 16);
      if (size == 0) {
        while (true) { // trailers, up to the empty line
          String trailer = readLine(in);
          if (trailer == null || trailer.isEmpty()) {
            return out.toByteArray();
          }
        }
      }
      checkSize(out.size() + size);
      byte[] chunk = in.readNBytes((int) size);
      if (chunk.length != size) {
        throw new IOException("chunk ended after " + chunk.length + " of " + size + " bytes");
      }
      out.write(chunk);
      readLine(in); // the CRLF after the chunk
    }
  }

  private byte[] readLimited(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) >= 0; ) {
      checkSize(out.size() + (long) n);
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  private void checkSize(long n) throws IOException {
    if (n > maxBodyBytes) {
      throw new IOException("response body above " + maxBodyBytes + " bytes");
    }
  }

  /** A CRLF- (or LF-) terminated line in ISO-8859-1, without the terminator; null at end of stream. */
  private static String readLine(InputStream in) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (; ; ) {
      int b = in.read();
      if (b < 0) {
        return sb.length() == 0 ? null : sb.toString();
      }
      if (b == '\n') {
        int len = sb.length();
        return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
      }
      if (sb.length() > 64 * 1024) {
        throw new IOException("HTTP header line longer than 64 KiB");
      }
      sb.append((char) b);
    }
  }

  private static void closeQuietly(SocketChannel ch) {
    try {
      ch.close();
    } catch (IOException ignored) {
      // already closed or broken: nothing to release
    }
  }

  @Override
  public void close() {
    watchdog.shutdownNow();
  }
}
