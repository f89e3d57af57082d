package sand.localbus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.common.Credentials;
import sand.localbus.BusException.Code;
import sand.localbus.internal.LocalQueue;
import sand.localbus.internal.Waiter;

/** Each application's share of the local bus, and LQ_HA read fairly (docs/local-bus.md "Quotas"). */
class BusQuotaTest {
  private static final String AGENT = "agent-credential-0123456789";
  private static final String A = "cred-of-a-0123456789";
  private static final String B = "cred-of-b-0123456789";

  /**
   * 400-byte messages; a's and b's share 1200 bytes each, 1800 for the bus, 3 queues, 5 in LQ_HA. A message
   * counts its payload plus 64 bytes ({@link LocalMessageBus#MESSAGE_OVERHEAD_BYTES}).
   */
  private static LocalMessageBus bus() {
    Credentials c = new Credentials(AGENT);
    c.grant("a", A);
    c.grant("b", B);
    return new LocalMessageBus(
        c,
        LocalBusSettings.defaults().withMessageMaxBytes(400).withQuotas(1200, 1800, 3, 5),
        "bus.");
  }

  private static byte[] bytes(int n) {
    return new byte[n];
  }

  private static BusException refused(Code code, Runnable call) {
    BusException e = assertThrows(BusException.class, call::run);
    assertEquals(code, e.code(), e.getMessage());
    return e;
  }

  @Test
  void aPublishPastTheApplicationsShareIsRefusedAndNothingIsEnqueued() throws Exception {
    LocalMessageBus bus = bus();
    for (int i = 0; i < 3; i++) {
      bus.publish(A, "a/g", bytes(300));
    }
    BusException e = refused(Code.QUOTA_EXCEEDED, () -> bus.publish(A, "a/g", bytes(300)));
    assertTrue(
        e.getMessage().contains("application a has 1092 bytes waiting")
            && e.getMessage().contains("bus.app.queued.max.bytes"),
        e.getMessage());
    refused(
        Code.QUOTA_EXCEEDED,
        () -> bus.publishBatch(
            A, List.of(new Delivery("a/h", bytes(50)), new Delivery("a/g", bytes(60)))));
    assertEquals(3, bus.length(A, "a/g"));
    assertEquals(0, bus.length(A, "a/h"), "nothing of the refused batch was enqueued");
    assertEquals(
        new ApplicationUsage(1092, 3, 0, 1),
        bus.applicationUsage().get("a"),
        "a/h was never created");

    bus.poll(A, "a/g", 1, 0); // taking one makes room
    bus.publish(A, "a/g", bytes(300));
    assertEquals(1092, bus.applicationUsage().get("a").bytes());
  }

  @Test
  void everyMessageCostsTheHeapMoreThanItsPayloadSoEmptyOnesAreBoundedToo() {
    LocalMessageBus bus = bus();
    int accepted = 0;
    BusException refusal = null;
    while (refusal == null && accepted < 100) {
      try {
        bus.publish(A, "a/g", bytes(0));
        accepted++;
      } catch (BusException e) {
        refusal = e;
      }
    }
    assertTrue(
        refusal != null && refusal.code() == Code.QUOTA_EXCEEDED,
        "100 empty messages were accepted");
    assertEquals(1200 / LocalMessageBus.MESSAGE_OVERHEAD_BYTES, accepted);
    assertEquals(
        accepted * LocalMessageBus.MESSAGE_OVERHEAD_BYTES,
        bus.applicationUsage().get("a").bytes());
  }

  @Test
  void theHostAgentsPublishesCountForTheApplicationTheyGoTo() {
    LocalMessageBus bus = bus();
    bus.publish(AGENT, "a/g", bytes(400));
    bus.publish(AGENT, "a/g", bytes(400));
    refused(Code.QUOTA_EXCEEDED, () -> bus.publish(AGENT, "a/g", bytes(400)));
    bus.publish(B, "b/g", bytes(400)); // b's share is its own
  }

  @Test
  void theWholeBusHasALimitWhateverTheNumberOfApplications() {
    LocalMessageBus bus = bus();
    bus.publish(A, "a/g", bytes(400));
    bus.publish(A, "a/g", bytes(400));
    bus.publish(B, "b/g", bytes(400));
    BusException e = refused(Code.QUOTA_EXCEEDED, () -> bus.publish(B, "b/g", bytes(400)));
    assertTrue(e.getMessage().contains("bus.queued.max.bytes"), e.getMessage());
    assertEquals(1392, bus.queuedBytes());
  }

  @Test
  void accountsReturnToZeroWhateverWayMessagesLeave() throws Exception {
    LocalMessageBus bus = bus();
    bus.publish(A, "a/g", bytes(100));
    bus.publish(A, "a/g", bytes(100));
    bus.publish(A, LocalMessageBus.HOST_AGENT_QUEUE, bytes(100));
    bus.publishBatch(
        A,
        List.of(
            new Delivery("a/h", bytes(10)),
            new Delivery(LocalMessageBus.HOST_AGENT_QUEUE, bytes(10))));
    assertEquals(new ApplicationUsage(640, 5, 2, 2), bus.applicationUsage().get("a"));
    bus.poll(A, "a/g", 10, 0);
    bus.pollHostAgent(AGENT, 10, 0);
    bus.deleteQueue(A, "a/h");
    assertEquals(new ApplicationUsage(0, 0, 0, 1), bus.applicationUsage().get("a"));
    bus.deleteApplicationQueues(AGENT, "a");
    assertEquals(Map.of(), bus.applicationUsage());
    assertEquals(0, bus.queuedBytes());
  }

