package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.KafkaClients;
import sand.contracts.ConditionFlag;
import sand.contracts.ConditionFlag.Flag;
import sand.contracts.DataMetadata;
import sand.contracts.Event;
import sand.contracts.TopicNames;
import sand.datalayer.ApplicationData;
import sand.datalayer.DataLayerException;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.PartitionFeed.Redelivery;

/**
 * Recovery from host failures (paper §4.2.1 "Handling Host Failures", with the {@code data} flag of
 * §4.3): a partition this host is newly assigned (its previous owner failed or left) is recovered
 * before any of its new messages is handled. {@link #advance} runs the steps in order, each as far as
 * it can go now:
 *
 * <ol>
 *   <li><b>scan</b>: read the partition from its committed offset (its beginning if none) to its end
 *       offset at assignment time, keeping each event's latest condition flag ({@link Scan});
 *   <li><b>skip finished</b>: an event whose latest flag is {@code finished} was processed by the
 *       previous owner;
 *   <li><b>check data flags</b>: for an event whose latest flag is {@code data}, the data it wrote is
 *       checked against the global data layer ({@link ApplicationData#verifyGlobal}): all of it there
 *       means it was processed and only its {@code finished} flag is missing, which this host writes;
 *       otherwise it is processed again. The global data layer unreadable: checked again later, and
 *       nothing is replayed meanwhile;
 *   <li><b>replay</b>: the events not finished ({@code new}, {@code processing}, {@code data} not
 *       durable) are handed to the feeder ({@link PartitionFeed#redeliveries}), which puts them into the
 *       grain's local queue in the order they first appear in the range. Each is first counted in the
 *       {@link PoisonLedger}, on disk: one found in flight by as many starts as the ledger's {@code deaths}
 *       is a poison event (its processing took the agent down each time) and is not replayed: it goes to the
 *       dead letters, its caller gets an error result ({@code "Poison"}) and it is finished;
 *   <li><b>resume</b>: once every replayed event has finished, the partition is handed back to the
 *       {@link PartitionFeeder} for its new messages. Its progress is committed meanwhile by the
 *       {@link OffsetTracker} (the oldest unfinished record), so a host failing during a recovery
 *       leaves a smaller one to the next.
 * </ol>
 *
 * The per-partition {@link State} lives in {@link PartitionFeed#recovery} from {@link #start} until
 * the resume step. Consumer thread only (the {@code finished} flags of step 3 complete on the sender's
 * scheduler and only touch the thread-safe {@link OffsetTracker}).
 */
final class Recovery {
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  /** Where a partition's recovery stands after {@link #advance}: what the feeder does with the partition. */
  enum Status {
    /** Step 1: the replay range is not read to its end yet; keep the partition resumed. */
    SCANNING,
    /** Step 3: the global data layer cannot be read now; back off, pause, and try again. */
    DATA_LAYER_AWAY,
    /**
     * Step 5: a replayed event has not finished yet: deliver the partition's redeliveries, then pause (no new
     * message before the replay is done).
     */
    REPLAYING,
    /** Done: the partition's recovery is over; the feeder handles its new records. */
    DONE
  }

  /** What to do with one event of the replay range. */
  enum Decision {
    SKIP,
    VERIFY,
    REPLAY
  }

  /**
   * One event of the replay range and what its latest flag says to do with it.
   *
   * @param event the envelope of its latest {@code new}/{@code processing} record (null if none seen)
   * @param data  the metadata of its latest {@code data} record (VERIFY only)
   */
  record PlannedEvent(
      String eventId, Decision decision, ObjectNode event, List<DataMetadata> data) {}

  /** One partition's recovery in progress. */
  static final class State {
    final Scan scan;
    /** Steps 2-4: the events not finished, in order; null while scanning, empty once step 4 handed them over. */
    List<PlannedEvent> plan;

    State(Scan scan) {
      this.scan = scan;
    }
  }

