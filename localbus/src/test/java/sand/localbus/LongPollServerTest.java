package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.localbus.LocalMessageBusTest.A;
import static sand.localbus.LocalMessageBusTest.HA;
import static sand.localbus.TestClient.buf;
import static sand.localbus.TestClient.str;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import sand.common.Credentials;
import sand.localbus.thrift.Delivery;
import sand.localbus.thrift.HostAgentMessage;

/** Long polls answered by the publisher's thread, through real sockets (TCP and the Unix socket). */
class LongPollServerTest {
  @TempDir
  Path dir;

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final List<AutoCloseable> open = new ArrayList<>();
  private LocalBusServer server;

  @BeforeEach
  void start() throws Exception {
    Credentials credentials = new Credentials(HA);
    credentials.grant("a", A);
    server = new LocalBusServer(
            LocalBusSettings.defaults()
                .withPort(0)
                .withQueueCapacity(100_000)
                .withUnixSocket(dir.resolve("bus.sock").toString()),
            credentials)
        .start();
  }

  @AfterEach
  void stop() throws Exception {
    pool.shutdownNow();
    for (AutoCloseable c : open) {
      c.close();
    }
    server.close();
  }

  private TestClient client(String transport) throws Exception {
    TestClient c = transport.equals("unix")
        ? TestClient.unix(server.unixSocket().orElseThrow())
        : TestClient.tcp(server.port());
    open.add(0, c);
    return c;
  }

  private int waitingPollers(String queue) {
    return server.bus().queueStats().stream()
        .filter(s -> s.queue().equals(queue))
        .mapToInt(QueueStats::waitingPollers)
        .sum();
  }

  private void awaitWaitingPollers(String queue, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (waitingPollers(queue) != n) {
      assertTrue(
          System.nanoTime() < deadline, "waiting pollers on " + queue + " never reached " + n);
      Thread.sleep(1);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "unix"})
  void handedOffMessagesArriveInFifoOrder(String transport) throws Exception {
    TestClient consumer = client(transport);
    TestClient producer = client(transport);
    int count = 3000;
    Future<List<String>> received = pool.submit(() -> {
      List<String> got = new ArrayList<>();
      while (got.size() < count) {
        List<ByteBuffer> batch = consumer.bus.poll(A, "a/fifo", 1, 30_000);
        assertFalse(batch.isEmpty(), "a message every time, long before the timeout");
        batch.forEach(b -> got.add(str(b)));
      }
      return got;
    });
    for (int i = 0; i < count; i++) {
      if (i % 3 == 0) {
        awaitWaitingPollers("a/fifo", 1); // often to a parked poll, sometimes to a queue
      }
      producer.bus.publish(A, "a/fifo", buf("m" + i));
    }
    List<String> got = received.get(30, TimeUnit.SECONDS);
    for (int i = 0; i < count; i++) {
      assertEquals("m" + i, got.get(i));
    }
    assertEquals(0, producer.bus.length(A, "a/fifo"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "unix"})
  void aPollerWhoseClientDisconnectedLosesNothing(String transport) throws Exception {
    TestClient gone = client(transport);
    Future<List<ByteBuffer>> abandoned = pool.submit(() -> gone.bus.poll(A, "a/g", 10, 30_000));
    awaitWaitingPollers("a/g", 1);
    gone.close();
    assertThrows(Exception.class, () -> abandoned.get(10, TimeUnit.SECONDS));
    awaitWaitingPollers("a/g", 0); // the server saw the end of stream and withdrew the poll at once
    TestClient producer = client(transport);
    producer.bus.publish(A, "a/g", buf("kept"));
    assertEquals(1, producer.bus.length(A, "a/g"));
    TestClient next = client(transport);
    assertEquals(
        List.of("kept"),
        next.bus.poll(A, "a/g", 10, 30_000).stream().map(TestClient::str).toList());
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "unix"})
  void timeoutsRacingPublishesNeitherDoubleReplyNorLose(String transport) throws Exception {
    TestClient consumer = client(transport);
    TestClient producer = client(transport);
    int count = 2000;
    Future<List<String>> received = pool.submit(() -> {
      List<String> got = new ArrayList<>();
      int empty = 0;
      while (got.size() < count) {
        List<ByteBuffer> batch =
            consumer.bus.poll(A, "a/race", 1, 1); // 1 ms: deadlines race publishes
        if (batch.isEmpty()) {
          empty++;
        }
        batch.forEach(b -> got.add(str(b)));
      }
      // A reply written twice would have left bytes that break this call's sequence check.
      assertEquals(0, consumer.bus.length(A, "a/race"));
      return got;
    });
    for (int i = 0; i < count; i++) {
      producer.bus.publish(A, "a/race", buf("m" + i));
      long pause = ThreadLocalRandom.current().nextLong(1_500_000);
      long until = System.nanoTime() + pause;
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
    }
    List<String> got = received.get(60, TimeUnit.SECONDS);
    for (int i = 0; i < count; i++) {
      assertEquals("m" + i, got.get(i));
    }
    awaitWaitingPollers("a/race", 0);
  }

  @Test
  void aBatchReachesSeveralWaitingPollersAtOnce() throws Exception {
    TestClient p1 = client("tcp");
    TestClient p2 = client("unix");
    TestClient q = client("tcp");
    TestClient agent = client("unix");
    Future<List<ByteBuffer>> first = pool.submit(() -> p1.bus.poll(A, "a/p", 1, 30_000));
    awaitWaitingPollers("a/p", 1);
    Future<List<ByteBuffer>> second = pool.submit(() -> p2.bus.poll(A, "a/p", 1, 30_000));
    awaitWaitingPollers("a/p", 2);
    Future<List<ByteBuffer>> other = pool.submit(() -> q.bus.poll(A, "a/q", 10, 30_000));
    awaitWaitingPollers("a/q", 1);
    Future<List<HostAgentMessage>> ha = pool.submit(() -> agent.bus.pollHostAgent(HA, 10, 30_000));
    awaitWaitingPollers("__ha__", 1);
    TestClient publisher = client("tcp");
    publisher.bus.publishBatch(
        A,
        List.of(
            new Delivery("a/p", buf("p0")),
            new Delivery("a/q", buf("q0")),
            new Delivery("a/p", buf("p1")),
            new Delivery("__ha__", buf("copy")),
            new Delivery("a/q", buf("q1")),
            new Delivery("a/p", buf("p2"))));
    assertEquals(
        List.of("p0"),
        first.get(10, TimeUnit.SECONDS).stream().map(TestClient::str).toList());
    assertEquals(
        List.of("p1"),
        second.get(10, TimeUnit.SECONDS).stream().map(TestClient::str).toList());
    assertEquals(
        List.of("q0", "q1"),
        other.get(10, TimeUnit.SECONDS).stream().map(TestClient::str).toList());
    List<HostAgentMessage> copies = ha.get(10, TimeUnit.SECONDS);
    assertEquals(1, copies.size());
    assertEquals("a", copies.get(0).application);
    assertEquals("copy", str(copies.get(0).payload));
    assertEquals(
        List.of("p2"),
        publisher.bus.poll(A, "a/p", 10, 0).stream().map(TestClient::str).toList(),
        "what no poller took stays queued");
  }

  @Test
  void closingTheServerAnswersWaitingPollersEmpty() throws Exception {
    TestClient c = client("tcp");
    Future<List<ByteBuffer>> polled = pool.submit(() -> c.bus.poll(A, "a/g", 10, 30_000));
    awaitWaitingPollers("a/g", 1);
    server.close();
    assertEquals(List.of(), polled.get(10, TimeUnit.SECONDS));
  }
}
