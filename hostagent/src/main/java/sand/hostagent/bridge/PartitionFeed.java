package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import sand.contracts.GrainRef;

/**
 * One partition this host owns, as the bridge feeds it into the grain's local queue: its recovery
 * scan while one runs, the events to re-process (replayed or taken over) that go first, and the
 * records taken from Kafka but not yet handled (held while the replay is not done or the local queue
 * is full). Owned by the consumer thread; no locking.
 */
final class PartitionFeed {

  /** An event to put into the local queue ahead of the partition's new records. */
  record Redelivery(String eventId, ObjectNode event) {}

  final TopicPartition partition;
  final GrainRef grain;
  /** Non-null while the replay range is being read. */
  RecoveryScan scan;
  /** The scan's plan while its {@code data} flags are being checked against the global data layer. */
  List<RecoveryScan.Step> plan = List.of();
  /** While a record below this offset is unfinished, no new record is handled; -1 when no replay. */
  long replayEnd = -1;
  final ArrayDeque<Redelivery> redeliveries = new ArrayDeque<>();
  final ArrayDeque<ConsumerRecord<String, byte[]>> held = new ArrayDeque<>();
  /** Wall-clock millis before which nothing is delivered (a full local queue, an unreadable global layer). */
  long retryAtMs;
  int failures;
  boolean paused;

  PartitionFeed(TopicPartition partition, GrainRef grain) {
    this.partition = partition;
    this.grain = grain;
  }

  boolean scanning() {
    return scan != null;
  }

  boolean verifying() {
    return !plan.isEmpty();
  }

  /** Back off after a failed delivery or check: 5 ms doubling up to {@code maxMs}. */
  void backOff(long nowMs, long maxMs) {
    failures++;
    retryAtMs = nowMs + Math.min(maxMs, 5L << Math.min(failures, 16));
  }

  void succeeded() {
    failures = 0;
    retryAtMs = 0;
  }

  /** The events a finished scan re-processes, in order (VERIFY steps resolved already). */
  static List<Redelivery> redeliveriesOf(List<RecoveryScan.Step> steps) {
    List<Redelivery> out = new ArrayList<>();
    for (RecoveryScan.Step s : steps) {
      if (s.decision() == RecoveryScan.Decision.REPLAY && s.event() != null) {
        out.add(new Redelivery(s.eventId(), s.event()));
      }
    }
    return out;
  }

  @Override
  public String toString() {
    return partition + " (" + grain + ")";
  }
}
