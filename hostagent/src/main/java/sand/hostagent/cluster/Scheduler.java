package sand.hostagent.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ApplicationRecords.AppRecord;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostSchedules;
import sand.cluster.HostSchedules.HostSchedule;
import sand.contracts.ApplicationLimits;
import sand.contracts.ApplicationSettings;
import sand.contracts.ControlEvent;
import sand.contracts.ElasticPlacement;
import sand.contracts.LoadReport;
import sand.contracts.TopicNames;

/**
 * The cluster's scheduler (issue 33; docs/operations.md "Elastic placement"): places the applications that set
 * {@code max_hosts} by their load. Every host agent runs this; at each look only the one elected acts: the live host
 * of the lowest id. When its host dies its heartbeat ages out and the next live host takes over at its next look,
 * with nothing to hand over (what it remembers of each application only delays a scale-in).
 *
 * <p>A decision ({@link Placement}) is written as the application's hosts ({@link HostAgentTables#setPlacement}) and
 * as its {@code placement} record (hosts, reason, by, at: what {@code sand status} shows), then announced on {@code
 * sand.control}: the host agents reconcile it (a host added deploys it, a host removed drains it through the
 * redeploy path and undeploys it; its partitions move to the others, which recover their unfinished events), the
 * frontends forget what they cached of it.
 */
public final class Scheduler {
  private static final Logger LOG = LoggerFactory.getLogger(Scheduler.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String hostId;
  private final ClusterStore store;
  private final Supplier<Set<String>> liveHosts;
  private final ApplicationLimits limits;
  private final SchedulerSettings settings;
  private final Producer<String, byte[]> producer;
  private final Clock clock;
  private final Map<String, Placement.Memory> memory = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> scaleEvents = new ConcurrentHashMap<>();
  private volatile boolean elected;
  private volatile double lastLookSeconds;

  /**
   * @param liveHosts the hosts alive now, this one among them (the membership's read)
   * @param producer  sends the control events
   */
  public Scheduler(
      String hostId,
      ClusterStore store,
      Supplier<Set<String>> liveHosts,
      ApplicationLimits limits,
      SchedulerSettings settings,
      Producer<String, byte[]> producer,
      Clock clock) {
    this.hostId = hostId;
    this.store = store;
    this.liveHosts = liveHosts;
    this.limits = limits;
    this.settings = settings;
    this.producer = producer;
    this.clock = clock;
  }

  /** Look every {@code scheduler.period.ms} on {@code timer}. */
  public Scheduler start(ScheduledExecutorService timer) {
    long every = settings.period().toMillis();
    timer.scheduleWithFixedDelay(this::lookSafely, every, every, TimeUnit.MILLISECONDS);
    return this;
  }

  private void lookSafely() {
    try {
      look();
    } catch (RuntimeException e) {
      LOG.warn("[host {}] scheduler: {}; next look in {}", hostId, e.toString(), settings.period());
    }
  }

  /** One look: when this host is the elected scheduler, decide every elastic application's placement. */
  void look() {
    long t0 = System.nanoTime();
    Set<String> live = liveHosts.get();
    boolean now =
        live.contains(hostId) && live.stream().sorted().findFirst().orElse("").equals(hostId);
    if (now != elected) {
      LOG.info("[host {}] {} the cluster's scheduler", hostId, now ? "is now" : "is no longer");
      elected = now;
      memory.clear(); // a scheduler elected again starts anew
    }
    if (!now) {
      lastLookSeconds = 0;
      return;
    }
    Map<String, HostSchedule> schedules = store.hostSchedules().all();
    Set<String> draining = new HashSet<>();
    Set<String> schedulable = new HashSet<>(live);
    schedules.forEach((h, s) -> {
      schedulable.remove(h); // cordoned or draining: nothing new is placed there
      if (HostSchedules.DRAINING.equals(s.state())) {
        draining.add(h);
      }
    });
    Map<String, LoadReport> loads = new HashMap<>();
    store.hostLoads().all().forEach((h, l) -> loads.put(h, LoadReport.parse(l.load())));
    Placement.Cluster cluster =
        new Placement.Cluster(Set.copyOf(live), schedulable, draining, loads);
    Instant at = clock.instant();
    Set<String> seen = new HashSet<>();
    for (ApplicationRecord app : store.applications()) {
      Optional<ElasticPlacement> want = ElasticPlacement.of(app.settings());
      if (want.isEmpty() || !HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())) {
        continue;
      }
      seen.add(app.appId());
      Placement.Memory m = memory.computeIfAbsent(app.appId(), k -> new Placement.Memory());
      Placement.decide(
              app.appId(),
              want.get().capped(limits.hostsMax()),
              sandboxMb(app),
              app.hosts(),
              cluster,
              m,
              settings,
              at)
          .ifPresent(d -> apply(app, d, at));
    }
    memory.keySet().retainAll(seen);
    lastLookSeconds = (System.nanoTime() - t0) / 1e9;
  }

  /** What the application's sandbox may use; a deploy refuses settings that do not parse, so none here should. */
  private static long sandboxMb(ApplicationRecord app) {
    try {
      return ApplicationSettings.fromJson(app.settings()).sandboxMemoryMb();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private void apply(ApplicationRecord app, Placement.Decision d, Instant at) {
    LOG.info(
        "[app {} id {}] placed on {} (was {}): {}",
        app.name(),
        app.appId(),
        d.hosts(),
        app.hosts().isEmpty() ? "every live host" : app.hosts(),
        d.reason());
    store.setPlacement(app.appId(), d.hosts());
    var v = JSON.createObjectNode()
        .put("reason", d.reason())
        .put("by", hostId)
        .put("at", at.toString());
    d.hosts().forEach(v.putArray("hosts")::add);
    store.putAppRecord(new AppRecord(
        app.appId(),
        ElasticPlacement.RECORD_KIND,
        ElasticPlacement.RECORD_ID,
        v.toString().getBytes(StandardCharsets.UTF_8)));
    scaleEvents.computeIfAbsent(d.direction(), k -> new AtomicLong()).incrementAndGet();
    producer.send(new ProducerRecord<>(
        TopicNames.CONTROL,
        app.appId(),
        ControlEvent.application(ControlEvent.DEPLOY, app.appId(), null)));
  }

  /** Whether this host was the elected scheduler at its last look. */
  public boolean elected() {
    return elected;
  }

  /** Placement changes this host decided, by direction (out, in, replace): the metrics' counter. */
  public Map<String, Long> scaleEvents() {
    return scaleEvents.entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()));
  }

  /** How long its last look as the scheduler took (the scheduler's own cost). */
  public double lastLookSeconds() {
    return lastLookSeconds;
  }
}
