package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.STORE;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.ids;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.ConditionFlag;
import sand.contracts.gate.Admission;
import sand.localbus.LocalMessageBus;

/** Figure 4 steps 1-2 and the offset bookkeeping, over MockConsumer and MockProducer. */
class GlobalBusBridgeTest {
  private TestHost h = new TestHost();

  @AfterEach
  void close() {
    h.close();
  }

  private long committed(TopicPartition tp) {
    OffsetAndMetadata o = h.consumer.committed(Set.of(tp)).get(tp);
    return o == null ? -1 : o.offset();
  }

  @Test
  void subscribesToTheTopicsOfTheGrainsRunningHere() {
    h.bridge.updateGrains(Set.of(RESIZE, STORE));
    h.bridge.pollOnce();
    assertEquals(Set.of("sand.shop.resize", "sand.shop.store"), h.consumer.subscription());
    h.bridge.updateGrains(Set.of(STORE));
    h.bridge.pollOnce();
    assertEquals(Set.of("sand.shop.store"), h.consumer.subscription());
    h.bridge.updateGrains(Set.of());
    h.bridge.pollOnce();
    assertEquals(Set.of(), h.consumer.subscription());
  }

  @Test
  void aNewEventTakenFromAPartitionGoesIntoTheGrainsLocalQueue() throws Exception {
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1), tp(STORE, 0));
    assertEquals(
        Map.of("sand.shop.resize", List.of(0, 1), "sand.shop.store", List.of(0)),
        h.bridge.ownedPartitions());
    h.add(tp(RESIZE, 1), 0, ConditionFlag.newEvent(event("e1", RESIZE), ""));
    h.bridge.pollOnce();
    List<ObjectNode> got = h.drain(RESIZE);
    assertEquals(1, got.size());
    JsonNode entry = got.get(0).path("trace").get(0);
    assertEquals(
        "agent.in", entry.get(0).asText(), "the host agent's entry in the event's trace: " + entry);
    assertEquals(h.hostId, entry.get(1).asText());
    assertTrue(entry.get(2).asLong() <= entry.get(3).asLong(), "taken, then queued");
    got.get(0).remove("trace");
    assertEquals(event("e1", RESIZE), got.get(0));
    assertTrue(committed(tp(RESIZE, 1)) <= 0, "not finished: nothing committed past it");
  }

  @Test
  void processingDataAndFinishedRecordsAreOnlyBookkeeping() throws Exception {
    h.assign(tp(STORE, 0));
    h.add(tp(STORE, 0), 0, ConditionFlag.processing(event("e1", STORE), h.hostId));
    h.add(tp(STORE, 0), 1, ConditionFlag.data("e1", List.of(), h.hostId));
    h.add(tp(STORE, 0), 2, ConditionFlag.finished("e1", h.hostId));
    h.add(tp(STORE, 0), 3, ConditionFlag.processing(event("e2", STORE), h.hostId));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(STORE));
    assertEquals(3, committed(tp(STORE, 0)), "e2's backup is the oldest unfinished record");
    h.bridge.eventFinished(STORE.topic(), 0, "e2");
    h.bridge.pollOnce();
    assertEquals(4, committed(tp(STORE, 0)));
  }

  @Test
  void offsetsAreCommittedOnlyUpToTheOldestUnfinishedEvent() throws Exception {
    h.assign(tp(RESIZE, 0));
    for (int i = 0; i < 4; i++) {
      h.add(tp(RESIZE, 0), i, ConditionFlag.newEvent(event("e" + i, RESIZE), ""));
    }
    h.bridge.pollOnce();
    assertEquals(List.of("e0", "e1", "e2", "e3"), ids(h.drain(RESIZE)));
    h.bridge.eventFinished(RESIZE.topic(), 0, "e2");
    h.bridge.eventFinished(RESIZE.topic(), 0, "e1");
    h.bridge.pollOnce();
    assertEquals(-1, committed(tp(RESIZE, 0)), "e0 is not finished");
    h.bridge.eventFinished(RESIZE.topic(), 0, "e0");
    h.bridge.pollOnce();
    assertEquals(3, committed(tp(RESIZE, 0)), "up to e3, still running");
    h.bridge.eventFinished(RESIZE.topic(), 0, "e3");
    h.bridge.pollOnce();
    assertEquals(4, committed(tp(RESIZE, 0)));
  }

  @Test
  void aFullLocalQueuePausesThePartitionWithoutLosingOrReordering() throws Exception {
    h.close();
    h = new TestHost("h1", new InMemoryGlobalDataLayer(), 2, true);
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    for (int i = 0; i < 5; i++) {
      h.add(tp(RESIZE, 0), i, ConditionFlag.newEvent(event("e" + i, RESIZE), ""));
    }
    h.bridge.pollOnce();
    assertTrue(h.consumer.paused().contains(tp(RESIZE, 0)));
    assertFalse(h.consumer.paused().contains(tp(RESIZE, 1)), "other partitions go on");
    h.add(tp(RESIZE, 0), 5, ConditionFlag.newEvent(event("e5", RESIZE), ""));
    List<String> got = new ArrayList<>(ids(h.drain(RESIZE)));
    for (int round = 0; round < 10 && got.size() < 6; round++) {
      h.clock.advance(Duration.ofSeconds(1));
      h.bridge.pollOnce();
      got.addAll(ids(h.drain(RESIZE)));
    }
    assertEquals(
        List.of("e0", "e1", "e2", "e3", "e4", "e5"), got, "e5 was kept by Kafka while paused");
    assertTrue(h.consumer.paused().isEmpty(), "resumed once the held records went in");
  }

  @Test
  void anotherHostsBackupIsTakenOverWhenItStaysUnfinished() throws Exception {
    h.assign(tp(STORE, 0));
    h.add(tp(STORE, 0), 0, ConditionFlag.processing(event("slow", STORE), "h9"));
    h.add(tp(STORE, 0), 1, ConditionFlag.processing(event("done", STORE), "h9"));
    h.add(tp(STORE, 0), 2, ConditionFlag.finished("done", "h9"));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(STORE));
    h.clock.advance(h.settings.takeoverTimeout());
    h.bridge.pollOnce();
    assertEquals(List.of("slow"), ids(h.drain(STORE)));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(STORE), "taken over once");
  }

  @Test
  void aFailedHostsBackupIsTakenOverAtOnceNotAfterTheTimeout() throws Exception {
    Set<String> failed = ConcurrentHashMap.newKeySet();
    h.hostDead = failed::contains;
    h.assign(tp(STORE, 0));
    h.add(tp(STORE, 0), 0, ConditionFlag.processing(event("slow", STORE), "h9"));
    h.add(tp(STORE, 0), 1, ConditionFlag.processing(event("alive", STORE), "h8"));
    h.add(tp(STORE, 0), 2, ConditionFlag.processing(event("done", STORE), "h9"));
    h.add(tp(STORE, 0), 3, ConditionFlag.finished("done", "h9"));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(STORE), "h9 is alive: its instance may still be running");
    failed.add("h9");
    h.bridge.pollOnce();
    assertEquals(
        List.of("slow"),
        ids(h.drain(STORE)),
        "h9 failed: its unfinished event runs here, no timeout");
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(STORE), "taken over once; h8's event waits for the timeout");
    h.clock.advance(h.settings.takeoverTimeout());
    h.bridge.pollOnce();
    assertEquals(List.of("alive"), ids(h.drain(STORE)), "the timeout stays the fallback");
  }

  @Test
  void aLivenessCheckThatFailsLeavesTheTimeoutToDecide() throws Exception {
    h.hostDead = host -> {
      throw new IllegalStateException("cluster state unreadable");
    };
    h.assign(tp(STORE, 0));
    h.add(tp(STORE, 0), 0, ConditionFlag.processing(event("slow", STORE), "h9"));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(STORE));
    h.clock.advance(h.settings.takeoverTimeout());
    h.bridge.pollOnce();
    assertEquals(List.of("slow"), ids(h.drain(STORE)));
  }

  @Test
  void eventsOfAnotherGrainInATopicAreDropped() throws Exception {
    h.assign(tp(RESIZE, 0));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e1", STORE), ""));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(RESIZE));
    assertEquals(List.of(), h.drain(STORE));
    assertEquals(1, committed(tp(RESIZE, 0)));
  }

  @Test
  void aRevokedPartitionCommitsWhatIsSafeAndIsForgotten() throws Exception {
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.add(tp(RESIZE, 0), 1, ConditionFlag.newEvent(event("e1", RESIZE), ""));
    h.bridge.pollOnce();
    h.bridge.eventFinished(RESIZE.topic(), 0, "e0");
    h.consumer.rebalance(List.of(tp(RESIZE, 1)));
    assertEquals(Map.of("sand.shop.resize", List.of(1)), h.bridge.ownedPartitions());
    assertFalse(h.bridge.tracker().tracks(tp(RESIZE, 0)));
    h.consumer.rebalance(
        List.of(tp(RESIZE, 0), tp(RESIZE, 1))); // back: MockConsumer shows commits of assigned ones
    assertEquals(1, committed(tp(RESIZE, 0)), "e0 finished, e1 not");
    assertEquals(OptionalLong.of(1), h.bridge.tracker().committable(tp(RESIZE, 0)));
  }

  @Test
  void aRevocationWithEventsInFlightDoesNotStallThePartitionsKept() throws Exception {
    h.close();
    h = new TestHost(
        "h1",
        new InMemoryGlobalDataLayer(),
        10_000,
        true,
        s -> s.withRevokeDrain(Duration.ofSeconds(5)));
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.bridge.pollOnce();
    assertEquals(List.of("e0"), ids(h.drain(RESIZE)));
    long t0 = System.nanoTime();
    h.consumer.rebalance(List.of(tp(RESIZE, 1))); // e0 still runs
    long tookMs = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(tookMs < 1000, "the revocation did not wait for e0 (took " + tookMs + " ms)");
    h.add(tp(RESIZE, 1), 0, ConditionFlag.newEvent(event("e1", RESIZE), ""));
    h.bridge.pollOnce();
    assertEquals(List.of("e1"), ids(h.drain(RESIZE)), "the partition kept delivers at once");
    assertEquals(Map.of("sand.shop.resize", List.of(1)), h.bridge.ownedPartitions());

    // e0's instance finishes after the revocation: its finished flag still goes to e0's partition,
    // for the next owner
    h.bus.publish(
        TestHost.CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        TestHost.report("finished", TestHost.APP, "resize", "e0", List.of(), List.of()));
    h.processor.processOnce();
    TestHost.eventually(
        "e0's finished flag",
        () -> h.flags(RESIZE.topic()).contains(ConditionFlag.finished("e0", "h1")));
    assertEquals(0, h.sent(RESIZE.topic()).get(0).partition());
    h.consumer.rebalance(List.of(tp(RESIZE, 0), tp(RESIZE, 1)));
    assertTrue(
        committed(tp(RESIZE, 0)) <= 0,
        "e0 was not finished at the revocation: left to the next owner");
  }

  @Test
  void aHostGivingUpItsLastPartitionsWaitsForTheirEventsInFlight() throws Exception {
    h.close();
    h = new TestHost(
        "h1",
        new InMemoryGlobalDataLayer(),
        10_000,
        true,
        s -> s.withRevokeDrain(Duration.ofSeconds(5)));
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.bridge.pollOnce();
    Thread finisher = new Thread(() -> {
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
      h.bridge.eventFinished(
          RESIZE.topic(), 0, "e0"); // the instance finishes while the partitions are revoked
    });
    finisher.start();
    h.consumer.rebalance(List.of()); // nothing kept here: nothing else to stall
    finisher.join();
    h.consumer.rebalance(List.of(tp(RESIZE, 0), tp(RESIZE, 1)));
    assertEquals(
        1, committed(tp(RESIZE, 0)), "committed past e0: the next owner does not run it again");
  }

  @Test
  void anUndeployedApplicationsEventsInFlightAreKeptUntilItsSandboxHasDrained() throws Exception {
    h.assign(tp(RESIZE, 0));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.add(tp(RESIZE, 0), 1, ConditionFlag.newEvent(event("e1", RESIZE), ""));
    h.bridge.pollOnce();
    assertEquals(List.of("e0", "e1"), ids(h.drain(RESIZE)));
    h.bridge.updateGrains(
        Set.of()); // undeploy (or a redeploy's old version): no more events for shop
    h.bridge.pollOnce();
    // e0's instance finishes while the sandbox drains: its finished flag is still written
    h.bus.publish(
        TestHost.CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        TestHost.report("finished", TestHost.APP, "resize", "e0", List.of(), List.of()));
    h.processor.processOnce();
    TestHost.eventually(
        "e0's finished flag",
        () -> h.flags(RESIZE.topic()).contains(ConditionFlag.finished("e0", "h1")));
    h.bridge.forgetApplication(
        TestHost.APP); // the sandbox is gone: e1 is never reported, its next owner replays it
    h.bus.publish(
        TestHost.CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        TestHost.report("finished", TestHost.APP, "resize", "e1", List.of(), List.of()));
    h.processor.processOnce();
    Thread.sleep(50);
    assertFalse(h.flags(RESIZE.topic()).contains(ConditionFlag.finished("e1", "h1")));
  }

  @Test
  void anApplicationDeployedAgainIsNotForgotten() throws Exception {
    h.assign(tp(RESIZE, 0));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.bridge.pollOnce();
    h.bridge.forgetApplication(
        TestHost.APP); // a late call for an earlier sandbox: shop runs here again
    h.bus.publish(
        TestHost.CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        TestHost.report("finished", TestHost.APP, "resize", "e0", List.of(), List.of()));
    h.processor.processOnce();
    TestHost.eventually(
        "e0's finished flag",
        () -> h.flags(RESIZE.topic()).contains(ConditionFlag.finished("e0", "h1")));
  }
  /** Issue 26: a grain that takes its events and never reports holds at most its in-flight bytes in the agent. */
  @Test
  void anApplicationAtItsInFlightBytesGetsNoMoreEventsUntilSomeFinish() throws Exception {
    h.close();
    h = new TestHost(
        "h1",
        new InMemoryGlobalDataLayer(),
        10_000,
        true,
        s -> s.withReports(new ReportLimits(
            2, 10_000, 64L << 20, 256, 1000, 16L << 20, Duration.ofMinutes(10), 1)));
    h.assign(tp(RESIZE, 0), tp(RESIZE, 1));
    h.add(tp(RESIZE, 0), 0, ConditionFlag.newEvent(event("e0", RESIZE), ""));
    h.add(tp(RESIZE, 0), 1, ConditionFlag.newEvent(event("e1", RESIZE), ""));
    h.bridge.pollOnce();
    assertEquals(
        List.of("e0"), ids(h.drain(RESIZE)), "one event always fits; the next is past the bound");
    assertTrue(h.consumer.paused().contains(tp(RESIZE, 0)));
    FrontendGate gate = new FrontendGate(h.bridge, h.bus, TestHost.AGENT, TestHost.TAGS);
    assertEquals(
        List.of(Admission.BUSY),
        gate.submit(
            TestHost.TAGS.credential("gate"),
            List.of(ByteBuffer.wrap(ConditionFlag.toBytes(event("r1", RESIZE))))),
        "the gate sends it to Kafka");
    for (int i = 0; i < 3; i++) { // the grain took e0 and never reports: nothing more comes
      h.clock.advance(Duration.ofSeconds(1));
      h.bridge.pollOnce();
    }
    assertEquals(List.of(), h.drain(RESIZE));

    h.bus.publish(
        TestHost.CRED,
        LocalMessageBus.HOST_AGENT_QUEUE,
        TestHost.report("finished", TestHost.APP, "resize", "e0", List.of(), List.of()));
    h.processor.processOnce(); // e0 finished: room again
    List<String> got = new ArrayList<>();
    for (int round = 0; round < 10 && got.isEmpty(); round++) {
      h.clock.advance(Duration.ofSeconds(1));
      h.bridge.pollOnce();
      got.addAll(ids(h.drain(RESIZE)));
    }
    assertEquals(List.of("e1"), got);
  }
}
