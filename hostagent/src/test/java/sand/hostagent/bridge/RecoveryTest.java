package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.hostagent.bridge.TestHost.RESIZE;
import static sand.hostagent.bridge.TestHost.bytes;
import static sand.hostagent.bridge.TestHost.event;
import static sand.hostagent.bridge.TestHost.eventually;
import static sand.hostagent.bridge.TestHost.ids;
import static sand.hostagent.bridge.TestHost.tp;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.hostagent.bridge.Recovery.Decision;
import sand.hostagent.bridge.Recovery.PlannedEvent;
import sand.hostagent.bridge.Recovery.Scan;

/**
 * §4.2.1 on one host: the partition of a failed host is assigned here and replayed from its committed
 * offset to its end offset at assignment time before any new message of it; the latest flag of each
 * event in the replay range decides what happens to it.
 */
class RecoveryTest {
  private static final TopicPartition P = tp(RESIZE, 0);
  private final InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();
  private final TestHost h = new TestHost("h2", global, 10_000, true);

  @AfterEach
  void close() {
    h.close();
  }

  /** What host h1 left in its partition before failing; offsets 1..9 are the replay range. */
  private void failedHostsPartition() {
    global.writeKv(TestHost.APP, "dk", bytes("dv"));
    global.writeKv(TestHost.APP, "ek", bytes("fresh"));
    h.assign(Map.of(P, 1L), Map.of(P, 10L), P);
    h.add(P, 0, ConditionFlag.newEvent(event("A", RESIZE), "")); // before the committed offset
    h.add(P, 1, ConditionFlag.processing(event("B", RESIZE), "h1")); // started, not finished
    h.add(P, 2, ConditionFlag.newEvent(event("C", RESIZE), ""));
    h.add(P, 3, ConditionFlag.finished("C", "h1")); // done
    h.add(P, 4, ConditionFlag.processing(event("D", RESIZE), "h1"));
    h.add(
        P,
        5,
        ConditionFlag.data("D", List.of(CanonicalEncoding.ofKvValue("dk", bytes("dv"))), "h1"));
    h.add(P, 6, ConditionFlag.processing(event("E", RESIZE), "h1"));
    h.add(
        P,
        7,
        ConditionFlag.data("E", List.of(CanonicalEncoding.ofKvValue("ek", bytes("stale"))), "h1"));
    h.add(P, 8, ConditionFlag.newEvent(event("F", RESIZE), ""));
    h.add(P, 9, ConditionFlag.finished("A", "h1"));
    h.add(P, 10, ConditionFlag.newEvent(event("G", RESIZE), "")); // a new message after the replay
  }

  @Test
  void unfinishedEventsAreProcessedAgainAndFinishedOnesSkipped() throws Exception {
    failedHostsPartition();
    h.bridge.pollOnce();
    assertEquals(
        List.of("B", "E", "F"),
        ids(h.drain(RESIZE)),
        "processing and new re-processed in order; finished skipped; D's data is durable; E's is not");
    eventually(
        "D's missing finished flag written",
        () -> h.flags(RESIZE.topic()).contains(ConditionFlag.finished("D", "h2")));
    assertEquals(0, h.sent(RESIZE.topic()).get(0).partition(), "into the event's own partition");
    eventually("D no longer holds the commit", () -> !h.bridge.tracker().isPending(P, "D"));
  }

  @Test
  void noNewMessageOfARecoveringPartitionBeforeTheReplayIsDone() throws Exception {
    failedHostsPartition();
    h.bridge.pollOnce();
    assertEquals(List.of("B", "E", "F"), ids(h.drain(RESIZE)));
    assertTrue(h.consumer.paused().contains(P));
    h.bridge.eventFinished(RESIZE.topic(), 0, "B");
    h.bridge.eventFinished(RESIZE.topic(), 0, "F");
    eventually("D finished", () -> !h.bridge.tracker().isPending(P, "D"));
    h.bridge.pollOnce();
    assertEquals(List.of(), h.drain(RESIZE), "E, replayed, has not finished yet");
    assertEquals(
        OptionalLong.of(6),
        h.bridge.tracker().committable(P),
        "progress is committed during the replay");
    h.bridge.eventFinished(RESIZE.topic(), 0, "E");
    h.bridge.pollOnce();
    assertEquals(List.of("G"), ids(h.drain(RESIZE)));
    assertEquals(
        OptionalLong.of(10), h.bridge.tracker().committable(P), "G is the oldest unfinished");
  }

