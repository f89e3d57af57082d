package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.TextNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.InMemoryClusterStore;
import sand.common.ThriftServer;
import sand.contracts.Event;
import sand.contracts.gate.Admission;
import sand.contracts.gate.GateError;
import sand.contracts.gate.GateErrorCode;
import sand.contracts.gate.HostAgentGate;

/** The frontend's side of the gate against a fake host agent gate served by a real Thrift server on loopback. */
class AgentGatesTest {
  private static final String CREDENTIAL = "gate-credential-0123456789";

  /** A host agent's gate: records what it is handed, answers polls from a mailbox the test fills. */
  static final class FakeGate implements HostAgentGate.Iface {
    final List<Event> submitted = new CopyOnWriteArrayList<>();
    final LinkedBlockingQueue<byte[]> mailbox = new LinkedBlockingQueue<>();
    volatile Admission answer = Admission.ACCEPTED;
    final java.util.Map<String, String> answers = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void answer(String credential, String requestId, ByteBuffer reply) throws GateError {
      if (!CREDENTIAL.equals(credential)) {
        throw new GateError(GateErrorCode.UNAUTHORIZED, "wrong credential");
      }
      byte[] bytes = new byte[reply.remaining()];
      reply.get(bytes);
      answers.put(requestId, new String(bytes, StandardCharsets.UTF_8));
    }

    @Override
    public List<Admission> submit(String credential, List<ByteBuffer> events) throws GateError {
      if (!CREDENTIAL.equals(credential)) {
        throw new GateError(GateErrorCode.UNAUTHORIZED, "wrong credential");
      }
      List<Admission> out = new ArrayList<>();
      for (ByteBuffer b : events) {
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        submitted.add(Event.parse(bytes));
        out.add(answer);
      }
      return out;
    }

    @Override
    public List<ByteBuffer> poll(
        String credential, String frontend, int maxMessages, int timeoutMs) {
      try {
        byte[] m = mailbox.poll(Math.min(timeoutMs, 200), TimeUnit.MILLISECONDS);
        return m == null ? List.of() : List.of(ByteBuffer.wrap(m));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return List.of();
      }
    }
  }

  private final FakeGate fake = new FakeGate();
  private final List<byte[]> results = new CopyOnWriteArrayList<>();
  private final List<Event> fallback = new CopyOnWriteArrayList<>();
  /** How many of the next puts into Kafka fail (Kafka failing over). */
  private final AtomicInteger kafkaRefuses = new AtomicInteger();

  private ThriftServer server;
  private InMemoryClusterStore store;
  private AgentGates gates;

  @BeforeEach
  void setUp() throws Exception {
    server = ThriftServer.tcp("gate-test", new HostAgentGate.Processor<>(fake), "127.0.0.1", 0, 16)
        .start();
    store = new InMemoryClusterStore();
    Instant now = Instant.now();
    store.upsertHost(new HostInfo("h1", "", "", "127.0.0.1:" + server.port(), 2, 0, now, now));
    gates = gates(Duration.ofMinutes(5));
  }

  private AgentGates gates(Duration liveAckTimeout) throws Exception {
    AgentGates g = new AgentGates(
        store,
        Clock.systemUTC(),
        Duration.ofMinutes(1),
        "fe1",
        () -> CREDENTIAL,
        results::add,
        e -> {
          if (kafkaRefuses.getAndDecrement() > 0) {
            return CompletableFuture.failedFuture(new IllegalStateException("NOT_ENOUGH_REPLICAS"));
          }
          fallback.add(e);
          return CompletableFuture.completedFuture(null);
        },
        liveAckTimeout);
    g.start();
    return g;
  }

  @AfterEach
  void tearDown() throws Exception {
    gates.stop();
    server.close();
  }

  private static Event request(String id) {
    return Event.request(
        id, "exec-" + id, "a0000000000001", "entry", "fe1", TextNode.valueOf("v"), 1L, "tag");
  }