  private final String host;
  private final Consumer<String, byte[]> consumer;
  private final LocalDataLayer data;
  private final OffsetTracker tracker;
  private final ReliableSender sender;
  private final boolean useFlags;
  private final PoisonLedger ledger;

  /** @param useFlags false: every event of a taken-over range is processed again (a baseline without flags) */
  Recovery(
      String host,
      Consumer<String, byte[]> consumer,
      LocalDataLayer data,
      OffsetTracker tracker,
      ReliableSender sender,
      boolean useFlags) {
    this(host, consumer, data, tracker, sender, useFlags, PoisonLedger.installed());
  }

  Recovery(
      String host,
      Consumer<String, byte[]> consumer,
      LocalDataLayer data,
      OffsetTracker tracker,
      ReliableSender sender,
      boolean useFlags,
      PoisonLedger ledger) {
    this.useFlags = useFlags;
    this.ledger = ledger;
    this.host = host;
    this.consumer = consumer;
    this.data = data;
    this.tracker = tracker;
    this.sender = sender;
    if (!useFlags) {
      LOG.warn(
          "[host {}] {}: recovery ignores condition flags and processes every taken-over event again (a "
              + "baseline for benchmarks, never for production)",
          host,
          "bridge." + BridgeSettings.RECOVERY_FLAGS + "=false");
    }
  }

  /** {@code feed} was just assigned with records in [{@code from}, {@code end}): recover them first. */
  void start(PartitionFeed feed, long from, long end) {
    feed.recovery = new State(new Scan(feed.partition, from, end));
  }

  /**
   * Take {@code feed}'s recovery as far as it can go now, steps in order. The consumer's records of the
   * partition wait in {@link PartitionFeed#held}; the scan takes those of the replay range from there.
   */
  Status advance(PartitionFeed feed) {
    State s = feed.recovery;
    if (!scan(feed, s)) { // 1
      return Status.SCANNING;
    }
    skipFinished(feed, s); // 2
    if (!checkDataFlags(feed, s)) { // 3
      return Status.DATA_LAYER_AWAY;
    }
    replay(feed, s); // 4
    if (!resume(feed, s)) { // 5
      return Status.REPLAYING;
    }
    return Status.DONE;
  }

  // ---- 1. scan

  /** Take the records of the replay range read so far; true once the whole range is read. */
  private boolean scan(PartitionFeed feed, State s) {
    if (s.plan != null) {
      return true;
    }
    while (!feed.held.isEmpty() && s.scan.covers(feed.held.peek().offset())) {
      ConsumerRecord<String, byte[]> r = feed.held.poll();
      ConditionFlag flag = feed.parse(r, host);
      tracker.seen(
          feed.partition,
          r.offset(),
          flag == null ? null : flag.eventId(),
          flag == null ? null : flag.flag());
      s.scan.accept(r.offset(), flag);
    }
    return consumer.position(feed.partition) >= s.scan.end();
  }

  // ---- 2. skip finished

  /** The plan: the events of the range the previous owner did not finish, in order of first appearance. */
  private void skipFinished(PartitionFeed feed, State s) {
    if (s.plan != null) {
      return;
    }
    List<PlannedEvent> all = s.scan.plan(useFlags);
    long replay = all.stream().filter(st -> st.decision() == Decision.REPLAY).count();
    long verify = all.stream().filter(st -> st.decision() == Decision.VERIFY).count();
    LOG.info(
        "[host {}] [{}] replay range [{}, {}) read: {} records, {} events: {} to process again, {} data flags "
            + "to check, {} finished",
        host,
        feed,
        s.scan.from(),
        s.scan.end(),
        s.scan.records(),
        all.size(),
        replay,
        verify,
        all.size() - replay - verify);
    s.plan = new ArrayList<>(
        all.stream().filter(st -> st.decision() != Decision.SKIP).toList());
  }

  // ---- 3. check data flags

