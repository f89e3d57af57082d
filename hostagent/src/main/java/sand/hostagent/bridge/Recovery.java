package sand.hostagent.bridge;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.KafkaClients;
import sand.contracts.ConditionFlag;
import sand.contracts.DataMetadata;
import sand.datalayer.ApplicationData;
import sand.datalayer.DataLayerException;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.RecoveryScan.Decision;
import sand.hostagent.bridge.RecoveryScan.Step;

/**
 * What follows a finished {@link RecoveryScan} (paper §4.2.1, §4.3): events whose latest flag is
 * {@code data} are checked against the global data layer (metadata matches: the event was processed,
 * only its {@code finished} flag is missing, so this host writes it; otherwise it is processed again),
 * then the events to process again are queued for the partition's feed, in their order.
 */
final class Recovery {
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final String host;
  private final LocalDataLayer data;
  private final OffsetTracker tracker;
  private final ReliableSender sender;

  Recovery(String host, LocalDataLayer data, OffsetTracker tracker, ReliableSender sender) {
    this.host = host;
    this.data = data;
    this.tracker = tracker;
    this.sender = sender;
  }

  /** The replay range is read: turn it into the feed's plan (checked by {@link #verify}) or redeliveries. */
  void finishScan(PartitionFeed feed) {
    RecoveryScan scan = feed.scan;
    feed.scan = null;
    feed.replayEnd = scan.end();
    List<Step> plan = scan.plan();
    long replay = plan.stream().filter(s -> s.decision() == Decision.REPLAY).count();
    long verify = plan.stream().filter(s -> s.decision() == Decision.VERIFY).count();
    LOG.info("[host {}] [{}] replay range [{}, {}) read: {} records, {} events: {} to process again, {} data flags "
        + "to check, {} finished", host, feed, scan.from(), scan.end(), scan.records(), plan.size(), replay, verify,
        plan.size() - replay - verify);
    feed.plan = new ArrayList<>(plan);
    if (verify == 0) {
      queue(feed);
    }
  }

  /**
   * Check the plan's {@code data} flags against the global data layer; false when it cannot be read
   * now (Cassandra down: the caller backs off and calls again; steps already decided stay decided).
   */
  boolean verify(PartitionFeed feed) {
    ApplicationData app = data.forApplication(feed.grain.app());
    TopicPartition tp = feed.partition;
    for (int i = 0; i < feed.plan.size(); i++) {
      Step s = feed.plan.get(i);
      if (s.decision() != Decision.VERIFY) {
        continue;
      }
      boolean durable = true;
      try {
        for (DataMetadata d : s.data()) {
          if (!app.verifyGlobal(d)) {
            durable = false;
            break;
          }
        }
      } catch (DataLayerException e) {
        if (e.code() == DataLayerException.Code.UNAVAILABLE) {
          LOG.warn("[host {}] [{}] cannot check the data flag of event {} yet: {}", host, feed, s.eventId(),
              e.getMessage());
          return false;
        }
        durable = false; // a name the layer refuses: the data cannot be there, process again
      }
      if (durable) {
        LOG.info("[host {}] [{}] event {}: its data is in the global data layer; writing its missing finished flag",
            host, feed, s.eventId());
        sender.send(KafkaClients.record(tp.topic(), tp.partition(), ConditionFlag.finished(s.eventId(), host)))
            .thenRun(() -> tracker.finished(tp, s.eventId()));
        feed.plan.set(i, new Step(s.eventId(), Decision.SKIP, s.event(), List.of()));
      } else {
        LOG.info("[host {}] [{}] event {}: its data flag does not match the global data layer; processing it again",
            host, feed, s.eventId());
        feed.plan.set(i, new Step(s.eventId(), Decision.REPLAY, s.event(), List.of()));
      }
    }
    queue(feed);
    return true;
  }

  private void queue(PartitionFeed feed) {
    for (Step s : feed.plan) {
      if (s.decision() == Decision.REPLAY && s.event() == null) {
        LOG.error("[host {}] [{}] event {} must be processed again but its event record is not in the replay "
            + "range: skipped", host, feed, s.eventId());
        tracker.abandon(feed.partition, s.eventId());
      }
    }
    feed.redeliveries.addAll(PartitionFeed.redeliveriesOf(feed.plan));
    feed.plan = List.of();
  }
}
