package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.localbus.LocalMessageBusTest.A;
import static sand.localbus.LocalMessageBusTest.B;
import static sand.localbus.LocalMessageBusTest.HA;
import static sand.localbus.LocalMessageBusTest.awaitPoller;
import static sand.localbus.TestClient.buf;
import static sand.localbus.TestClient.str;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import sand.common.Credentials;
import sand.localbus.thrift.BusError;
import sand.localbus.thrift.BusErrorCode;
import sand.localbus.thrift.Delivery;
import sand.localbus.thrift.HostAgentMessage;

class LocalBusServerTest {
  @TempDir
  Path dir;

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final List<AutoCloseable> open = new ArrayList<>();
  private LocalBusServer server;

  @BeforeEach
  void start() throws Exception {
    server = start(LocalBusSettings.defaults()
        .withPort(0)
        .withQueueCapacity(100_000)
        .withMessageMaxBytes(1024)
        .withUnixSocket(dir.resolve("bus.sock").toString()));
  }

  private LocalBusServer start(LocalBusSettings settings) throws Exception {
    Credentials credentials = new Credentials(HA);
    credentials.grant("a", A);
    credentials.grant("b", B);
    LocalBusServer s = new LocalBusServer(settings, credentials).start();
    open.add(s);
    return s;
  }

  @AfterEach
  void stop() throws Exception {
    pool.shutdownNow();
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private TestClient client() throws Exception {
    TestClient c = TestClient.tcp(server.port());
    open.add(0, c);
    return c;
  }

  private static BusError refused(BusErrorCode code, Executable call) {
    BusError e = assertThrows(BusError.class, call);
    assertEquals(code, e.code, e.message);
    return e;
  }

  @Test
  void fifoHoldsForEachOfFourProducersThroughThrift() throws Exception {
    int producers = 4;
    int perProducer = 5000;
    List<Future<?>> running = new ArrayList<>();
    for (int p = 0; p < producers; p++) {
      TestClient c = client();
      int id = p;
      running.add(pool.submit((Callable<Void>) () -> {
        for (int i = 0; i < perProducer; i++) {
          c.bus.publish(A, "a/fifo", buf(id + ":" + i));
        }
        return null;
      }));
    }
    TestClient consumer = client();
    int[] next = new int[producers];
    int received = 0;
    while (received < producers * perProducer) {
      List<ByteBuffer> got = consumer.bus.poll(A, "a/fifo", 1000, 30_000);
      assertFalse(got.isEmpty(), "messages stopped after " + received);
      for (ByteBuffer b : got) {
        String m = str(b);
        int id = Integer.parseInt(m.substring(0, m.indexOf(':')));
        assertEquals(
            next[id]++,
            Integer.parseInt(m.substring(m.indexOf(':') + 1)),
            "order of producer " + id);
        received++;
      }
    }
    for (Future<?> f : running) {
      f.get();
    }
    assertEquals(0, consumer.bus.length(A, "a/fifo"), "none left, none extra");
  }

  @Test
  void aPublishWakesALongPollLongBeforeItsTimeout() throws Exception {
    TestClient poller = client();
    TestClient publisher = client();
    long start = System.nanoTime();
    Future<List<ByteBuffer>> polled = pool.submit(() -> poller.bus.poll(A, "a/g", 10, 30_000));
    awaitPoller(server.bus(), "a/g");
    publisher.bus.publish(A, "a/g", buf("wake up"));
    List<ByteBuffer> got = polled.get(10, TimeUnit.SECONDS);
    assertEquals(List.of("wake up"), got.stream().map(TestClient::str).toList());
    assertTrue(
        System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20),
        "woken by the publish, not the timeout");
  }

  @Test
  void pollTimesOutEmptyAndTakesAtMostMaxMessages() throws Exception {
    TestClient c = client();
    assertEquals(List.of(), c.bus.poll(A, "a/g", 10, 200));
    for (int i = 0; i < 5; i++) {
      c.bus.publish(A, "a/g", buf("m" + i));
    }
    assertEquals(
        List.of("m0", "m1"),
        c.bus.poll(A, "a/g", 2, 0).stream().map(TestClient::str).toList());
    assertEquals(
        List.of("m2", "m3", "m4"),
        c.bus.poll(A, "a/g", 10, 0).stream().map(TestClient::str).toList());
  }

  @Test
  void boundsComeBackAsBusErrors() throws Exception {
    LocalBusServer small = server =
        start(LocalBusSettings.defaults().withPort(0).withQueueCapacity(2).withMessageMaxBytes(16));
    TestClient c = client();
    c.bus.publish(A, "a/full", buf("1"));
    c.bus.publish(A, "a/full", buf("2"));
    refused(BusErrorCode.QUEUE_FULL, () -> c.bus.publish(A, "a/full", buf("3")));
    refused(
        BusErrorCode.QUEUE_FULL,
        () -> c.bus.publishBatch(
            A,
            List.of(
                new Delivery("a/next", buf("x")),
                new Delivery("__ha__", buf("copy")),
                new Delivery("a/full", buf("3")))));
    assertEquals(0, c.bus.length(A, "a/next"), "nothing of the batch was enqueued");
    assertEquals(0, c.bus.length(HA, "__ha__"));
    assertEquals(
        List.of("1", "2"),
        c.bus.poll(A, "a/full", 10, 0).stream().map(TestClient::str).toList(),
        "nothing was dropped");
    refused(BusErrorCode.TOO_LARGE, () -> c.bus.publish(A, "a/g", ByteBuffer.allocate(17)));
    refused(BusErrorCode.BAD_REQUEST, () -> c.bus.publish(A, "a/b/c", buf("x")));
    BusError e = refused(BusErrorCode.BAD_REQUEST, () -> c.bus.poll(A, "no-slash", 1, 0));
    assertTrue(
        e.message.contains("'no-slash'") && e.message.contains("<application>/<grain>"), e.message);
    assertEquals(
        2,
        small.bus().queueStats().stream()
            .filter(s -> s.queue().equals("a/full"))
            .findFirst()
            .orElseThrow()
            .published());
  }

