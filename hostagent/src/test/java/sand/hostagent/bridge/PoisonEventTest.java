package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.eventually;
import static sand.hostagent.bridge.TestHost.ids;
import static sand.hostagent.bridge.TestHost.tp;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.ConditionFlag;
import sand.contracts.TopicNames;

/**
 * Issue 26, finding 1: an event whose processing takes the host agent down is replayed by every start of the agent
 * (§4.2.1 recovery of its partition) and takes it down again, forever. With the poison ledger, the third start that
 * finds it in flight does not replay it: it goes to the dead letters, its caller gets a "Poison" error, and it is
 * finished so the partition moves on. Each "start" here is a new bridge over the same partition and the same state
 * dir, as after a kill -9 (nothing was committed or finished).
 */
class PoisonEventTest {
  private static final TopicPartition P = tp(RESIZE, 0);

  @TempDir
  Path state;

  @AfterEach
  void uninstall() {
    PoisonLedger.install(PoisonLedger.off());
  }

  /** One start of the host agent: its recovery of P, whose B (in flight when it died) and C (never taken) wait. */
  private TestHost start() throws Exception {
    PoisonLedger.install(PoisonLedger.open(state, 3));
    TestHost h = new TestHost("h1", new InMemoryGlobalDataLayer(), 10_000, true);
    h.assign(Map.of(P, 0L), Map.of(P, 2L), P);
    h.add(P, 0, ConditionFlag.processing(event("B", RESIZE), "h1"));
    h.add(P, 1, ConditionFlag.newEvent(event("C", RESIZE), ""));
    h.bridge.pollOnce();
    return h;
  }

  @Test
  void anEventInFlightAtThreeStartsGoesToTheDeadLettersAndItsCallerGetsAnError() throws Exception {
    for (int run = 1; run <= 2; run++) {
      try (TestHost h = start()) {
        assertEquals(List.of("B", "C"), ids(h.drain(RESIZE)), "start " + run + " replays both");
        assertTrue(h.sent(TopicNames.responseTopic(TestHost.FRONTEND)).isEmpty());
      } // ... and dies while B runs (C, waiting behind B, is in flight too: its processing
      // coincides with the deaths)
    }
    try (TestHost h = start()) {
      assertEquals(List.of(), ids(h.drain(RESIZE)), "third start: B and C are not replayed again");
      eventually(
          "B's and C's callers answered",
          () -> h.sent(TopicNames.responseTopic(TestHost.FRONTEND)).size() == 2);
      ProducerRecord<String, byte[]> answer =
          h.sent(TopicNames.responseTopic(TestHost.FRONTEND)).get(0);
      assertEquals("exec-B", answer.key());
      JsonNode error = ConditionFlag.JSON.readTree(answer.value()).path("value").path("error");
      assertEquals("Poison", error.path("type").asText());
      assertTrue(
          error
              .path("message")
              .asText()
              .startsWith("poison event: it was being processed each time the host "
                  + "agent of host h1 died (3 times)"),
          error.toString());
      assertEquals("resize", error.path("grain").asText());
      eventually(
          "B finished, so the partition moves on",
          () -> h.flags(RESIZE.topic()).contains(ConditionFlag.finished("B", "h1"))
              && !h.bridge.tracker().isPending(P, "B"));
      List<String> dead = Files.readAllLines(state.resolve(PoisonLedger.DEAD_LETTERS_FILE));
      assertEquals(2, dead.size());
      JsonNode letter = ConditionFlag.JSON.readTree(dead.get(0));
      assertEquals("shop", letter.path("app").asText());
      assertEquals("B", letter.path("event_id").asText());
      assertEquals("exec-B", letter.path("execution_id").asText());
      assertTrue(letter.path("reason").asText().startsWith("poison event"));
    }
  }

  @Test
  void withoutALedgerEveryStartReplays() throws Exception {
    for (int run = 1; run <= 4; run++) {
      TestHost h = new TestHost("h1", new InMemoryGlobalDataLayer(), 10_000, true);
      try (h) {
        h.assign(Map.of(P, 0L), Map.of(P, 1L), P);
        h.add(P, 0, ConditionFlag.processing(event("B", RESIZE), "h1"));
        h.bridge.pollOnce();
        assertEquals(List.of("B"), ids(h.drain(RESIZE)), "start " + run);
      }
    }
  }

  @Test
  void theCountIsOnDiskBeforeTheReplayAndSurvivesAReopen() throws Exception {
    PoisonLedger l = PoisonLedger.open(state, 2);
    assertEquals(1, l.bump("t/B"));
    PoisonLedger again = PoisonLedger.open(state, 2);
    assertEquals(1, again.count("t/B"));
    assertTrue(again.poisoned(again.bump("t/B")));
  }

  @Test
  void theLedgerIsBounded() throws Exception {
    PoisonLedger l = PoisonLedger.open(state, 2, 10);
    for (int i = 0; i <= 10; i++) {
      l.bump("t/" + i);
    }
    assertEquals(0, l.count("t/0"), "the oldest counted is forgotten");
    assertEquals(1, l.count("t/10"));
    assertEquals(10, Files.readAllLines(state.resolve(PoisonLedger.LEDGER_FILE)).size());
  }
}
