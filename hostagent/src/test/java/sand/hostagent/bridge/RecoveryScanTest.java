package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import sand.contracts.ConditionFlag;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.hostagent.bridge.RecoveryScan.Decision;
import sand.hostagent.bridge.RecoveryScan.Step;

/** §4.2.1: the latest flag of each event in the replay range decides what happens to it. */
class RecoveryScanTest {
  private final TopicPartition tp = new TopicPartition("sand.shop.resize", 0);

  @Test
  void theLatestFlagDecidesInOrderOfFirstAppearance() {
    RecoveryScan s = new RecoveryScan(tp, 3, 10);
    DataMetadata md = new DataMetadata(DataKind.KV, "k", 1, "x");
    s.accept(3, ConditionFlag.processing(TestHost.event("a", TestHost.RESIZE), "h0"));
    s.accept(4, ConditionFlag.newEvent(TestHost.event("b", TestHost.RESIZE), ""));
    s.accept(5, ConditionFlag.processing(TestHost.event("c", TestHost.RESIZE), "h0"));
    s.accept(6, ConditionFlag.data("c", List.of(md), "h0"));
    s.accept(7, ConditionFlag.finished("b", "h0"));
    s.accept(8, null);
    s.accept(9, ConditionFlag.newEvent(TestHost.event("d", TestHost.RESIZE), ""));
    List<Step> plan = s.plan();
    assertEquals(List.of("a", "b", "c", "d"), plan.stream().map(Step::eventId).toList());
    assertEquals(List.of(Decision.REPLAY, Decision.SKIP, Decision.VERIFY, Decision.REPLAY),
        plan.stream().map(Step::decision).toList());
    assertEquals(List.of(md), plan.get(2).data());
    assertEquals("c", plan.get(2).event().path("id").asText(), "the envelope is kept for a re-process");
    assertEquals(7, s.records());
  }

  @Test
  void theRangeIsFromTheCommittedToTheEndOffsetAtAssignment() {
    RecoveryScan s = new RecoveryScan(tp, 3, 5);
    assertTrue(s.covers(3));
    assertTrue(s.covers(4));
    assertFalse(s.covers(5));
    assertFalse(s.covers(2));
    assertThrows(IllegalArgumentException.class, () -> s.accept(5, null));
  }
}
