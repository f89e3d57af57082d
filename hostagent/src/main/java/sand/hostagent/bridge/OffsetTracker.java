package sand.hostagent.bridge;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import sand.contracts.ConditionFlag.Flag;

/**
 * How far this host got in each of its partitions (paper §4.1: "each host synchronizes its progress
 * ... with the global message bus"): the offsets of the records seen, which of their events are not
 * finished yet, and so the offset that is safe to commit, the oldest record whose event is not
 * finished (or the consumed position when there is none).
 *
 * <p>An event is finished when its {@code finished} record is seen in the partition or when this
 * host's own {@code finished} record for it was acknowledged by Kafka ({@link #finished}); the second
 * can happen before the consumer reads the event's earlier records (our {@code processing} backup and
 * {@code finished} flag race the consumer), so such ids are remembered until their {@code finished}
 * record comes by. Thread-safe: the consumer thread reports records, the LQ_HA processor finishes
 * events.
 */
public final class OffsetTracker {

  private static final class Partition {
    long position; // next offset to see
    final TreeMap<Long, String> pending =
        new TreeMap<>(); // offset -> event id, events not finished
    final Map<String, List<Long>> offsetsByEvent = new HashMap<>();
    final Set<String> finishedEarly = new HashSet<>();
    long lastCommitted = -1;

    Partition(long position) {
      this.position = position;
    }

    void finish(String eventId) {
      List<Long> offsets = offsetsByEvent.remove(eventId);
      if (offsets != null) {
        offsets.forEach(pending::remove);
      }
    }

    long committable() {
      return pending.isEmpty() ? position : pending.firstKey();
    }
  }

  private final Map<TopicPartition, Partition> partitions = new HashMap<>();

  /** Start tracking {@code tp} from {@code startOffset} (the committed offset). Restarts a known one. */
  public synchronized void assigned(TopicPartition tp, long startOffset) {
    Partition p = new Partition(startOffset);
    p.lastCommitted = startOffset; // what is committed now: nothing to commit until progress
    partitions.put(tp, p);
  }

  /** Forget {@code tp} (revoked or lost). */
  public synchronized void revoked(TopicPartition tp) {
    partitions.remove(tp);
  }

  public synchronized boolean tracks(TopicPartition tp) {
    return partitions.containsKey(tp);
  }

  /**
   * The consumer read the record at {@code offset} of event {@code eventId}; {@code flag} null means
   * the record could not be parsed (it holds nothing up). Seeing an offset again does nothing.
   */
  public synchronized void seen(TopicPartition tp, long offset, String eventId, Flag flag) {
    Partition p = partitions.get(tp);
    if (p == null || offset < p.position) {
      return;
    }
    p.position = offset + 1;
    if (flag == null || eventId == null) {
      return;
    }
    if (flag == Flag.FINISHED) {
      p.finish(eventId);
      p.finishedEarly.remove(eventId);
      return;
    }
    if (p.finishedEarly.contains(eventId)) {
      return; // our finished flag for it is already in Kafka, further down the partition
    }
    p.pending.put(offset, eventId);
    p.offsetsByEvent.computeIfAbsent(eventId, k -> new ArrayList<>(2)).add(offset);
  }

  /**
   * Event {@code eventId}'s {@code finished} record is acknowledged in {@code tp}: its records no
   * longer hold the commit back, now or when the consumer reaches them.
   */
  public synchronized void finished(TopicPartition tp, String eventId) {
    Partition p = partitions.get(tp);
    if (p == null) {
      return;
    }
    p.finish(eventId);
    p.finishedEarly.add(eventId);
  }

  /** Give up on an event that cannot be processed (undeliverable): its records no longer hold anything back. */
  public synchronized void abandon(TopicPartition tp, String eventId) {
    Partition p = partitions.get(tp);
    if (p != null) {
      p.finish(eventId);
    }
  }

  /** True while a record of {@code eventId} seen in {@code tp} waits for the event to finish. */
  public synchronized boolean isPending(TopicPartition tp, String eventId) {
    Partition p = partitions.get(tp);
    return p != null && p.offsetsByEvent.containsKey(eventId);
  }

  /** True while a record below {@code offset} waits for its event to finish ({@link Recovery}: a replay not done). */
  public synchronized boolean hasPendingBelow(TopicPartition tp, long offset) {
    Partition p = partitions.get(tp);
    return p != null && !p.pending.isEmpty() && p.pending.firstKey() < offset;
  }

  /** Records of {@code tp} waiting for their events to finish. */
  public synchronized int pendingRecords(TopicPartition tp) {
    Partition p = partitions.get(tp);
    return p == null ? 0 : p.pending.size();
  }

  /** The next offset to commit for {@code tp}: the oldest unfinished record, else the position. */
  public synchronized OptionalLong committable(TopicPartition tp) {
    Partition p = partitions.get(tp);
    return p == null ? OptionalLong.empty() : OptionalLong.of(p.committable());
  }

  /**
   * The offsets that moved since the last call, to commit now; they count as committed from here on
   * ({@link #commitFailed} undoes that for a commit Kafka refused).
   */
  public synchronized Map<TopicPartition, OffsetAndMetadata> toCommit() {
    Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
    partitions.forEach((tp, p) -> {
      long c = p.committable();
      if (c > p.lastCommitted) {
        out.put(tp, new OffsetAndMetadata(c));
        p.lastCommitted = c;
      }
    });
    return out;
  }

  /** Only the given partitions' offsets that moved, marked committed (before a revocation). */
  public synchronized Map<TopicPartition, OffsetAndMetadata> toCommit(Set<TopicPartition> only) {
    Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
    for (TopicPartition tp : only) {
      Partition p = partitions.get(tp);
      if (p != null && p.committable() > p.lastCommitted) {
        p.lastCommitted = p.committable();
        out.put(tp, new OffsetAndMetadata(p.lastCommitted));
      }
    }
    return out;
  }

  /** A commit of these offsets failed: offer them again at the next {@link #toCommit()}. */
  public synchronized void commitFailed(Map<TopicPartition, OffsetAndMetadata> offsets) {
    offsets.forEach((tp, o) -> {
      Partition p = partitions.get(tp);
      if (p != null && p.lastCommitted == o.offset()) {
        p.lastCommitted = -1;
      }
    });
  }
}