  /**
   * Decide every {@code data} flag of the plan against the global data layer; false when it cannot be
   * read now (the feeder backs off and calls again; events already decided stay decided).
   */
  private boolean checkDataFlags(PartitionFeed feed, State s) {
    ApplicationData app = null;
    TopicPartition tp = feed.partition;
    for (int i = 0; i < s.plan.size(); i++) {
      PlannedEvent st = s.plan.get(i);
      if (st.decision() != Decision.VERIFY) {
        continue;
      }
      if (app == null) {
        app = data.forApplication(feed.grain.app());
      }
      boolean durable = true;
      try {
        for (DataMetadata d : st.data()) {
          if (!app.verifyGlobal(d)) {
            durable = false;
            break;
          }
        }
      } catch (DataLayerException e) {
        if (e.code() == DataLayerException.Code.UNAVAILABLE) {
          LOG.warn(
              "[host {}] [{}] cannot check the data flag of event {} yet: {}",
              host,
              feed,
              st.eventId(),
              e.getMessage());
          return false;
        }
        durable = false; // a name the layer refuses: the data cannot be there, process again
      }
      if (durable) {
        LOG.info(
            "[host {}] [{}] event {}: its data is in the global data layer; writing its missing finished flag",
            host,
            feed,
            st.eventId());
        sender
            .send(KafkaClients.record(
                tp.topic(), tp.partition(), ConditionFlag.finished(st.eventId(), host)))
            .thenRun(() -> tracker.finished(tp, st.eventId()));
        s.plan.set(i, new PlannedEvent(st.eventId(), Decision.SKIP, st.event(), List.of()));
      } else {
        LOG.info(
            "[host {}] [{}] event {}: its data flag does not match the global data layer; processing it again",
            host,
            feed,
            st.eventId());
        s.plan.set(i, new PlannedEvent(st.eventId(), Decision.REPLAY, st.event(), List.of()));
      }
    }
    return true;
  }

  // ---- 4. replay

  /** Hand the events to process again, in order, to the feeder's redeliveries (once: the plan is emptied). */
  private void replay(PartitionFeed feed, State s) {
    for (PlannedEvent st : s.plan) {
      if (st.decision() != Decision.REPLAY) {
        continue;
      }
      if (st.event() == null) {
        LOG.error(
            "[host {}] [{}] event {} must be processed again but its event record is not in the replay "
                + "range: skipped",
            host,
            feed,
            st.eventId());
        tracker.abandon(feed.partition, st.eventId());
      } else if (!poison(feed, st)) {
        feed.redeliveries.add(new Redelivery(st.eventId(), st.event()));
      }
    }
    s.plan = List.of();
  }

