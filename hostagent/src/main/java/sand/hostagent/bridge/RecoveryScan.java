package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.ConditionFlag;
import sand.contracts.DataMetadata;

/**
 * The replay of a partition this host was just assigned (paper §4.2.1): the records from the
 * committed offset up to the end offset at assignment time, reduced to the latest flag of each event,
 * then a plan in the order the events first appear:
 *
 * <ul>
 *   <li>latest {@code finished}: skip (the previous owner finished it);
 *   <li>latest {@code data}: verify the flag's metadata against the global data layer: a match means
 *       the event was processed and only its {@code finished} flag is missing; otherwise re-process;
 *   <li>latest {@code new} or {@code processing}: re-process (into the grain's local queue).
 * </ul>
 *
 * Not thread-safe: the consumer thread owns it.
 */
public final class RecoveryScan {

  /** What to do with one event. */
  public enum Decision { SKIP, VERIFY, REPLAY }

  /**
   * One event of the plan.
   *
   * @param event the envelope of its latest {@code new}/{@code processing} record (null if none seen)
   * @param data  the metadata of its latest {@code data} record (VERIFY only)
   */
  public record Step(String eventId, Decision decision, ObjectNode event, List<DataMetadata> data) {}

  private static final class Seen {
    Flag latest;
    ObjectNode event;
    List<DataMetadata> data = List.of();
  }

  private final TopicPartition partition;
  private final long from;
  private final long end;
  private final Map<String, Seen> events = new LinkedHashMap<>();
  private int records;

  /** A scan of {@code partition} over [{@code from}, {@code end}). */
  public RecoveryScan(TopicPartition partition, long from, long end) {
    this.partition = partition;
    this.from = from;
    this.end = end;
  }

  public TopicPartition partition() {
    return partition;
  }

  public long from() {
    return from;
  }

  /** The end offset at assignment time: records from here on are new messages, not replay. */
  public long end() {
    return end;
  }

  /** True for an offset the scan covers. */
  public boolean covers(long offset) {
    return offset >= from && offset < end;
  }

  /** Take a record of the scanned range ({@code flag} null: unreadable, ignored). */
  public void accept(long offset, ConditionFlag flag) {
    if (!covers(offset)) {
      throw new IllegalArgumentException("offset " + offset + " is outside the scan of " + partition
          + " [" + from + ", " + end + ")");
    }
    records++;
    if (flag == null) {
      return;
    }
    Seen s = events.computeIfAbsent(flag.eventId(), k -> new Seen());
    s.latest = flag.flag();
    if (flag.event() != null) {
      s.event = flag.event();
    }
    if (flag.flag() == Flag.DATA) {
      s.data = flag.data();
    }
  }

  /** Records taken so far. */
  public int records() {
    return records;
  }

  /** The decision for every event seen, in order of first appearance. */
  public List<Step> plan() {
    List<Step> out = new ArrayList<>(events.size());
    events.forEach((id, s) -> {
      Decision d = switch (s.latest) {
        case FINISHED -> Decision.SKIP;
        case DATA -> Decision.VERIFY;
        case NEW, PROCESSING -> Decision.REPLAY;
      };
      out.add(new Step(id, d, s.event, d == Decision.VERIFY ? s.data : List.of()));
    });
    return out;
  }

  @Override
  public String toString() {
    return "recovery scan of " + partition + " [" + from + ", " + end + ")";
  }
}
