package sand.localbus;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import sand.common.Credentials;
import sand.localbus.BusException.Code;

class LocalMessageBusTest {
  static final String HA = "host-agent-secret-credential";
  static final String A = "credential-of-application-a";
  static final String B = "credential-of-application-b";

  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final LocalMessageBus bus = newBus(LocalBusSettings.defaults()
      .withQueueCapacity(3)
      .withHostAgentQueueCapacity(4)
      .withMessageMaxBytes(100));

  static LocalMessageBus newBus(LocalBusSettings settings) {
    Credentials credentials = new Credentials(HA);
    credentials.grant("a", A);
    credentials.grant("b", B);
    return new LocalMessageBus(credentials, settings);
  }

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  static byte[] b(String s) {
    return s.getBytes(UTF_8);
  }

  static String s(byte[] b) {
    return new String(b, UTF_8);
  }

  static BusException refused(Code code, Executable call) {
    BusException e = assertThrows(BusException.class, call);
    assertEquals(code, e.code(), e.getMessage());
    return e;
  }

  /** Wait until a poller blocks on {@code queue} (or fail after 10 s). */
  static void awaitPoller(LocalMessageBus bus, String queue) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (bus.queueStats().stream()
        .noneMatch(s -> s.queue().equals(queue) && s.waitingPollers() > 0)) {
      assertTrue(System.nanoTime() < deadline, "no poller ever blocked on " + queue);
      Thread.sleep(2);
    }
  }

  @Test
  void roundTripKeepsTheArray() throws Exception {
    byte[] payload = b("event");
    bus.publish(A, "a/g", payload);
    assertEquals(1, bus.length(A, "a/g"));
    List<byte[]> got = bus.poll(A, "a/g", 10, 0);
    assertEquals(1, got.size());
    assertSame(payload, got.get(0), "no copy in process");
    assertEquals(0, bus.length(A, "a/g"));
  }

  @Test
  void lengthOfAMissingQueueIsZeroAndDoesNotCreateIt() {
    assertEquals(0, bus.length(A, "a/never"));
    assertFalse(bus.queueLengths().containsKey("a/never"));
  }

  @Test
  void unknownCredentialIsRefusedForEveryOperation() {
    for (String cred : new String[] {"no-such-credential-at-all", "", null}) {
      List<Executable> calls = List.of(
          () -> bus.publish(cred, "a/g", b("x")),
          () -> bus.publishBatch(cred, List.of(new Delivery("a/g", b("x")))),
          () -> bus.publishBatch(cred, List.of()),
          () -> bus.poll(cred, "a/g", 1, 0),
          () -> bus.pollHostAgent(cred, 1, 0),
          () -> bus.length(cred, "a/g"),
          () -> bus.deleteQueue(cred, "a/g"),
          () -> bus.grantApplication(cred, "c", "credential-of-application-c"),
          () -> bus.revokeApplication(cred, "a"));
      for (Executable call : calls) {
        BusException e = refused(Code.UNAUTHORIZED, call);
        if (cred != null && !cred.isEmpty()) {
          assertFalse(
              e.getMessage().contains(cred), "the credential never appears: " + e.getMessage());
        }
      }
    }
    assertEquals(0, bus.length(HA, "a/g"), "nothing was published");
  }

  @Test
  void anApplicationReachesOnlyItsOwnQueues() throws Exception {
    bus.publish(B, "b/g", b("b's"));
    List<Executable> calls = List.of(
        () -> bus.publish(A, "b/g", b("x")),
        () -> bus.publishBatch(A, List.of(new Delivery("b/g", b("x")))),
        () -> bus.poll(A, "b/g", 1, 0),
        () -> bus.length(A, "b/g"),
        () -> bus.deleteQueue(A, "b/g"));
    for (Executable call : calls) {
      BusException e = refused(Code.UNAUTHORIZED, call);
      assertTrue(e.getMessage().contains("'b/g'"), "names the queue: " + e.getMessage());
      assertTrue(e.getMessage().contains("application a"), "names the caller: " + e.getMessage());
      assertFalse(e.getMessage().contains(A), "never the credential: " + e.getMessage());
    }
    assertEquals(
        List.of("b's"),
        bus.poll(B, "b/g", 10, 0).stream().map(LocalMessageBusTest::s).toList());
  }

  @Test
  void anApplicationMayPublishToTheHostAgentQueueButNotReadIt() {
    bus.publish(A, "__ha__", b("copy"));
    refused(Code.UNAUTHORIZED, () -> bus.poll(A, "__ha__", 1, 0));
    refused(Code.UNAUTHORIZED, () -> bus.pollHostAgent(A, 1, 0));
    refused(Code.UNAUTHORIZED, () -> bus.length(A, "__ha__"));
    refused(Code.UNAUTHORIZED, () -> bus.deleteQueue(A, "__ha__"));
    refused(Code.UNAUTHORIZED, () -> bus.grantApplication(A, "a", "another-credential-for-a"));
    refused(Code.UNAUTHORIZED, () -> bus.revokeApplication(A, "b"));
    refused(Code.UNAUTHORIZED, () -> bus.deleteApplicationQueues(A, "b"));
    assertEquals(1, bus.length(HA, "__ha__"));
  }

  @Test
  void theBusStampsThePublishingApplicationOnHostAgentMessages() throws Exception {
    bus.publish(A, "__ha__", b("{\"application\": \"b\"}"));
    bus.publishBatch(
        B, List.of(new Delivery("b/next", b("out")), new Delivery("__ha__", b("{\"app\":\"a\"}"))));
    bus.publish(HA, "__ha__", b("own"));
    List<HostAgentMessage> got = bus.pollHostAgent(HA, 10, 0);
    assertEquals(
        List.of("a", "b", HostAgentMessage.FROM_HOST_AGENT),
        got.stream().map(HostAgentMessage::application).toList());
    assertEquals("{\"application\": \"b\"}", s(got.get(0).payload()));
  }

  @Test
  void theHostAgentReachesEveryQueue() throws Exception {
    bus.publish(HA, "a/g", b("1"));
    bus.publish(HA, "b/g", b("2"));
    assertEquals(1, bus.length(HA, "a/g"));
    assertEquals("2", s(bus.poll(HA, "b/g", 1, 0).get(0)));
    assertEquals(1, bus.deleteQueue(HA, "a/g"));
  }

  @Test
  void aFullQueueRefusesAndKeepsWhatItHas() throws Exception {
    for (int i = 0; i < 3; i++) {
      bus.publish(A, "a/g", b("m" + i));
    }
    BusException e = refused(Code.QUEUE_FULL, () -> bus.publish(A, "a/g", b("m3")));
    assertTrue(e.getMessage().contains("'a/g'"), e.getMessage());
    assertEquals(
        List.of("m0", "m1", "m2"),
        bus.poll(A, "a/g", 10, 0).stream().map(LocalMessageBusTest::s).toList());
    for (int i = 0; i < 4; i++) {
      bus.publish(A, "__ha__", b("h" + i));
    }
    refused(Code.QUEUE_FULL, () -> bus.publish(B, "__ha__", b("h4")));
    assertEquals(4, bus.length(HA, "__ha__"));
  }

  @Test
  void aBatchIsAllOrNothing() throws Exception {
    bus.publish(A, "a/full", b("1"));
    bus.publish(A, "a/full", b("2"));
    bus.publish(A, "a/full", b("3"));
    refused(
        Code.QUEUE_FULL,
        () -> bus.publishBatch(
            A,
            List.of(
                new Delivery("a/x", b("x")),
                new Delivery("__ha__", b("copy")),
                new Delivery("a/full", b("4")))));
    assertEquals(0, bus.length(A, "a/x"));
    assertEquals(0, bus.length(HA, "__ha__"));
    assertEquals(3, bus.length(A, "a/full"));

    // Several deliveries to one queue count together: 1 queued + 3 > capacity 3.
    bus.publish(A, "a/y", b("0"));
    refused(
        Code.QUEUE_FULL,
        () -> bus.publishBatch(
            A,
            List.of(
                new Delivery("a/y", b("1")),
                new Delivery("a/z", b("z")),
                new Delivery("a/y", b("2")),
                new Delivery("a/y", b("3")))));
    assertEquals(1, bus.length(A, "a/y"));
    assertEquals(0, bus.length(A, "a/z"));

    // A batch that could never fit is a bad request, not a reason to retry.
    BusException e = refused(
        Code.BAD_REQUEST,
        () -> bus.publishBatch(
            A,
            List.of(
                new Delivery("a/w", b("1")),
                new Delivery("a/w", b("2")),
                new Delivery("a/w", b("3")),
                new Delivery("a/w", b("4")))));
    assertTrue(e.getMessage().contains("split the batch"), e.getMessage());

    // Refused deliveries of other kinds enqueue nothing either.
    refused(
        Code.UNAUTHORIZED,
        () ->
            bus.publishBatch(A, List.of(new Delivery("a/x", b("x")), new Delivery("b/g", b("x")))));
    refused(
        Code.TOO_LARGE,
        () -> bus.publishBatch(
            A, List.of(new Delivery("a/x", b("x")), new Delivery("a/x", new byte[101]))));
    refused(
        Code.BAD_REQUEST,
        () -> bus.publishBatch(
            A, List.of(new Delivery("a/x", b("x")), new Delivery("a/x/y", b("x")))));
    refused(Code.BAD_REQUEST, () -> bus.publishBatch(A, List.of(new Delivery("a/x", null))));
    refused(Code.BAD_REQUEST, () -> bus.publishBatch(A, null));
    assertEquals(0, bus.length(A, "a/x"));
  }

  @Test
  void aBatchKeepsOrderPerQueueAndReachesEveryTarget() throws Exception {
    bus.publishBatch(
        A,
        List.of(
            new Delivery("a/p", b("1")),
            new Delivery("a/q", b("x")),
            new Delivery("a/p", b("2")),
            new Delivery("__ha__", b("copy"))));
    assertEquals(
        List.of("1", "2"),
        bus.poll(A, "a/p", 10, 0).stream().map(LocalMessageBusTest::s).toList());
    assertEquals(1, bus.length(A, "a/q"));
    assertEquals("a", bus.pollHostAgent(HA, 10, 0).get(0).application());
    bus.publishBatch(A, List.of());
  }

  @Test
  void aBatchWakesThePollersOfEveryTarget() throws Exception {
    CompletableFuture<List<byte[]>> p = poll(A, "a/p", 30_000);
    CompletableFuture<List<HostAgentMessage>> h = CompletableFuture.supplyAsync(
        () -> {
          try {
            return bus.pollHostAgent(HA, 10, 30_000);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        },
        pool);
    awaitPoller(bus, "a/p");
    awaitPoller(bus, "__ha__");
    bus.publishBatch(A, List.of(new Delivery("a/p", b("next")), new Delivery("__ha__", b("copy"))));
    assertEquals("next", s(p.get(10, TimeUnit.SECONDS).get(0)));
    assertEquals("copy", s(h.get(10, TimeUnit.SECONDS).get(0).payload()));
  }

  @Test
  void payloadAboveTheLimitIsTooLarge() {
    bus.publish(A, "a/g", new byte[100]);
    BusException e = refused(Code.TOO_LARGE, () -> bus.publish(A, "a/g", new byte[101]));
    assertTrue(
        e.getMessage().contains("101") && e.getMessage().contains("message.max.bytes"),
        e.getMessage());
    refused(Code.TOO_LARGE, () -> bus.publish(A, "__ha__", new byte[101]));
    refused(Code.BAD_REQUEST, () -> bus.publish(A, "a/g", null));
    assertEquals(1, bus.length(A, "a/g"));
  }

  @Test
  void badQueueNamesAreBadRequestsForEveryOperation() {
    List<Consumer<String>> ops = List.of(
        q -> bus.publish(A, q, b("x")),
        q -> {
          try {
            bus.poll(A, q, 1, 0);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        },
        q -> bus.length(A, q),
        q -> bus.deleteQueue(A, q));
    for (Consumer<String> op : ops) {
      for (String bad : new String[] {"a", "a/", "a/b/c", "a/.hidden", "", null}) {
        BusException e = refused(Code.BAD_REQUEST, () -> op.accept(bad));
        assertTrue(e.getMessage().contains("<application>/<grain>"), e.getMessage());
      }
    }
  }

  @Test
  void pollWaitsForAQueueThatDoesNotExistYet() throws Exception {
    CompletableFuture<List<byte[]>> polled = poll(A, "a/later", 30_000);
    awaitPoller(bus, "a/later");
    bus.publish(A, "a/later", b("first"));
    assertEquals("first", s(polled.get(10, TimeUnit.SECONDS).get(0)));
  }

  @Test
  void pollClampsItsArguments() throws Exception {
    LocalMessageBus big = newBus(LocalBusSettings.defaults());
    for (int i = 0; i < 1003; i++) {
      big.publish(A, "a/g", b("m" + i));
    }
    assertEquals(1, big.poll(A, "a/g", 0, 0).size());
    assertEquals(1, big.poll(A, "a/g", -5, -5).size());
    assertEquals(1000, big.poll(A, "a/g", 1_000_000, Integer.MAX_VALUE).size());
    assertEquals(
        List.of("m1002"),
        big.poll(A, "a/g", 10, 0).stream().map(LocalMessageBusTest::s).toList());
    assertEquals(List.of(), big.poll(A, "a/g", 10, -1), "negative timeout does not wait");
  }

  @Test
  void deleteWakesPollersEmptyAndDropsMessages() throws Exception {
    CompletableFuture<List<byte[]>> polled = poll(A, "a/g", 30_000);
    awaitPoller(bus, "a/g");
    assertEquals(0, bus.deleteQueue(A, "a/g"));
    assertEquals(List.of(), polled.get(10, TimeUnit.SECONDS));
    bus.publish(A, "a/g", b("after"));
    bus.publish(A, "a/g", b("after2"));
    assertEquals(2, bus.deleteQueue(A, "a/g"));
    assertEquals(0, bus.length(A, "a/g"));
    bus.publish(A, "a/g", b("again"));
    assertEquals(
        "again", s(bus.poll(A, "a/g", 1, 0).get(0)), "a deleted queue comes back on demand");
  }

  @Test
  void grantAndRevokeApplications() {
    String c = "credential-of-application-c";
    refused(Code.UNAUTHORIZED, () -> bus.publish(c, "c/g", b("x")));
    bus.grantApplication(HA, "c", c);
    bus.publish(c, "c/g", b("x"));
    bus.revokeApplication(HA, "c");
    refused(Code.UNAUTHORIZED, () -> bus.publish(c, "c/g", b("x")));
    refused(Code.BAD_REQUEST, () -> bus.grantApplication(HA, "c/d", c));
    refused(Code.BAD_REQUEST, () -> bus.grantApplication(HA, "c", "short"));
    refused(Code.BAD_REQUEST, () -> bus.grantApplication(HA, "c", HA));
  }

  @Test
  void deleteApplicationQueuesDropsOnlyThatApplication() {
    bus.publish(A, "a/g1", b("1"));
    bus.publish(A, "a/g2", b("2"));
    bus.publish(B, "b/g", b("3"));
    assertEquals(2, bus.deleteApplicationQueues(HA, "a"));
    assertEquals(Map.of("__ha__", 0, "b/g", 1), bus.queueLengths());
  }

  @Test
  void statsCountPublishedAndPolled() throws Exception {
    bus.publish(A, "a/g", b("1"));
    bus.publish(A, "a/g", b("2"));
    bus.poll(A, "a/g", 1, 0);
    QueueStats s = bus.queueStats().stream()
        .filter(q -> q.queue().equals("a/g"))
        .findFirst()
        .orElseThrow();
    assertEquals(new QueueStats("a/g", 1, 3, 2, 1, 0), s);
    assertEquals("__ha__", bus.queueStats().get(0).queue());
  }

  @Test
  void concurrentBatchesOverlappingQueuesNeitherDeadlockNorLose() throws Exception {
    LocalMessageBus big = newBus(LocalBusSettings.defaults().withQueueCapacity(1_000_000));
    List<CompletableFuture<Void>> runs = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      boolean reversed = t % 2 == 1;
      runs.add(CompletableFuture.runAsync(
          () -> {
            for (int i = 0; i < 2000; i++) {
              Delivery x = new Delivery("a/x", b("x"));
              Delivery y = new Delivery("a/y", b("y"));
              big.publishBatch(A, reversed ? List.of(y, x) : List.of(x, y));
            }
          },
          pool));
    }
    CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    assertEquals(8000, big.length(A, "a/x"));
    assertEquals(8000, big.length(A, "a/y"));
  }

  private CompletableFuture<List<byte[]>> poll(String cred, String queue, int timeoutMs) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return bus.poll(cred, queue, 10, timeoutMs);
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        },
        pool);
  }
}
