package sand.frontend;

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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
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
    public List<ByteBuffer> poll(String credential, String frontend, int maxMessages, int timeoutMs) {
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
  private ThriftServer server;
  private AgentGates gates;

  @BeforeEach
  void setUp() throws Exception {
    server = ThriftServer.tcp("gate-test", new HostAgentGate.Processor<>(fake), "127.0.0.1", 0, 16).start();
    InMemoryClusterStore store = new InMemoryClusterStore();
    Instant now = Instant.now();
    store.upsertHost(new HostInfo("h1", "", "", "127.0.0.1:" + server.port(), 2, now, now));
    gates = new AgentGates(store, Clock.systemUTC(), Duration.ofMinutes(1), "fe1", CREDENTIAL, results::add,
        fallback::add);
    gates.start();
  }

  @AfterEach
  void tearDown() throws Exception {
    gates.stop();
    server.close();
  }

  private static Event request(String id) {
    return Event.request(id, "exec-" + id, "a0000000000001", "entry", "fe1", TextNode.valueOf("v"), 1L, "tag");
  }

  private static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
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
    byte[] result = "{\"id\":\"o1\",\"execution_id\":\"exec-r1\",\"grain\":\"end\"}".getBytes(StandardCharsets.UTF_8);
    fake.mailbox.add(result);
    eventually("the result is handed on", () -> results.size() == 1);
    assertEquals(new String(result, StandardCharsets.UTF_8), new String(results.get(0), StandardCharsets.UTF_8));
    assertTrue(fallback.isEmpty());
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
    assertFalse(gates.submit(request("r6"), List.of("h1")), "a gate that is down takes nothing for a while");
  }
}
