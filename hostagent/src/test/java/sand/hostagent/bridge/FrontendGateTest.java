package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.AGENT;
import static sand.hostagent.bridge.TestHost.FRONTEND;
import static sand.hostagent.bridge.TestHost.PUBLISH;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.TAGS;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.gate.Admission;
import sand.contracts.gate.GateError;
import sand.contracts.gate.GateErrorCode;

/** The host agent's side of the gate (contracts/gate.thrift) over the test host's real bus and MockProducer. */
class FrontendGateTest {
  private final TestHost h = new TestHost();
  private final String credential = TAGS.credential("gate");
  private FrontendGate gate;

  @BeforeEach
  void setUp() {
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    gate = new FrontendGate(h.bridge, h.bus, AGENT, TAGS);
  }

  @AfterEach
  void close() {
    h.close();
  }

  private List<Admission> submit(ObjectNode... events) throws GateError {
    return gate.submit(
        credential,
        Arrays.stream(events)
            .map(e -> ByteBuffer.wrap(ConditionFlag.toBytes(e)))
            .toList());
  }

  private List<String> poll(String frontend, int timeoutMs) throws GateError {
    return gate.poll(credential, frontend, 100, timeoutMs).stream()
        .map(b -> StandardCharsets.UTF_8.decode(b).toString())
        .toList();
  }

  @Test
  void anAcceptedRequestIsInTheLocalQueueAndBackedUpAndItsFrontendHearsOfTheBackup()
      throws Exception {
    poll(FRONTEND, 0); // the frontend polls this gate: it gets a mailbox
    assertEquals(List.of(Admission.ACCEPTED), submit(event("r1", RESIZE)));
    List<ObjectNode> queued = h.drain(RESIZE);
    assertEquals(List.of("r1"), TestHost.ids(queued));
    assertEquals(
        "agent.in",
        queued.get(0).path("trace").path(0).path(0).asText(),
        "the host took it: in its trace");
    List<ConditionFlag> flags = h.flags(RESIZE.topic());
    assertEquals(1, flags.size());
    assertEquals(Flag.PROCESSING, flags.get(0).flag());
    assertEquals("r1", flags.get(0).eventId());
    assertEquals(List.of("{\"backed_up\":\"r1\"}"), poll(FRONTEND, 1000));
  }

  @Test
  void onlyTheGatesCredentialIsHeard() {
    GateError e = assertThrows(GateError.class, () -> gate.submit("not-the-credential", List.of()));
    assertEquals(GateErrorCode.UNAUTHORIZED, e.code);
    e = assertThrows(GateError.class, () -> gate.poll(TAGS.credential("other"), FRONTEND, 1, 0));
    assertEquals(GateErrorCode.UNAUTHORIZED, e.code);
    e = assertThrows(GateError.class, () -> gate.poll(credential, "bad frontend!", 1, 0));
    assertEquals(GateErrorCode.BAD_REQUEST, e.code);
  }

  @Test
  void forgedMalformedAndElsewhereRequestsAreNotQueued() throws Exception {
    ObjectNode forged = event("r2", RESIZE).put("tag", TAGS.of("mall", "exec-r2", FRONTEND));
    assertEquals(List.of(Admission.REFUSED), submit(forged));
    assertEquals(
        List.of(Admission.REFUSED),
        gate.submit(credential, List.of(ByteBuffer.wrap("{not json".getBytes()))));
    assertEquals(
        List.of(Admission.NOT_HERE),
        submit(event("r3", PUBLISH)),
        "publish does not run on this host");
    assertTrue(h.drain(RESIZE).isEmpty());
    assertTrue(h.producer.history().isEmpty(), "nothing refused is backed up");
  }

  @Test
  void resultsReachAPollingFrontendInOrderAndNoneWaitForAFrontendThatNeverPolled()
      throws Exception {
    gate.deliver(
        "fe2", "{\"result\":0}".getBytes(StandardCharsets.UTF_8)); // fe2 never polled: reads Kafka
    poll(FRONTEND, 0);
    for (int i = 1; i <= 3; i++) {
      gate.deliver(FRONTEND, ("{\"result\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }
    assertEquals(
        List.of("{\"result\":1}", "{\"result\":2}", "{\"result\":3}"), poll(FRONTEND, 1000));
    assertEquals(List.of(), poll("fe2", 0), "what came before fe2's first poll went to Kafka only");
    long t0 = System.nanoTime();
    assertEquals(
        List.of(), poll(FRONTEND, 200), "an empty mailbox answers when the poll's time is up");
    assertTrue(System.nanoTime() - t0 >= 150_000_000L);
  }

  @Test
  void aFullMailboxDropsToKafkaInsteadOfBlocking() throws Exception {
    poll(FRONTEND, 0);
    for (int i = 0; i < FrontendGate.MAILBOX_CAPACITY + 5; i++) {
      gate.deliver(FRONTEND, ("{\"result\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }
    int got = 0;
    for (List<String> batch = poll(FRONTEND, 0); !batch.isEmpty(); batch = poll(FRONTEND, 0)) {
      got += batch.size();
    }
    assertEquals(FrontendGate.MAILBOX_CAPACITY, got);
  }
}
