package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import sand.contracts.ConditionFlag.Flag;

/** Flag bookkeeping per event and the committable offset: the oldest record whose event is not finished. */
class OffsetTrackerTest {
  private final TopicPartition tp = new TopicPartition("sand.shop.resize", 0);
  private final OffsetTracker t = new OffsetTracker();

  @Test
  void commitsOnlyUpToTheOldestUnfinishedEventWhateverOrderTheyFinishIn() {
    t.assigned(tp, 10);
    t.seen(tp, 10, "a", Flag.NEW);
    t.seen(tp, 11, "b", Flag.NEW);
    t.seen(tp, 12, "c", Flag.NEW);
    assertEquals(OptionalLong.of(10), t.committable(tp));
    t.finished(tp, "c");
    t.finished(tp, "b");
    assertEquals(OptionalLong.of(10), t.committable(tp), "a is still running");
    t.finished(tp, "a");
    assertEquals(OptionalLong.of(13), t.committable(tp));
  }

  @Test
  void everyRecordOfAnEventWaitsForItsFinishedFlag() {
    t.assigned(tp, 0);
    t.seen(tp, 0, "a", Flag.PROCESSING);
    t.seen(tp, 1, "b", Flag.NEW);
    t.seen(tp, 2, "a", Flag.DATA);
    t.seen(tp, 3, "b", Flag.FINISHED);
    assertEquals(OptionalLong.of(0), t.committable(tp));
    assertTrue(t.isPending(tp, "a"));
    assertFalse(t.isPending(tp, "b"));
    t.seen(
        tp,
        4,
        "a",
        Flag.FINISHED); // a finished record read from the partition (e.g. another host's)
    assertEquals(OptionalLong.of(5), t.committable(tp));
    assertEquals(0, t.pendingRecords(tp));
  }

  @Test
  void anEventFinishedBeforeItsRecordsAreReadDoesNotHoldTheCommit() {
    t.assigned(tp, 0);
    t.finished(
        tp,
        "a"); // our finished flag was acknowledged before the consumer read our processing backup
    t.seen(tp, 0, "a", Flag.PROCESSING);
    t.seen(tp, 1, "a", Flag.DATA);
    assertEquals(OptionalLong.of(2), t.committable(tp));
    t.seen(tp, 2, "a", Flag.FINISHED);
    t.seen(tp, 3, "a", Flag.NEW); // the same id sent again later is a new event to finish
    assertEquals(OptionalLong.of(3), t.committable(tp));
  }

  @Test
  void unreadableRecordsAndRepeatsHoldNothing() {
    t.assigned(tp, 0);
    t.seen(tp, 0, null, null);
    t.seen(tp, 1, "a", Flag.NEW);
    t.seen(tp, 1, "a", Flag.NEW);
    t.seen(tp, 0, "x", Flag.NEW);
    assertEquals(1, t.pendingRecords(tp));
    t.abandon(tp, "a");
    assertEquals(OptionalLong.of(2), t.committable(tp));
  }

  @Test
  void toCommitOffersOnlyWhatMovedAndOffersAFailedCommitAgain() {
    t.assigned(tp, 5);
    assertEquals(Map.of(), t.toCommit(), "nothing moved since the committed offset");
    t.seen(tp, 5, "a", Flag.NEW);
    assertEquals(Map.of(), t.toCommit());
    t.finished(tp, "a");
    Map<TopicPartition, OffsetAndMetadata> c = t.toCommit();
    assertEquals(Map.of(tp, new OffsetAndMetadata(6)), c);
    assertEquals(Map.of(), t.toCommit());
    t.commitFailed(c);
    assertEquals(c, t.toCommit(Set.of(tp)));
  }

  @Test
  void aRevokedPartitionIsForgotten() {
    t.assigned(tp, 0);
    t.seen(tp, 0, "a", Flag.NEW);
    t.revoked(tp);
    assertFalse(t.tracks(tp));
    assertEquals(OptionalLong.empty(), t.committable(tp));
    t.finished(tp, "a");
    assertEquals(Map.of(), t.toCommit());
  }
}
