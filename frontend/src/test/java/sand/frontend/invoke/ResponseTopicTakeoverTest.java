package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.InMemoryClusterStore;
import sand.common.testing.ManualClock;
import sand.contracts.ExecutionTag;

/** A live frontend reads the response topic of a dead one, from its committed offset, until it is back. */
class ResponseTopicTakeoverTest {
  static final Duration MAX_AGE = Duration.ofSeconds(10);
  final ManualClock clock = new ManualClock(Instant.parse("2026-11-23T10:00:00Z"));
  // ResponseListenerTest's helpers, for the dead frontend fe-1 (its topic, its group's committed
  // offsets):
  final ResponseListenerTest fe1 = new ResponseListenerTest();
  final InMemoryClusterStore store = fe1.store;
  final List<MockConsumer<String, byte[]>> consumers = new ArrayList<>();
  ResponseTopicTakeover takeover;

  @AfterEach
  void stop() throws Exception {
    if (takeover != null) {
      takeover.stop();
    }
    fe1.stop();
  }

  ResponseTopicTakeover takeover(String self) {
    ExecutionTag tags = fe1.tags;
    return new ResponseTopicTakeover(store, clock, MAX_AGE, Duration.ofSeconds(2), self, peer -> {
      MockConsumer<String, byte[]> c = fe1.consumer(2);
      consumers.add(c);
      return new ResponseListener(
          "sand.response." + peer, c, t -> {}, new Results(fe1.log, clock, tags, peer), true);
    });
  }

  @Test
  void aDeadFrontendsAsyncResultsAreRecordedByALiveOneUntilItIsBack() throws Exception {
    store.frontendHeartbeat("fe-1", clock.instant());
    fe1.kafkaCommitted.put(
        ResponseListenerTest.P, new OffsetAndMetadata(1)); // fe-1 recorded offset 0 before dying
    takeover = takeover("fe-2");
    takeover.round();
    assertEquals(Set.of(), takeover.adopted(), "fe-1's heartbeat is young: it is alive");
    assertTrue(
        store.frontends().stream().anyMatch(f -> f.frontendId().equals("fe-2")),
        "fe-2 registered itself");

    clock.advance(MAX_AGE.plusSeconds(1));
    takeover.round();
    assertEquals(Set.of("fe-1"), takeover.adopted());
    MockConsumer<String, byte[]> c = consumers.get(0);
    c.addRecord(fe1.asyncRequestAndResult("e1", 1));
    ResponseListenerTest.await(
        () -> fe1.status("e1").equals("succeeded"), "fe-1's async result recorded by fe-2");
    ResponseListenerTest.await(
        () -> fe1.kafkaCommitted.get(ResponseListenerTest.P).offset() == 2,
        "fe-1's offset moved on");

    store.frontendHeartbeat("fe-1", clock.instant()); // fe-1 is back
    takeover.round();
    assertEquals(Set.of(), takeover.adopted());
    assertTrue(c.closed(), "fe-2 stopped reading fe-1's topic");
  }

  @Test
  void oneLiveFrontendTakesADeadOneOver() {
    List<String> live = List.of("fe-2", "fe-3", "fe-4");
    String picked = ResponseTopicTakeover.pick("fe-1", live);
    assertTrue(live.contains(picked));
    for (List<String> order :
        List.of(List.of("fe-4", "fe-3", "fe-2"), List.of("fe-3", "fe-2", "fe-4"))) {
      assertEquals(
          picked,
          ResponseTopicTakeover.pick("fe-1", order),
          "every frontend computes the same one");
    }
    Map<String, Integer> load = new HashMap<>();
    for (int i = 0; i < 300; i++) {
      load.merge(ResponseTopicTakeover.pick("fe-dead-" + i, live), 1, Integer::sum);
    }
    assertEquals(3, load.size(), "dead frontends spread over the live ones: " + load);
  }
}
