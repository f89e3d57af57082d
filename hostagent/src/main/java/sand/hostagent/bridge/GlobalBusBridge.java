package sand.hostagent.bridge;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.KafkaClients;
import sand.contracts.ConditionFlag;
import sand.contracts.GrainRef;
import sand.contracts.TopicNames;
import sand.datalayer.LocalDataLayer;
import sand.localbus.LocalMessageBus;

/**
 * The host agent's side of the global bus (paper §3.2, §4.1, Figure 4 steps 1-2, §4.2.1): one Kafka
 * consumer in the agents' group, subscribed to the topics of the grains running on this host, so each
 * partition is consumed by one host. A {@code new} record taken from a partition goes into the
 * grain's local queue; {@code processing}, {@code data} and {@code finished} records are bookkeeping
 * for the {@link OffsetTracker}, which lets the committed offset advance only up to the oldest event
 * not finished.
 *
 * <p>A partition newly assigned to this host is first recovered ({@link Recovery}, §4.2.1): the records
 * from its committed offset to its end offset at assignment time are read, the events not finished
 * are put into the local queue again ({@code data} flags checked against the global data layer
 * first), and the partition's new records wait until every replayed event has finished. A full local
 * queue pauses the partition (its records wait, in order, never dropped) and is tried again with
 * back-off. A {@code processing} record another host wrote into a partition of this host is taken
 * over as soon as that host is known to have failed (the {@code hostDead} it is given), or when it is not finished
 * after {@link BridgeSettings#takeoverTimeout()} (the fallback when liveness is unknown), counted from the latest
 * {@code processing} record of the event: the host that wrote it renews it while the event is in flight there
 * ({@link #renewBackups}, {@link BackupRenewal}), so an event waiting long in a busy local queue is not run twice.
 *
 * <p>Threads: {@link #start()} runs the consumer loop on its own thread (tests call {@link #pollOnce()}
 * themselves) and renews backups on the scheduler; {@link #updateGrains} may be called from any thread. The
 * producer and the scheduler are the caller's (closed by it after this bridge); the consumer is this bridge's
 * and closed by it. The consumer must be created with {@code enable.auto.commit=false}
 * ({@link KafkaClients#consumer}).
 */