  @Test
  void aDataFlagIsCheckedOnceTheGlobalDataLayerAnswers() throws Exception {
    failedHostsPartition();
    global.setAvailable(false);
    h.bridge.pollOnce();
    assertEquals(
        List.of(), h.drain(RESIZE), "nothing is replayed before every data flag is checked");
    global.setAvailable(true);
    h.clock.advance(Duration.ofSeconds(30));
    h.bridge.pollOnce();
    assertEquals(List.of("B", "E", "F"), ids(h.drain(RESIZE)));
  }

  @Test
  void aPartitionNeverCommittedIsReplayedFromItsBeginning() throws Exception {
    h.assign(Map.of(), Map.of(P, 2L), P);
    h.add(P, 0, ConditionFlag.processing(event("X", RESIZE), "h1"));
    h.add(P, 1, ConditionFlag.processing(event("Y", RESIZE), "h1"));
    h.bridge.pollOnce();
    assertEquals(List.of("X", "Y"), ids(h.drain(RESIZE)));
    assertEquals(
        List.of(),
        h.flags(RESIZE.topic()).stream().filter(f -> f.flag() == Flag.FINISHED).toList());
  }

  // ---- the scan (step 1) alone

  private final TopicPartition tp = new TopicPartition("sand.shop.resize", 0);

  @Test
  void theLatestFlagDecidesInOrderOfFirstAppearance() {
    Scan s = new Scan(tp, 3, 10);
    DataMetadata md = new DataMetadata(DataKind.KV, "k", 1, "x");
    s.accept(3, ConditionFlag.processing(TestHost.event("a", TestHost.RESIZE), "h0"));
    s.accept(4, ConditionFlag.newEvent(TestHost.event("b", TestHost.RESIZE), ""));
    s.accept(5, ConditionFlag.processing(TestHost.event("c", TestHost.RESIZE), "h0"));
    s.accept(6, ConditionFlag.data("c", List.of(md), "h0"));
    s.accept(7, ConditionFlag.finished("b", "h0"));
    s.accept(8, null);
    s.accept(9, ConditionFlag.newEvent(TestHost.event("d", TestHost.RESIZE), ""));
    List<PlannedEvent> plan = s.plan(true);
    assertEquals(
        List.of("a", "b", "c", "d"), plan.stream().map(PlannedEvent::eventId).toList());
    assertEquals(
        List.of(Decision.REPLAY, Decision.SKIP, Decision.VERIFY, Decision.REPLAY),
        plan.stream().map(PlannedEvent::decision).toList());
    assertEquals(List.of(md), plan.get(2).data());
    assertEquals(
        "c", plan.get(2).event().path("id").asText(), "the envelope is kept for a re-process");
    assertEquals(7, s.records());
    // The baseline without flags (benchmarks/recovery.py): the finished and data-flagged events run
    // again too.
    List<PlannedEvent> all = s.plan(false);
    assertEquals(
        List.of("a", "b", "c", "d"), all.stream().map(PlannedEvent::eventId).toList());
    assertEquals(
        List.of(Decision.REPLAY),
        all.stream().map(PlannedEvent::decision).distinct().toList());
  }

  @Test
  void theRangeIsFromTheCommittedToTheEndOffsetAtAssignment() {
    Scan s = new Scan(tp, 3, 5);
    assertTrue(s.covers(3));
    assertTrue(s.covers(4));
    assertFalse(s.covers(5));
    assertFalse(s.covers(2));
    assertThrows(IllegalArgumentException.class, () -> s.accept(5, null));
  }
}
