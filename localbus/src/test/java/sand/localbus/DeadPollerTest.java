package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static sand.localbus.LocalMessageBusTest.A;
import static sand.localbus.LocalMessageBusTest.HA;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.transport.TMemoryBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.common.Credentials;
import sand.localbus.thrift.LocalBus;

/**
 * A poller that dies between sending its poll and reading the reply (a grain worker killed right
 * then): on a Unix socket the bus's reply fails at once, and the messages it was handing over must go
 * back to the head of the queue for the next poller, not be lost.
 */
class DeadPollerTest {
  @TempDir
  Path dir;

  private LocalBusServer server;

  @BeforeEach
  void start() throws Exception {
    Credentials credentials = new Credentials(HA);
    credentials.grant("a", A);
    server = new LocalBusServer(
            LocalBusSettings.defaults()
                .withPort(0)
                .withUnixSocket(dir.resolve("bus.sock").toString()),
            credentials)
        .start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** Send one poll of {@code queue} over a fresh Unix connection and close it without reading the reply. */
  private void pollAndDie(String queue, int timeoutMs) throws Exception {
    TMemoryBuffer request = new TMemoryBuffer(256);
    new LocalBus.Client(new TBinaryProtocol(request)).send_poll(A, queue, 10, timeoutMs);
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(server.unixSocket().orElseThrow()));
      ch.write(ByteBuffer.wrap(request.getArray(), 0, request.length()));
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private List<String> pollFromAnotherWorker(String queue) throws Exception {
    try (TestClient c = TestClient.unix(server.unixSocket().orElseThrow())) {
      return c.bus.poll(A, queue, 10, 5_000).stream().map(TestClient::str).toList();
    }
  }

  /** Wait (up to 10 s) until {@code queue} has held {@code length} messages for 300 ms. */
  private void awaitSettled(String queue, int length) throws Exception {
    long deadline = System.nanoTime() + 10_000_000_000L;
    int stable = 0;
    while (stable < 15 && System.nanoTime() < deadline) {
      stable = server.bus().length(HA, queue) == length ? stable + 1 : 0;
      Thread.sleep(20);
    }
    assertEquals(length, server.bus().length(HA, queue), "messages lost or never given back");
  }

  @Test
  void messagesAQueuedPollCouldNotReplyWithGoBackToTheHeadInOrder() throws Exception {
    server.bus().publish(A, "a/g", bytes("first"));
    server.bus().publish(A, "a/g", bytes("second"));
    for (int i = 0; i < 20; i++) { // the reply races the close: every round must lose nothing
      pollAndDie("a/g", 0);
    }
    // The dead polls are served on their own connections' threads, after pollAndDie returned. Two
    // of them still
    // running when "third" arrives could take [first, second] and [third] and give them back in
    // either order
    // (concurrent pollers of one queue, which a grain worker never is): publish once all are
    // served.
    awaitSettled("a/g", 2);
    server.bus().publish(A, "a/g", bytes("third"));
    assertEquals(List.of("first", "second", "third"), pollFromAnotherWorker("a/g"));
  }

  @Test
  void aParkedPollOfADeadConnectionTakesNothing() throws Exception {
    pollAndDie("a/g", 10_000);
    Thread.sleep(100); // the bus sees the connection end
    server.bus().publish(A, "a/g", bytes("after the death"));
    assertEquals(List.of("after the death"), pollFromAnotherWorker("a/g"));
    assertEquals(0, server.bus().length(HA, "a/g"));
  }
}
