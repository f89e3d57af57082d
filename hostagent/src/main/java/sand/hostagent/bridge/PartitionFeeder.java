package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.ConditionFlag;
import sand.contracts.Event;
import sand.contracts.GrainRef;
import sand.contracts.Trace;
import sand.hostagent.bridge.PartitionFeed.Redelivery;
import sand.localbus.BusException;
import sand.localbus.LocalMessageBus;

/**
 * Feeds the partitions this host owns into the local queues of their grains (Figure 4 steps 1-2), in
 * partition order: a newly assigned partition is first handed to its {@link Recovery} (§4.2.1) until
 * that is done, then its new records go in; a full local queue pauses the partition and is tried again
 * with back-off. Also watches {@code processing} records other hosts wrote into these partitions and
 * takes their events over as soon as their writing host is known to have failed (its {@code hostDead}),
 * or when they stay unfinished for {@link BridgeSettings#takeoverTimeout()}. Consumer thread only.
 */
final class PartitionFeeder {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionFeeder.class);
  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

  private enum Outcome {
    DONE,
    FULL
  }

  private record Orphan(TopicPartition partition, String host, ObjectNode event, long seenAtMs) {}

  private final BridgeSettings settings;
  private final String host;
  private final Consumer<String, byte[]> consumer;
  private final LocalMessageBus bus;
  private final String credential;
  private final OffsetTracker tracker;
  private final InFlightEvents inFlight;
  private final Recovery recovery;
  private final Map<TopicPartition, PartitionFeed> feeds = new HashMap<>();
  private final Map<String, Orphan> orphans = new LinkedHashMap<>();
  /**
   * Whether a host is known to have failed (cluster membership): its events are taken over at once then, not after
   * the take-over timeout. It answers false when it cannot tell (the cluster state unreadable): the timeout stays
   * the fallback.
   */
  private final Predicate<String> hostDead;
  /** Metrics, read from any thread. */
  private final java.util.concurrent.atomic.AtomicLong takenOver =
      new java.util.concurrent.atomic.AtomicLong();

  private volatile int recovering;

  PartitionFeeder(
      BridgeSettings settings,
      Consumer<String, byte[]> consumer,
      LocalMessageBus bus,
      String credential,
      OffsetTracker tracker,
      InFlightEvents inFlight,
      Recovery recovery,
      Predicate<String> hostDead) {
    this.settings = settings;
    this.host = settings.hostId();
    this.consumer = consumer;
    this.bus = bus;
    this.credential = credential;
    this.tracker = tracker;
    this.inFlight = inFlight;
    this.recovery = recovery;
    this.hostDead = hostDead;
  }

  PartitionFeed feed(TopicPartition tp) {
    return feeds.get(tp);
  }

  Set<TopicPartition> partitions() {
    return feeds.keySet();
  }

  void add(PartitionFeed feed) {
    feeds.put(feed.partition, feed);
  }

  void remove(Collection<TopicPartition> parts) {
    parts.forEach(feeds::remove);
    orphans.values().removeIf(o -> parts.contains(o.partition()));
  }

  /** A record the consumer returned: held, in order, for {@link #advance} (or the partition's recovery). */
  void take(PartitionFeed feed, ConsumerRecord<String, byte[]> r) {
    feed.held.add(r);
  }

  /** Move every partition along as far as it can go now. */
  void advanceAll(long now) {
    int n = 0;
    for (PartitionFeed feed : new ArrayList<>(feeds.values())) {
      advance(feed, now);
      n += feed.recovering() ? 1 : 0;
    }
    recovering = n;
    takeOverOrphans(now);
  }

  long takenOver() {
    return takenOver.get();
  }

  int recovering() {
    return recovering;
  }

  private void advance(PartitionFeed feed, long now) {
    if (feed.retryAtMs > now) {
      setPaused(feed, true);
      return;
    }
    if (feed.recovering()) { // §4.2.1: nothing new of the partition before its recovery is done
      switch (recovery.advance(feed)) {
        case SCANNING -> {
          setPaused(feed, false); // keep reading the replay range
          return;
        }
        case DATA_LAYER_AWAY -> {
          feed.backOff(now, settings.sendBackoffMax().toMillis());
          setPaused(feed, true);
          return;
        }
        case REPLAYING, DONE -> {} // the replayed events are in feed.redeliveries
      }
    }
    while (!feed.redeliveries.isEmpty()) {
      Redelivery r = feed.redeliveries.peek();
      if (deliver(feed, r.eventId(), r.event()) == Outcome.FULL) {
        feed.backOff(now, settings.queueFullBackoffMax().toMillis());
        setPaused(feed, true);
        return;
      }
      feed.redeliveries.poll();
    }
    if (feed
        .recovering()) { // the replayed events went in; no new message before they are processed
      feed.succeeded();
      setPaused(feed, true);
      return;
    }
    while (!feed.held.isEmpty()) {
      if (handle(feed, feed.held.peek(), now) == Outcome.FULL) {
        feed.backOff(now, settings.queueFullBackoffMax().toMillis());
        setPaused(feed, true);
        return;
      }
      feed.held.poll();
    }
    feed.succeeded();
    setPaused(feed, false);
  }

  private Outcome handle(PartitionFeed feed, ConsumerRecord<String, byte[]> r, long now) {
    ConditionFlag flag = feed.parse(r, host);
    if (flag == null) {
      tracker.seen(feed.partition, r.offset(), null, null);
      return Outcome.DONE;
    }
    tracker.seen(feed.partition, r.offset(), flag.eventId(), flag.flag());
    switch (flag.flag()) {
      case NEW -> {
        orphans.remove(
            flag.eventId()); // handed back by the host whose backup it was: run here, once
        return deliver(feed, flag.eventId(), flag.event());
      }
      case PROCESSING -> {
        if (!flag.host().equals(host)) { // a backup another host wrote into our partition: watch it
          orphans.put(flag.eventId(), new Orphan(feed.partition, flag.host(), flag.event(), now));
        }
      }
      case FINISHED -> orphans.remove(flag.eventId());
      case DATA -> {}
    }
    return Outcome.DONE;
  }

  /** Put an event into the grain's local queue (Figure 4 step 2). */
  private Outcome deliver(PartitionFeed feed, String eventId, ObjectNode event) {
    long taken = System.nanoTime();
    TopicPartition tp = feed.partition;
    GrainRef grain = feed.grain;
    if (!grain.app().equals(event.path("app").asText())
        || !grain.grain().equals(event.path("grain").asText())) {
      LOG.warn(
          "[host {}] [{}] event {} is addressed to {}/{}, not to this topic's grain: dropped",
          host,
          feed,
          eventId,
          event.path("app").asText(),
          event.path("grain").asText());
      tracker.abandon(tp, eventId);
      return Outcome.DONE;
    }
    ObjectNode traced =
        event.deepCopy(); // a delivery retried after QUEUE_FULL gets one entry, not two
    try {
      Event.of(traced).trace(Trace.AGENT_IN, host, taken, System.nanoTime());
    } catch (IllegalArgumentException e) {
      LOG.warn(
          "[host {}] [{}] event {} is not a valid envelope ({}): dropped",
          host,
          feed,
          eventId,
          e.getMessage());
      tracker.abandon(tp, eventId);
      return Outcome.DONE;
    }
    byte[] bytes = ConditionFlag.toBytes(traced);
    if (!inFlight.hasRoom(grain.app(), bytes.length, settings.reports().appInFlightBytes())) {
      LOG.debug(
          "[host {}] [{}] the application has {} bytes of events in flight here: partition paused, event {} "
              + "waits",
          host,
          feed,
          inFlight.bytesOf(grain.app()),
          eventId);
      return Outcome
          .FULL; // a grain that takes its events and never reports holds no more than this
    }
    inFlight.register(
        eventId,
        new InFlightEvents.Home(
            tp.topic(), tp.partition(), grain.app(), DONE, grain.grain(), traced),
        bytes.length);
    try {
      bus.publish(credential, grain.localQueue(), bytes);
      LOG.debug(
          "[host {}] [app {} grain {}] [exec {}] event {} from {} into the local queue",
          host,
          grain.app(),
          grain.grain(),
          event.path("execution_id").asText(),
          eventId,
          tp);
      return Outcome.DONE;
    } catch (BusException e) {
      if (e.code() == BusException.Code.QUEUE_FULL
          || e.code() == BusException.Code.QUOTA_EXCEEDED) {
        LOG.debug(
            "[host {}] [{}] local queue full or the application's bus quota used up: partition paused, "
                + "event {} waits",
            host,
            feed,
            eventId);
        return Outcome.FULL;
      }
      inFlight.remove(grain.app(), eventId);
      tracker.abandon(tp, eventId);
      LOG.error(
          "[host {}] [{}] event {} cannot go into the local queue ({}): dropped",
          host,
          feed,
          eventId,
          e.toString());
      return Outcome.DONE;
    }
  }

  private void takeOverOrphans(long now) {
    if (orphans.isEmpty()) {
      return;
    }
    long timeout = settings.takeoverTimeout().toMillis();
    Predicate<String> dead = hostDead;
    for (Iterator<Map.Entry<String, Orphan>> it = orphans.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Orphan> e = it.next();
      Orphan o = e.getValue();
      boolean timedOut = now - o.seenAtMs() >= timeout;
      if (!timedOut && !isDead(dead, o.host())) {
        continue;
      }
      it.remove();
      PartitionFeed feed = feeds.get(o.partition());
      if (feed != null && tracker.isPending(o.partition(), e.getKey())) {
        LOG.info(
            "[host {}] [{}] event {} of host {} not finished {}: processing it here",
            host,
            feed,
            e.getKey(),
            o.host(),
            timedOut ? "after " + timeout + " ms" : "and that host has failed");
        feed.redeliveries.add(new Redelivery(e.getKey(), o.event()));
        takenOver.incrementAndGet();
      }
    }
  }

  private boolean isDead(Predicate<String> dead, String other) {
    try {
      return dead.test(other);
    } catch (RuntimeException e) { // cannot tell: the timeout decides
      LOG.debug("[host {}] cannot tell whether host {} is alive: {}", host, other, e.toString());
      return false;
    }
  }

  private void setPaused(PartitionFeed feed, boolean paused) {
    if (feed.paused != paused) {
      if (paused) {
        consumer.pause(List.of(feed.partition));
      } else {
        consumer.resume(List.of(feed.partition));
      }
      feed.paused = paused;
    }
  }
}