public final class GlobalBusBridge implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GlobalBusBridge.class);
  private final BridgeSettings settings;
  private final String host;
  private final Consumer<String, byte[]> consumer;
  private final Clock clock;
  private final ReliableSender sender;
  private final ScheduledExecutorService scheduler;
  private ScheduledFuture<?> renewals;
  private final OffsetTracker tracker = new OffsetTracker();
  private final InFlightEvents inFlight = new InFlightEvents();
  private final Recovery recovery; // consumer thread only
  private final PartitionFeeder feeder; // consumer thread only
  private final ConsumerLag lag;
  private final LocalRecovery localRecovery;
  private final AtomicReference<Set<GrainRef>> subscriptionChange = new AtomicReference<>();
  private final ConsumerRebalanceListener listener = new Listener();
  private volatile Map<String, List<Integer>> owned = Map.of();
  private volatile Set<GrainRef> grains = Set.of();
  private volatile boolean closing;
  private Thread thread;
  private long lastCommitMs;

  /**
   * @param consumer            this bridge's consumer (group {@link BridgeSettings#groupId()}, no auto commit)
   * @param producer            the host agent's producer (shared with the LQ_HA processor)
   * @param hostAgentCredential the host agent's credential on {@code bus}
   * @param data                the local data layer, to check {@code data} flags in recovery
   * @param scheduler           runs send retries and what follows an acknowledged send
   * @param hostDead            whether a host is known to have failed (the cluster membership): another host's
   *                            {@code processing} record in a partition of this host is taken over at once when its
   *                            host has failed, instead of after {@link BridgeSettings#takeoverTimeout()}. It must be
   *                            cheap (called from the consumer loop) and answer false when it cannot tell.
   */
  public GlobalBusBridge(
      BridgeSettings settings,
      Consumer<String, byte[]> consumer,
      Producer<String, byte[]> producer,
      LocalMessageBus bus,
      String hostAgentCredential,
      LocalDataLayer data,
      Clock clock,
      ScheduledExecutorService scheduler,
      Predicate<String> hostDead) {
    this.settings = settings;
    this.host = settings.hostId();
    this.consumer = consumer;
    this.lag = new ConsumerLag(consumer);
    this.clock = clock;
    this.scheduler = scheduler;
    this.sender = new ReliableSender(
        producer, scheduler, settings.sendBackoffFirst(), settings.sendBackoffMax(), host);
    this.recovery = new Recovery(host, consumer, data, tracker, sender, settings.recoveryFlags());
    this.feeder = new PartitionFeeder(
        settings, consumer, bus, hostAgentCredential, tracker, inFlight, recovery, hostDead);
    this.localRecovery =
        new LocalRecovery(host, bus, hostAgentCredential, inFlight, settings.lostRetries());
  }

  // ---- what the host agent calls

  /**
   * The grains running on this host now (after a deploy or undeploy): the consumer subscribes to
   * exactly their topics at its next poll; partitions of topics no longer listed are given up. The
   * events in flight of an application no longer listed are kept (its sandbox may still be draining:
   * their instances' flags are still written) until {@link #forgetApplication}.
   */
  public void updateGrains(Set<GrainRef> running) {
    Set<GrainRef> next = Set.copyOf(running);
    grains = next;
    synchronized (subscriptionChange) {
      subscriptionChange.set(next);
      subscriptionChange.notifyAll(); // an idle poll loop (no topics yet) applies it at once
    }
    LOG.info(
        "[host {}] grains running here: {}",
        host,
        new TreeSet<>(next.stream().map(GrainRef::toString).toList()));
  }

  /**
   * {@code app}'s sandbox is gone: its events in flight here will never be reported, so forget where
   * their flags would go (their partitions' next owner replays them; those backed up in another host's
   * partition are handed back to it, {@link BackupRenewal#handBack}). Does nothing while the
   * application runs here (it was deployed again meanwhile).
   */
  public void forgetApplication(String app) {
    if (grains.stream().noneMatch(g -> g.app().equals(app))) {
      BackupRenewal.handBack(app, inFlight.forgetApplication(app), sender, host);
    }
  }

  /**
   * {@code app}'s sandbox died and is being started again: the events it had taken and not finished are
   * delivered again ({@link LocalRecovery}). Call before the new sandbox runs (the sandbox manager's listener).
   */
  public void sandboxExited(String app) {
    localRecovery.sandboxExited(app);
  }

  public Set<GrainRef> grains() {
    return grains;
  }

  public boolean runsHere(GrainRef grain) {
    return grains.contains(grain);
  }

  /** Whether Kafka has assigned this host a partition of the grain's topic: the gate can take its requests. */
  public boolean hasPartitions(GrainRef grain) {
    List<Integer> mine = owned.get(grain.topic());
    return mine != null && !mine.isEmpty();
  }

  /** The partitions of each grain topic this host owns now, sorted. */
  public Map<String, List<Integer>> ownedPartitions() {
    return owned;
  }

  public OffsetTracker tracker() {
    return tracker;
  }

  public BridgeSettings settings() {
    return settings;
  }

  /** Run the consumer loop on a thread of its own until {@link #close()}. */
  public synchronized void start() {
    if (thread != null) {
      throw new IllegalStateException("bridge of host " + host + " already started");
    }
    thread = new Thread(this::run, "sand-bridge-" + host);
    thread.setDaemon(true);
    thread.start();
    long every = Math.max(1, renewEveryMs() / 2);
    renewals = scheduler.scheduleWithFixedDelay(
        () -> {
          try {
            renewBackups();
          } catch (RuntimeException e) {
            LOG.warn("[host {}] renewing backups failed: {}", host, e.toString());
          }
        },
        every,
        every,
        TimeUnit.MILLISECONDS);
  }

  /**
   * How long an event's {@code processing} backup in another host's partition goes without renewal while the event
   * is in flight here: a third of the takeover timeout, so that host, whose timer counts from the latest record,
   * sees one well within its timeout (checked every half of this: at most half the timeout between two).
   */
  long renewEveryMs() {
    return Math.max(1, settings.takeoverTimeout().toMillis() / 3);
  }

  /**
   * Send again the {@code processing} backup, in another host's partition, of each event in flight here for
   * {@link #renewEveryMs()} since its backup or last renewal (issue 26, finding 14: an event waiting in a busy local
   * queue is not taken over while this host lives). Events in flight less long cost nothing. Any thread.
   *
   * @return how many renewals were sent
   */
  int renewBackups() {
    long now = clock.millis();
    long every = renewEveryMs();
    int sent = 0;
    for (InFlightEvents.Home h : inFlight.renewable()) {
      if (h.renewal()
          .renewIfDue(
              now,
              every,
              () -> sender.send(KafkaClients.record(
                  h.topic(), h.partition(), ConditionFlag.processing(h.event(), host))))) {
        sent++;
      }
    }
    if (sent > 0) {
      LOG.debug("[host {}] renewed the backups of {} events in flight", host, sent);
    }
    return sent;
  }

  /** Now, by this bridge's clock. */
  long nowMs() {
    return clock.millis();
  }

  /** One round of the consumer loop: subscription changes, one poll, deliveries, take-overs, commit. */
  public void pollOnce() {
    applySubscription();
    if (consumer.subscription().isEmpty() && consumer.assignment().isEmpty()) {
      // No grain runs here yet: nothing to poll (Kafka refuses a poll without topics). Wait for a
      // deploy.
      synchronized (subscriptionChange) {
        if (subscriptionChange.get() == null) {
          try {
            subscriptionChange.wait(settings.pollTimeout().toMillis());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
      return;
    }
    reconcileAssignment();
    feeder.advanceAll(clock.millis()); // resumes partitions that became ready since the last poll
    ConsumerRecords<String, byte[]> records = consumer.poll(settings.pollTimeout());
    for (TopicPartition tp : records.partitions()) {
      PartitionFeed feed = feeder.feed(tp);
      List<ConsumerRecord<String, byte[]>> list = records.records(tp);
      if (feed
          == null) { // cannot happen (assigned partitions stay paused until adopted); never skip
        // records
        consumer.seek(tp, list.get(0).offset());
        continue;
      }
      for (ConsumerRecord<String, byte[]> r : list) {
        feeder.take(feed, r);
      }
    }
    long now = clock.millis();
    feeder.advanceAll(now);
    maybeCommit(now);
    lag.refresh(now);
  }

  /** Each grain topic's consumer lag here, as of the last refresh ({@link ConsumerLag}). Any thread. */
  public Map<String, Long> consumerLag() {
    return lag.byTopic();
  }

  /** Events of other hosts this host took over (their host failed or they stayed unfinished too long). */
  public long takenOver() {
    return feeder.takenOver();
  }

  /** Partitions of this host whose recovery (a replay of what was not finished) is running. */
  public int partitionsRecovering() {
    return feeder.recovering();
  }

  /** Stop the loop, commit what is safe, leave the group (the partitions go to other hosts). */
  @Override
  public void close() {
    closing = true;
    synchronized (this) {
      if (renewals != null) {
        renewals.cancel(false);
      }
    }
    Thread t;
    synchronized (this) {
      t = thread;
    }
    if (t != null) {
      consumer.wakeup();
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    commitNow();
    try {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
    } catch (RuntimeException e) {
      LOG.warn("[host {}] closing the global bus consumer: {}", host, e.toString());
    }
    LOG.info("[host {}] global bus bridge closed", host);
  }

  // ---- what the LQ_HA processor calls

  ReliableSender sender() {
    return sender;
  }

  InFlightEvents inFlight() {
    return inFlight;
  }

  /** Events delivered here and not finished, per application (the host's load report). */
  public Map<String, Number> inFlightByApplication() {
    return inFlight.countByApplication();
  }

  LocalRecovery localRecovery() {
    return localRecovery;
  }

  String host() {
    return host;
  }

  /**
   * The partition of {@code topic} a locally delivered event's backup goes to: one this host owns,
   * chosen by the event id's hash; null when it owns none (then Kafka places it by the key).
   */
  Integer backupPartition(String topic, String eventId) {
    List<Integer> mine = owned.get(topic);
    if (mine == null || mine.isEmpty()) {
      return null;
    }
    return mine.get(Math.floorMod(eventId.hashCode(), mine.size()));
  }

  /** This host's {@code finished} record of the event is in Kafka. */
  void eventFinished(String topic, int partition, String eventId) {
    tracker.finished(new TopicPartition(topic, partition), eventId);
  }

  // ---- the consumer loop

  private void run() {
    LOG.info("[host {}] global bus bridge started (group {})", host, settings.groupId());
    long backoff = settings.sendBackoffFirst().toMillis();
    while (!closing) {
      try {
        pollOnce();
        backoff = settings.sendBackoffFirst().toMillis();
      } catch (WakeupException e) {
        // close() woke the poll up; the loop condition ends it
      } catch (RuntimeException e) {
        LOG.warn(
            "[host {}] global bus poll failed: {}; trying again in {} ms",
            host,
            e.toString(),
            backoff);
        sleep(backoff);
        backoff = Math.min(settings.sendBackoffMax().toMillis(), backoff * 2);
      }
    }
  }

  private void maybeCommit(long now) {
    if (now - lastCommitMs < settings.commitInterval().toMillis()) {
      return;
    }
    lastCommitMs = now;
    Map<TopicPartition, OffsetAndMetadata> offsets = tracker.toCommit();
    if (offsets.isEmpty()) {
      return;
    }
    consumer.commitAsync(offsets, (committed, error) -> {
      if (error != null) {
        tracker.commitFailed(offsets);
        LOG.warn(
            "[host {}] commit of {} failed: {}; it is tried again",
            host,
            offsets,
            error.toString());
      } else {
        LOG.debug("[host {}] committed {}", host, offsets);
      }
    });
  }

  private void commitNow() {
    Map<TopicPartition, OffsetAndMetadata> offsets = tracker.toCommit();
    for (int attempt = 0; attempt < 2 && !offsets.isEmpty(); attempt++) {
      try {
        consumer.commitSync(offsets);
        return;
      } catch (WakeupException e) {
        // the wakeup meant for the loop hit this call instead: try once more
      } catch (RuntimeException e) {
        LOG.warn("[host {}] final commit of {} failed: {}", host, offsets, e.toString());
        return;
      }
    }
  }

  // ---- subscription and assignment

  private void applySubscription() {
    Set<GrainRef> change = subscriptionChange.getAndSet(null);
    if (change == null) {
      return;
    }
    Set<String> topics =
        change.stream().map(GrainRef::topic).collect(Collectors.toCollection(TreeSet::new));
    if (topics.isEmpty()) {
      release(new ArrayList<>(feeder.partitions()), true);
      consumer.unsubscribe();
    } else {
      consumer.subscribe(topics, listener);
    }
    LOG.info("[host {}] subscribed to {} grain topics", host, topics.size());
  }

  /** Partitions assigned but not adopted (adoption failed in the listener): adopt them now. */
  private void reconcileAssignment() {
    List<TopicPartition> missing = new ArrayList<>();
    for (TopicPartition tp : consumer.assignment()) {
      if (feeder.feed(tp) == null) {
        missing.add(tp);
      }
    }
    if (!missing.isEmpty()) {
      adopt(missing);
    }
  }

  /** Start feeding newly assigned partitions: each from its committed offset, with a replay when needed. */
  private void adopt(Collection<TopicPartition> parts) {
    Map<TopicPartition, Long> ends = consumer.endOffsets(parts);
    for (TopicPartition tp : parts) {
      GrainRef grain = TopicNames.parseGrainTopic(tp.topic()).orElse(null);
      if (grain == null) {
        LOG.warn("[host {}] assigned {}, which is not a grain topic: left paused", host, tp);
        continue;
      }
      long from = consumer.position(tp);
      long end = ends.getOrDefault(tp, from);
      tracker.assigned(tp, from);
      PartitionFeed feed = new PartitionFeed(tp, grain);
      feed.paused = true; // paused in the listener until adopted
      if (from < end) {
        recovery.start(feed, from, end);
        LOG.info(
            "[host {}] [{}] assigned: replaying offsets [{}, {}) before new messages",
            host,
            feed,
            from,
            end);
      } else {
        LOG.info("[host {}] [{}] assigned at offset {}", host, feed, from);
      }
      feeder.add(feed);
    }
    refreshOwned();
  }

  /**
   * Give partitions up: commit what is safe (up to the oldest event not finished), forget them.
   *
   * <p>This runs on the consumer thread, inside {@code poll} (the rebalance listener): while it waits, no
   * partition of this host delivers anything, so every application here would stall. It therefore does
   * not wait for the revoked partitions' events in flight while this host keeps other partitions: what is
   * finished is committed, and the events still running are left to the next owner, which replays them
   * from the committed offset (§4.2.1). That keeps at-least-once, and the condition flags keep the
   * replay small: the instances running here keep their flags' home ({@link InFlightEvents} is not
   * touched), so they still write their {@code data} and {@code finished} flags into the partition, and
   * the next owner skips an event whose {@code finished} flag is in its replay range and, for one whose
   * {@code data} flag matches the global data layer, only writes the missing {@code finished}. Only when the
   * revocation leaves this host no partition (its last grain undeployed, a revoke-all rebalance) is there
   * nothing to stall, and it waits up to {@link BridgeSettings#revokeDrain()} for those events, which
   * spares their re-runs.
   */
  private void release(Collection<TopicPartition> parts, boolean commit) {
    Set<TopicPartition> mine = new HashSet<>(parts);
    mine.retainAll(feeder.partitions());
    if (mine.isEmpty()) {
      return;
    }
    boolean keepsOthers = mine.size() < feeder.partitions().size(); // mine is a subset of them
    if (commit && !closing && !keepsOthers) {
      long deadline = System.nanoTime() + settings.revokeDrain().toNanos();
      while (System.nanoTime() < deadline
          && mine.stream().anyMatch(tp -> tracker.pendingRecords(tp) > 0)) {
        sleep(20);
      }
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = commit ? tracker.toCommit(mine) : Map.of();
    if (!offsets.isEmpty()) {
      try {
        consumer.commitSync(offsets);
      } catch (RuntimeException e) {
        LOG.warn(
            "[host {}] commit of {} before giving the partitions up failed: {}",
            host,
            offsets,
            e.toString());
      }
    }
    int unfinished = mine.stream().mapToInt(tracker::pendingRecords).sum();
    feeder.remove(mine);
    mine.forEach(tracker::revoked);
    refreshOwned();
    LOG.info(
        "[host {}] gave up {} (committed {}; {} records of events not finished left to the next owner)",
        host,
        new TreeSet<>(mine.stream().map(Object::toString).toList()),
        offsets.values().stream().map(OffsetAndMetadata::offset).toList(),
        unfinished);
  }

  private void refreshOwned() {
    Map<String, List<Integer>> m = new TreeMap<>();
    for (TopicPartition tp : feeder.partitions()) {
      m.computeIfAbsent(tp.topic(), k -> new ArrayList<>()).add(tp.partition());
    }
    m.values().forEach(l -> l.sort(null));
    owned = Map.copyOf(m);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Runs inside {@code consumer.poll}, on the consumer thread. */
  private final class Listener implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> parts) {
      release(parts, true);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> parts) {
      release(parts, false); // another host may own them already: committing is not ours to do
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> parts) {
      if (parts.isEmpty()) {
        return;
      }
      consumer.pause(parts); // nothing is fetched for them before they are adopted
      try {
        adopt(parts);
      } catch (RuntimeException e) {
        LOG.warn(
            "[host {}] cannot start {} yet ({}); trying again at the next poll",
            host,
            parts,
            e.toString());
      }
    }
  }
}