  /**
   * Count {@code st} in the poison ledger (on disk before it is replayed); true when it is a poison event, which
   * then goes to the dead letters, its caller gets an error result and it is finished, so the partition moves on.
   */
  private boolean poison(PartitionFeed feed, PlannedEvent st) {
    TopicPartition tp = feed.partition;
    String app = feed.grain.app();
    String grain = feed.grain.grain();
    int deaths;
    try {
      deaths = ledger.bump(tp.topic() + "/" + st.eventId());
    } catch (
        RuntimeException
            e) { // a full or broken disk: replaying is what recovery did before the ledger
      LOG.error(
          "[host {}] [{}] event {}: cannot count it in the {}: replayed uncounted ({})",
          host,
          feed,
          st.eventId(),
          ledger,
          e.toString());
      return false;
    }
    String exec = st.event().path(Event.EXECUTION_ID).asText();
    if (!ledger.poisoned(deaths)) {
      if (deaths > 1) {
        LOG.warn(
            "[host {}] [app {} grain {}] [exec {}] event {} was in flight at {} starts of this host agent: "
                + "replayed ({} starts make it a poison event)",
            host,
            app,
            grain,
            exec,
            st.eventId(),
            deaths,
            ledger.deaths());
      }
      return false;
    }
    String reason = "poison event: it was being processed each time the host agent of host " + host
        + " died (" + deaths + " times); not run again";
    LOG.error(
        "[host {}] [app {} grain {}] [exec {}] event {}: {}; it goes to the dead letters and its caller gets "
            + "an error",
        host,
        app,
        grain,
        exec,
        st.eventId(),
        reason);
    try {
      ledger.deadLetter(app, grain, st.eventId(), st.event(), reason);
    } catch (RuntimeException e) {
      LOG.error(
          "[host {}] [{}] event {}: cannot write the dead letter ({})",
          host,
          feed,
          st.eventId(),
          e.toString());
    }
    String frontend = st.event().path(Event.FRONTEND).asText("");
    CompletableFuture<?> answered;
    if (TopicNames.validFrontend(frontend)) {
      ObjectNode error =
          LocalRecovery.errorResult(app, grain, st.event(), Event.ERROR_POISON, reason);
      answered = sender.send(new ProducerRecord<>(
          TopicNames.responseTopic(frontend), exec, ConditionFlag.toBytes(error)));
    } else {
      answered = CompletableFuture.completedFuture(null);
    }
    String id = st.eventId();
    answered
        .thenCompose(v -> sender.send(
            KafkaClients.record(tp.topic(), tp.partition(), ConditionFlag.finished(id, host))))
        .thenRun(() -> tracker.finished(tp, id));
    return true;
  }

  // ---- 5. resume

  /** True once every replayed event has finished: the feeder takes the partition's new records from here. */
  private boolean resume(PartitionFeed feed, State s) {
    if (tracker.hasPendingBelow(feed.partition, s.scan.end())) {
      return false;
    }
    LOG.info(
        "[host {}] [{}] replay done: taking new messages from offset {}", host, feed, s.scan.end());
    feed.recovery = null;
    return true;
  }

  /**
   * Step 1's record of the replay range: the records from the committed offset up to the end offset
   * at assignment time, reduced to the latest flag of each event, in the order the events first
   * appear; {@link #plan} says what each latest flag means for steps 2-4. Not thread-safe.
   */
  static final class Scan {

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
    Scan(TopicPartition partition, long from, long end) {
      this.partition = partition;
      this.from = from;
      this.end = end;
    }

    long from() {
      return from;
    }

    /** The end offset at assignment time: records from here on are new messages, not replay. */
    long end() {
      return end;
    }

    /** True for an offset the scan covers. */
    boolean covers(long offset) {
      return offset >= from && offset < end;
    }

    /** Take a record of the scanned range ({@code flag} null: unreadable, ignored). */
    void accept(long offset, ConditionFlag flag) {
      if (!covers(offset)) {
        throw new IllegalArgumentException("offset " + offset + " is outside the scan of "
            + partition + " [" + from + ", " + end + ")");
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
    int records() {
      return records;
    }

    /**
     * The decision for every event seen, in order of first appearance: latest {@code finished} SKIP,
     * {@code data} VERIFY, {@code new} or {@code processing} REPLAY; without {@code useFlags}, REPLAY for every
     * event whose request is in the range.
     */
    List<PlannedEvent> plan(boolean useFlags) {
      List<PlannedEvent> out = new ArrayList<>(events.size());
      events.forEach((id, s) -> {
        if (!useFlags) {
          if (s.event != null) {
            out.add(new PlannedEvent(id, Decision.REPLAY, s.event, List.of()));
          }
          return;
        }
        Decision d = switch (s.latest) {
          case FINISHED -> Decision.SKIP;
          case DATA -> Decision.VERIFY;
          case NEW, PROCESSING -> Decision.REPLAY;
        };
        out.add(new PlannedEvent(id, d, s.event, d == Decision.VERIFY ? s.data : List.of()));
      });
      return out;
    }

    @Override
    public String toString() {
      return "recovery scan of " + partition + " [" + from + ", " + end + ")";
    }
  }
}