  @Test
  void credentialsAreCheckedForEveryOperation() throws Exception {
    TestClient c = client();
    List<Executable> othersQueue = List.of(
        () -> c.bus.publish(A, "b/g", buf("x")),
        () -> c.bus.publishBatch(
            A, List.of(new Delivery("a/g", buf("x")), new Delivery("b/g", buf("x")))),
        () -> c.bus.poll(A, "b/g", 1, 0),
        () -> c.bus.length(A, "b/g"),
        () -> c.bus.deleteQueue(A, "b/g"));
    for (Executable call : othersQueue) {
      BusError e = refused(BusErrorCode.UNAUTHORIZED, call);
      assertTrue(e.message.contains("'b/g'") && e.message.contains("application a"), e.message);
      assertFalse(e.message.contains(A), "never the credential: " + e.message);
    }
    assertEquals(0, c.bus.length(A, "a/g"), "the refused batch enqueued nothing");
    refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.poll(A, "__ha__", 1, 0));
    refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.pollHostAgent(A, 1, 0));
    refused(
        BusErrorCode.UNAUTHORIZED,
        () -> c.bus.grantApplication(A, "a", "another-credential-for-a"));
    refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.revokeApplication(A, "b"));
    BusError unknown = refused(
        BusErrorCode.UNAUTHORIZED, () -> c.bus.publish("not-a-credential", "a/g", buf("x")));
    assertFalse(unknown.message.contains("not-a-credential"), unknown.message);
    refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.poll(null, "a/g", 1, 0));
  }

  @Test
  void hostAgentMessagesCarryTheApplicationTheBusSaw() throws Exception {
    TestClient app = client();
    TestClient agent = client();
    app.bus.publish(A, "__ha__", buf("{\"application\": \"b\"}"));
    app.bus.publishBatch(
        A, List.of(new Delivery("a/next", buf("out")), new Delivery("__ha__", buf("copy"))));
    List<HostAgentMessage> got = agent.bus.pollHostAgent(HA, 10, 0);
    assertEquals(List.of("a", "a"), got.stream().map(m -> m.application).toList());
    assertEquals("{\"application\": \"b\"}", str(got.get(0).payload));
    assertEquals("copy", str(got.get(1).payload));
  }

  @Test
  void deleteQueueWakesAPollerWithNothing() throws Exception {
    TestClient poller = client();
    TestClient other = client();
    Future<List<ByteBuffer>> polled = pool.submit(() -> poller.bus.poll(A, "a/g", 10, 30_000));
    awaitPoller(server.bus(), "a/g");
    assertEquals(0, other.bus.deleteQueue(A, "a/g"));
    assertEquals(List.of(), polled.get(10, TimeUnit.SECONDS));
    other.bus.publish(A, "a/g", buf("x"));
    assertEquals(1, other.bus.deleteQueue(HA, "a/g"));
  }

  @Test
  void grantAndRevokeOverThrift() throws Exception {
    TestClient c = client();
    String cred = "credential-of-application-c";
    refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.publish(cred, "c/g", buf("x")));
    c.bus.grantApplication(HA, "c", cred);
    c.bus.publish(cred, "c/g", buf("x"));
    c.bus.revokeApplication(HA, "c");
    refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.poll(cred, "c/g", 1, 0));
    refused(BusErrorCode.BAD_REQUEST, () -> c.bus.grantApplication(HA, "c", "short"));
  }

  @Test
  void theSameRoundTripWorksOverTheUnixSocket() throws Exception {
    Path socket = server.unixSocket().orElseThrow();
    assertTrue(Files.exists(socket));
    try (TestClient c = TestClient.unix(socket);
        TestClient tcp = client()) {
      c.bus.publish(A, "a/g", buf("over unix"));
      assertEquals(1, tcp.bus.length(A, "a/g"), "one bus behind both endpoints");
      assertEquals(
          List.of("over unix"),
          c.bus.poll(A, "a/g", 10, 0).stream().map(TestClient::str).toList());
      Future<List<ByteBuffer>> polled = pool.submit(() -> c.bus.poll(A, "a/g", 10, 30_000));
      awaitPoller(server.bus(), "a/g");
      tcp.bus.publish(A, "a/g", buf("woken"));
      assertEquals(
          List.of("woken"),
          polled.get(10, TimeUnit.SECONDS).stream().map(TestClient::str).toList());
      refused(BusErrorCode.UNAUTHORIZED, () -> c.bus.publish(A, "b/g", buf("x")));
    }
    server.close();
    assertFalse(Files.exists(socket), "the socket file goes away with the server");
  }

  @Test
  void everyBusExceptionCodeHasItsWireCode() {
    for (BusException.Code code : BusException.Code.values()) {
      BusError e = LocalBusService.toBusError(new BusException(code, "m"));
      assertNotNull(e.code);
      assertEquals(code.name(), e.code.name());
      assertEquals("m", e.message);
    }
  }

  @Test
  void startingTwiceOrOnATakenPortFails() throws Exception {
    assertThrows(IllegalStateException.class, server::start);
    LocalBusServer clash = new LocalBusServer(
        LocalBusSettings.defaults().withPort(server.port()), new Credentials(HA));
    IOException e = assertThrows(IOException.class, clash::start);
    assertTrue(e.getMessage().contains(String.valueOf(server.port())), e.getMessage());
  }
}