  /** A remote poller whose reply can or cannot be written. */
  static final class Poll extends Waiter<byte[]> {
    final List<List<byte[]>> got = new ArrayList<>();
    final boolean writable;

    Poll(boolean writable) {
      super(10, Long.MAX_VALUE);
      this.writable = writable;
    }

    @Override
    protected boolean deliver(List<byte[]> messages) {
      got.add(messages);
      return writable;
    }
  }

  @Test
  void handOffsToParkedPollsAndPutBacksAreAccounted() throws Exception {
    LocalMessageBus bus = bus();
    @SuppressWarnings("unchecked")
    LocalQueue<byte[]> q = (LocalQueue<byte[]>) bus.queueToPoll(A, "a/g");
    Poll parked = new Poll(true);
    q.pollOrPark(parked, true);
    bus.publish(A, "a/g", bytes(300)); // handed straight to the parked poll
    assertEquals(1, parked.got.size());
    assertEquals(0, bus.applicationUsage().get("a").bytes());

    Poll dead = new Poll(false); // its connection is gone: the message goes back to the queue
    q.pollOrPark(dead, true);
    bus.publish(A, "a/g", bytes(300));
    assertEquals(1, dead.got.size());
    assertEquals(1, bus.length(A, "a/g"));
    assertEquals(364, bus.applicationUsage().get("a").bytes());
    bus.poll(A, "a/g", 1, 0);
    assertEquals(0, bus.applicationUsage().get("a").bytes());
  }

  @Test
  void anApplicationHasAtMostItsNumberOfQueues() throws Exception {
    LocalMessageBus bus = bus();
    bus.publish(A, "a/g1", bytes(1));
    bus.publish(A, "a/g2", bytes(1));
    bus.poll(A, "a/g3", 1, 0); // a poll creates its queue too
    BusException e = refused(Code.QUOTA_EXCEEDED, () -> bus.publish(A, "a/g4", bytes(1)));
    assertTrue(
        e.getMessage().contains("3 local queues") && e.getMessage().contains("bus.app.queues.max"),
        e.getMessage());
    refused(Code.QUOTA_EXCEEDED, () -> {
      try {
        bus.poll(A, "a/g5", 1, 0);
      } catch (InterruptedException ex) {
        throw new AssertionError(ex);
      }
    });
    assertEquals(
        130, bus.applicationUsage().get("a").bytes(), "the refused publish reserved nothing");
    bus.deleteQueue(A, "a/g1");
    bus.publish(A, "a/g4", bytes(1));
    bus.publish(B, "b/g1", bytes(1)); // b's queues are its own
  }

  @Test
  void theHostAgentReadsItsQueueRoundRobinAcrossApplications() throws Exception {
    Credentials c = new Credentials(AGENT);
    c.grant("a", A);
    c.grant("b", B);
    LocalMessageBus bus = new LocalMessageBus(c, LocalBusSettings.defaults());
    for (int i = 0; i < 1000; i++) {
      bus.publish(A, LocalMessageBus.HOST_AGENT_QUEUE, ("a" + i).getBytes());
    }
    bus.publish(B, LocalMessageBus.HOST_AGENT_QUEUE, "b0".getBytes());
    bus.publish(B, LocalMessageBus.HOST_AGENT_QUEUE, "b1".getBytes());
    List<String> first = new ArrayList<>();
    for (HostAgentMessage m : bus.pollHostAgent(AGENT, 5, 0)) {
      first.add(m.application() + ":" + new String(m.payload()));
    }
    assertEquals(
        List.of("a:a0", "b:b0", "a:a1", "b:b1", "a:a2"),
        first,
        "b's reports wait behind one of a's each, not behind a thousand");
    List<HostAgentMessage> rest = bus.pollHostAgent(AGENT, 1000, 0);
    assertEquals(997, rest.size());
    for (int i = 0; i < rest.size(); i++) {
      assertEquals(
          "a" + (i + 3), new String(rest.get(i).payload()), "each application's order is kept");
    }
  }

  @Test
  void anApplicationsShareOfTheHostAgentsQueueIsBounded() {
    LocalMessageBus bus = bus();
    for (int i = 0; i < 5; i++) {
      bus.publish(A, LocalMessageBus.HOST_AGENT_QUEUE, bytes(10));
    }
    BusException e =
        refused(Code.QUEUE_FULL, () -> bus.publish(A, LocalMessageBus.HOST_AGENT_QUEUE, bytes(10)));
    assertTrue(e.getMessage().contains("bus.ha.queue.app.capacity"), e.getMessage());
    bus.publish(B, LocalMessageBus.HOST_AGENT_QUEUE, bytes(10));
    bus.publish(
        AGENT, LocalMessageBus.HOST_AGENT_QUEUE, bytes(10)); // the agent's own are nobody's share
  }

  @Test
  void aFloodingApplicationStopsAtItsShareWhileAnotherKeepsWorking() throws Exception {
    LocalMessageBus bus = bus();
    int accepted = 0;
    int refusedCount = 0;
    for (int i = 0; i < 100; i++) {
      try {
        bus.publishBatch(
            A,
            List.of(
                new Delivery("a/g", bytes(200)),
                new Delivery(LocalMessageBus.HOST_AGENT_QUEUE, bytes(200))));
        accepted++;
      } catch (BusException e) {
        refusedCount++;
      }
      bus.publish(B, "b/g", bytes(100));
      assertEquals(1, bus.poll(B, "b/g", 1, 0).size(), "b's message went through at round " + i);
    }
    assertEquals(2, accepted, "a's 1200 bytes hold two rounds of 528");
    assertEquals(98, refusedCount);
    assertTrue(bus.applicationUsage().get("a").bytes() <= 1200);
  }
}