  private static void eventually(String what, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 10 s: " + what);
      Thread.sleep(10);
    }
  }

  @Test
  void anAcceptedRequestWaitsForItsBackupAckAndAResultReachesTheFrontend() throws Exception {
    assertTrue(gates.submit(request("r1"), List.of("h1")));
    assertEquals(List.of("r1"), fake.submitted.stream().map(Event::id).toList());
    assertEquals(1, gates.unacked());
    fake.mailbox.add("{\"backed_up\":\"r1\"}".getBytes(StandardCharsets.UTF_8));
    eventually("the backup ack clears the request", () -> gates.unacked() == 0);
    byte[] result = "{\"id\":\"o1\",\"execution_id\":\"exec-r1\",\"grain\":\"end\"}"
        .getBytes(StandardCharsets.UTF_8);
    fake.mailbox.add(result);
    eventually("the result is handed on", () -> results.size() == 1);
    assertEquals(
        new String(result, StandardCharsets.UTF_8),
        new String(results.get(0), StandardCharsets.UTF_8));
    assertTrue(fallback.isEmpty());
  }

  @Test
  void requestsGoFirstWhereTheirApplicationQueuesLeastAndInTurnWhereNoneQueues() {
    String app = "a0000000000001";
    List<String> hosts = List.of("h2", "h3", "h4");
    assertEquals(List.of("h3", "h4", "h2"), gates.byLoad(app, hosts, 1), "no report: in turn");
    store
        .hostLoads()
        .report(new sand.cluster.HostLoads.HostLoad(
            "h2",
            new sand.contracts.LoadReport(
                    50,
                    0,
                    0,
                    1,
                    0,
                    java.util.Map.of(app, new sand.contracts.LoadReport.AppLoad(10, 2, 5, false)))
                .toJson(),
            Instant.now()));
    gates.readHosts(); // as a request does once a second
    assertEquals(List.of("h3", "h4", "h2"), gates.byLoad(app, hosts, 0), "h2 holds a queue: last");
    assertEquals(List.of("h4", "h3", "h2"), gates.byLoad(app, List.of("h4", "h2", "h3"), 0));
    assertEquals(List.of("h2", "h3", "h4"), gates.byLoad("another", hosts, 0), "not its queue");
  }

  @Test
  void onlyTheHostAgentsOneFieldAcknowledgementIsTakenForOneWithoutAParse() {
    assertEquals("r1", AgentGates.ackedId(bytes("{\"backed_up\":\"r1\"}")));
    assertEquals("0f3a", AgentGates.ackedId(bytes("{\"backed_up\":\"0f3a\"}")));
    // a result is handed on whole (Results parses it and checks its tag), whatever fields it
    // carries
    assertEquals(
        null,
        AgentGates.ackedId(bytes("{\"id\":\"o1\",\"execution_id\":\"e\",\"grain\":\"end\"}")));
    assertEquals(
        null, AgentGates.ackedId(bytes("{\"backed_up\":\"r1\",\"id\":\"o1\",\"grain\":\"end\"}")));
    assertEquals(null, AgentGates.ackedId(bytes("{\"backed_up\":\"r\\\"1\"}")));
    assertEquals(null, AgentGates.ackedId(bytes("{\"backed_up\":\"\"")));
    assertEquals(null, AgentGates.ackedId(bytes("")));
  }

  @Test
  void aResultCarryingABackedUpFieldIsAResultNotAnAcknowledgement() throws Exception {
    assertTrue(gates.submit(request("r1"), List.of("h1")));
    byte[] forged =
        bytes("{\"backed_up\":\"r1\",\"id\":\"o1\",\"execution_id\":\"x\",\"grain\":\"end\"}");
    fake.mailbox.add(forged);
    eventually("handed on as a result", () -> results.size() == 1);
    assertEquals(
        1, gates.unacked(), "a grain's output cannot acknowledge another request's backup");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aRequestNoAgentTakesIsTheCallersToSendThroughKafka() {
    fake.answer = Admission.NOT_HERE;
    assertFalse(gates.submit(request("r2"), List.of("h1")));
    fake.answer = Admission.REFUSED;
    assertFalse(gates.submit(request("r3"), List.of("h1")));
    assertFalse(gates.submit(request("r4"), List.of("unknown-host")));
    assertEquals(0, gates.unacked());
    assertTrue(fallback.isEmpty(), "not taken: the caller sends it, the gates do not");
  }

  @Test
  void whenTheAgentGoesAwayItsUnacknowledgedRequestsGoToKafka() throws Exception {
    assertTrue(gates.submit(request("r5"), List.of("h1")));
    server.close();
    eventually("the unacknowledged request is put into Kafka", () -> fallback.size() == 1);
    assertEquals("r5", fallback.get(0).id());
    assertEquals(0, gates.unacked());
    assertFalse(
        gates.submit(request("r6"), List.of("h1")),
        "a gate that is down takes nothing for a while");
  }

  @Test
  void aRequestKafkaDidNotTakeIsPutAgainUntilItDoes() throws Exception {
    kafkaRefuses.set(2);
    assertTrue(gates.submit(request("r7"), List.of("h1")));
    server.close();
    eventually("Kafka takes the request at the third put", () -> fallback.size() == 1);
    assertEquals("r7", fallback.get(0).id());
    assertEquals(-1, kafkaRefuses.get(), "three puts: two refused, one taken");
    assertEquals(0, gates.unacked());
  }

  @Test
  void anAgentThatComesBackOnItsAddressGetsRequestsAgain() throws Exception {
    int port = server.port();
    // Requests at once: the frontend holds several connections to the agent.
    List<Thread> callers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      String id = "r8-" + i;
      Thread t = new Thread(() -> gates.submit(request(id), List.of("h1")));
      t.start();
      callers.add(t);
    }
    for (Thread t : callers) {
      t.join();
    }
    for (Event e : fake.submitted) {
      fake.mailbox.add(("{\"backed_up\":\"" + e.id() + "\"}").getBytes(StandardCharsets.UTF_8));
    }
    eventually("the backup acks clear the requests", () -> gates.unacked() == 0);
    server.close();
    Thread.sleep(1500); // the poller sees it gone
    FakeGate restarted = new FakeGate();
    server = ThriftServer.tcp(
            "gate-test", new HostAgentGate.Processor<>(restarted), "127.0.0.1", port, 16)
        .start();
    // The connections to the old agent are gone with it: within the 2 s a failed call keeps a gate
    // out of use,
    // the agent takes requests again (not one stale connection after another, 2 s each).
    long since = System.nanoTime();
    eventually(
        "the restarted agent takes a request",
        () -> gates.submit(request("r9-" + System.nanoTime()), List.of("h1")));
    assertTrue(
        System.nanoTime() - since < TimeUnit.SECONDS.toNanos(4),
        "took " + (System.nanoTime() - since) / 1_000_000 + " ms");
    assertEquals(1, restarted.submitted.size());
  }

  @Test
  void aLiveAgentSlowToBackUpKeepsItsRequestAndOnlyALostAcknowledgementSendsItToKafka()
      throws Exception {
    gates.stop();
    gates = gates(Duration.ofSeconds(3));
    assertTrue(gates.submit(request("r10"), List.of("h1")));
    // Kafka is slow to take the agent's backup (failing over): the agent, alive and polled, still
    // holds the
    // request; putting it into Kafka here too would run it twice.
    Thread.sleep(1500);
    assertTrue(fallback.isEmpty(), "put into Kafka while its live agent held it");
    assertEquals(1, gates.unacked());
    // No acknowledgement at all (lost): after liveAckTimeout the frontend puts it into Kafka
    // itself.
    eventually(
        "the request whose acknowledgement never came is put into Kafka",
        () -> fallback.size() == 1);
    assertEquals("r10", fallback.get(0).id());
  }

  @Test
  void aGrainsManagementRequestRunsHereAndIsAnsweredThroughTheGate() throws Exception {
    List<String> ran = new CopyOnWriteArrayList<>();
    gates.useManagement(new AgentGates.Management() {
      @Override
      public byte[] run(String appId, com.fasterxml.jackson.databind.JsonNode request) {
        ran.add(appId + " " + request.path("action").asText());
        return "{\"status\":\"success\",\"data\":{}}".getBytes(StandardCharsets.UTF_8);
      }

      @Override
      public byte[] refusal(String why) {
        return why.getBytes(StandardCharsets.UTF_8);
      }
    });
    assertTrue(gates.submit(request("r20"), List.of("h1"))); // the poller of h1 starts
    fake.mailbox.add(("{\"management\":{\"id\":\"m1\",\"app\":\"a0000000000001\","
            + "\"request\":{\"action\":\"addTrigger\",\"data\":{}}}}")
        .getBytes(StandardCharsets.UTF_8));
    eventually("the answer reaches the agent", () -> fake.answers.containsKey("m1"));
    assertEquals("{\"status\":\"success\",\"data\":{}}", fake.answers.get("m1"));
    assertEquals(List.of("a0000000000001 addTrigger"), ran);
    assertTrue(results.isEmpty(), "a management request is not a result");
  }

  @Test
  void anAgentFoundAtAnotherAddressLostWhatItsOldSelfHeld() throws Exception {
    assertTrue(gates.submit(request("r11"), List.of("h1")));
    FakeGate moved = new FakeGate();
    ThriftServer other = ThriftServer.tcp(
            "gate-test-2", new HostAgentGate.Processor<>(moved), "127.0.0.1", 0, 16)
        .start();
    try {
      Instant now = Instant.now();
      store.upsertHost(new HostInfo("h1", "", "", "127.0.0.1:" + other.port(), 2, 0, now, now));
      Thread.sleep(1100); // the hosts are read again at most every second
      eventually(
          "a request reaches the agent at its new address",
          () -> gates.submit(request("r12-" + System.nanoTime()), List.of("h1"))
              && !moved.submitted.isEmpty());
      eventually("the request the old address held is put into Kafka", () -> fallback.size() == 1);
      assertEquals("r11", fallback.get(0).id());
    } finally {
      other.close();
    }
  }
}
