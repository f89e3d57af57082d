package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.Backoff;
import sand.contracts.ConditionFlag;
import sand.contracts.GrainRef;

/**
 * One partition this host owns, as the bridge feeds it into the grain's local queue: its recovery
 * while one runs, the events replayed or taken over that go first, and the records taken from Kafka but not yet
 * handled (held while the recovery is not done or the local queue is full). Owned by the consumer
 * thread; no locking.
 */
final class PartitionFeed {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionFeed.class);

  /** An event to put into the local queue ahead of the partition's new records. */
  record Redelivery(String eventId, ObjectNode event) {}

  final TopicPartition partition;
  final GrainRef grain;
  /** Non-null from assignment until the partition's recovery (§4.2.1, {@link Recovery}) is done; null if none. */
  Recovery.State recovery;
  /** Events to process again, ahead of new records: replayed by the recovery, or taken over from other hosts. */
  final ArrayDeque<Redelivery> redeliveries = new ArrayDeque<>();
  /** Records the consumer returned, in order, not handled yet (the replay range's wait for the recovery's scan). */
  final ArrayDeque<ConsumerRecord<String, byte[]>> held = new ArrayDeque<>();
  /** Wall-clock millis before which nothing is delivered (a full local queue, an unreadable global layer). */
  long retryAtMs;

  int failures;
  boolean paused;

  PartitionFeed(TopicPartition partition, GrainRef grain) {
    this.partition = partition;
    this.grain = grain;
  }

  boolean recovering() {
    return recovery != null;
  }

  /** A record of this partition as a condition flag; null (logged) when it cannot be read. */
  ConditionFlag parse(ConsumerRecord<String, byte[]> r, String host) {
    try {
      return ConditionFlag.parse(r.key(), r.value());
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "[host {}] [{}] unreadable record at offset {} skipped: {}",
          host,
          this,
          r.offset(),
          e.getMessage());
      return null;
    }
  }

  /** Back off after a failed delivery or check: 5 ms doubling up to {@code maxMs}. */
  void backOff(long nowMs, long maxMs) {
    failures++;
    retryAtMs = nowMs + Backoff.ofMillis(5, maxMs).afterMs(failures);
  }

  void succeeded() {
    failures = 0;
    retryAtMs = 0;
  }

  @Override
  public String toString() {
    return partition + " (" + grain + ")";
  }
}
