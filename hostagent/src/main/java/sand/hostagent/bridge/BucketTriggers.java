package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.BucketTables;
import sand.cluster.BucketTables.Bucket;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.ExecutionRecord;
import sand.cluster.FrontendTables.FrontendInfo;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.contracts.Rules;
import sand.contracts.Trace;
import sand.contracts.Workflow;
import sand.contracts.gate.Admission;

/**
 * Data triggers (docs/data-triggers.md): a grain's write of key K into its account's triggerable bucket B (an
 * entry of its map {@link Rules#BUCKET_MAP_PREFIX} + B) starts each of B's target applications with
 * {@code {"trigger_type": "storage", "key": K, "value": v, "source": B}}, from this host: into the target's entry
 * grain's local queue when its sandbox runs here (backed up as {@code processing}, like any locally produced event),
 * else as a {@code new} record on its topic. Each start is an execution: its record is written here (start, and a log
 * line naming the bucket), its trace begins with a {@code trigger} entry, and its tag names a live frontend, which
 * records its result or error as for an asynchronous request. The event is kept ({@link BucketTables.FiredEvent},
 * as long as the execution's record) for that frontend: a failed end is retried there, per the target's
 * {@code settings.retry}, and dead-lettered after its last attempt (sand.frontend.trigger.BucketRetries).
 */
public final class BucketTriggers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BucketTriggers.class);
  /** How long a read of the cluster state (a bucket, an application, the frontends) is used before reading again. */
  static final Duration CACHE_FOR = Duration.ofSeconds(5);
  /** Most cached buckets and applications (a cache that outgrows it starts over). */
  static final int CACHE_MAX = 10_000;
  /** Start records waiting for Cassandra; beyond, the writer's own thread writes (backpressure). */
  static final int RECORDS_QUEUED = 1024;
  /**
   * Bytes of triggered events whose Kafka send (backup or forward) is not acknowledged yet, at most; beyond, the
   * writer waits (Kafka away: the writes slow down instead of filling the heap with retried sends).
   */
  static final long MAX_UNACKNOWLEDGED_BYTES = 32L << 20;
  /** How long a writer waits for room before its write's triggers are given up (logged and counted "failed"). */
  static final Duration ROOM_WAIT = Duration.ofSeconds(30);

  private static final SecureRandom RANDOM = new SecureRandom();

  private record Cached<T>(T value, Instant read) {}

  /** What fired so far, by how it was delivered: local, kafka, skipped (target undeployed), failed. */
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

  private final String host;
  private final ClusterStore store;
  private final ExecutionTag tags;
  private final LocalDelivery delivery;
  private final Clock clock;
  private final Duration ttl;
  private final Map<String, Cached<Optional<Bucket>>> buckets = new ConcurrentHashMap<>();
  private final Map<String, Cached<Optional<ApplicationRecord>>> apps = new ConcurrentHashMap<>();
  private volatile Cached<List<String>> frontends;
  private final ThreadPoolExecutor records;
  private final Object room = new Object();
  private final long maxUnacknowledgedBytes;
  private final Duration roomWait;
  private long unacknowledgedBytes; // guarded by room

  /**
   * @param ttl how long the execution records and log lines written here are kept (the host agent's log.ttl)
   */
  public BucketTriggers(
      String host,
      ClusterStore store,
      ExecutionTag tags,
      LocalDelivery delivery,
      Clock clock,
      Duration ttl) {
    this(host, store, tags, delivery, clock, ttl, MAX_UNACKNOWLEDGED_BYTES, ROOM_WAIT);
  }

  /** With other bounds on the sends waiting for Kafka (tests). */
  BucketTriggers(
      String host,
      ClusterStore store,
      ExecutionTag tags,
      LocalDelivery delivery,
      Clock clock,
      Duration ttl,
      long maxUnacknowledgedBytes,
      Duration roomWait) {
    this.maxUnacknowledgedBytes = maxUnacknowledgedBytes;
    this.roomWait = roomWait;
    this.host = host;
    this.store = store;
    this.tags = tags;
    this.delivery = delivery;
    this.clock = clock;
    this.ttl = ttl;
    this.records = new ThreadPoolExecutor(
        1,
        1,
        30,
        TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(RECORDS_QUEUED),
        r -> {
          Thread t = new Thread(r, "bucket-trigger-records");
          t.setDaemon(true);
          return t;
        },
        new ThreadPoolExecutor.CallerRunsPolicy());
    records.allowCoreThreadTimeOut(true);
  }

  /** The buckets of {@code owner} changed (a control event): read them again at their next write. */
  public void forget(String owner) {
    buckets.keySet().removeIf(k -> k.startsWith(owner + "\n"));
  }

  /** Counts of fired triggers by delivery (metrics). */
  public Map<String, Long> counts() {
    Map<String, Long> out = new java.util.TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  private void count(String what) {
    counts.computeIfAbsent(what, k -> new LongAdder()).increment();
  }

  /** {@link sand.datalayer.LocalDataLayer.MapWriteListener}: a grain of {@code appId} wrote a map entry here. */
  public void mapEntryPut(String appId, String map, String key, byte[] value) {
    if (!map.startsWith(Rules.BUCKET_MAP_PREFIX) || value == null) {
      return;
    }
    String bucketName = map.substring(Rules.BUCKET_MAP_PREFIX.length());
    Optional<ApplicationRecord> writer = application(appId);
    if (writer.isEmpty()) {
      return;
    }
    Optional<Bucket> bucket = bucket(writer.get().owner(), bucketName);
    if (bucket.isEmpty() || bucket.get().targets().isEmpty()) {
      return; // an ordinary map of the application, or a bucket nobody listens to
    }
    long fired = System.nanoTime();
    ObjectNode input = JsonNodeFactory.instance.objectNode();
    input
        .put("trigger_type", Rules.BUCKET_TRIGGER_TYPE)
        .put("key", key)
        .put("value", new String(value, StandardCharsets.UTF_8))
        .put("source", bucketName);
    for (String target : bucket.get().targets()) {
      fire(writer.get(), bucketName, key, target, input, fired);
    }
  }

  private void fire(
      ApplicationRecord writer,
      String bucket,
      String key,
      String targetId,
      ObjectNode input,
      long fired) {
    Optional<ApplicationRecord> target = application(targetId);
    if (target.isEmpty()
        || !HostAgentTables.DESIRED_DEPLOYED.equals(target.get().desired())
        || !target.get().owner().equals(writer.owner())) {
      count("skipped");
      LOG.debug(
          "[host {}] [app {}] bucket '{}': target {} is not deployed; not started",
          host,
          writer.appId(),
          bucket,
          targetId);
      return;
    }
    String frontend = frontend();
    if (frontend == null) {
      count("failed");
      LOG.warn(
          "[host {}] [app {}] bucket '{}': no live frontend to record an execution of {}; not started",
          host,
          writer.appId(),
          bucket,
          targetId);
      return;
    }
    String entry = Workflow.parse(target.get().workflow()).entry();
    String executionId = newId();
    Instant now = clock.instant();
    String source = "bucket:" + bucket;
    Event event = Event.request(
            newId(),
            executionId,
            targetId,
            entry,
            frontend,
            input.deepCopy(),
            now.getEpochSecond() * 1_000_000_000L + now.getNano(),
            tags.of(targetId, executionId, frontend))
        .trace(Trace.TRIGGER, source + "@" + host, fired);
    long bytes = 2L * (input.path("value").asText().length() + key.length()) + 1024;
    if (!reserve(bytes)) {
      count("failed");
      LOG.warn(
          "[host {}] [app {}] bucket '{}': {} bytes of triggered events wait for Kafka for {} s; the write of "
              + "key '{}' starts nothing",
          host,
          targetId,
          bucket,
          maxUnacknowledgedBytes,
          roomWait.toSeconds(),
          key);
      return;
    }
    record(target.get(), executionId, frontend, now, bucket, key, writer, entry, input);
    CompletableFuture<Object> backedUp = new CompletableFuture<>();
    Admission a = delivery.deliver(event, backedUp);
    if (a == Admission.ACCEPTED) {
      backedUp.whenComplete((md, e) -> release(bytes));
      count("local");
    } else {
      // not here (or its queue is full): the hosts that run it take it from Kafka, where it waits
      // on disk, not in memory
      delivery.forward(event).whenComplete((md, e) -> {
        release(bytes);
        if (e != null) {
          LOG.warn(
              "[host {}] [app {}] [exec {}] bucket '{}': the triggered event could not be sent: {}",
              host,
              targetId,
              executionId,
              bucket,
              e.toString());
        }
      });
      count("kafka");
    }
    LOG.debug(
        "[host {}] [app {}] [exec {}] started by a write to bucket '{}' ({})",
        host,
        targetId,
        executionId,
        bucket,
        a);
  }

  /** Wait (bounded) until {@code bytes} more fit among the unacknowledged sends; false when they never did. */
  private boolean reserve(long bytes) {
    long deadline = System.nanoTime() + roomWait.toNanos();
    synchronized (room) {
      while (unacknowledgedBytes > 0 && unacknowledgedBytes + bytes > maxUnacknowledgedBytes) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          room.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      unacknowledgedBytes += bytes;
      return true;
    }
  }

  private void release(long bytes) {
    synchronized (room) {
      unacknowledgedBytes -= bytes;
      room.notifyAll();
    }
  }

  /**
   * The event kept for retries, the execution's start record and the log line naming its trigger, written behind
   * (bounded).
   */
  private void record(
      ApplicationRecord target,
      String executionId,
      String frontend,
      Instant now,
      String bucket,
      String key,
      ApplicationRecord writer,
      String entry,
      ObjectNode input) {
    BucketTables.FiredEvent fired = new BucketTables.FiredEvent(
        executionId, target.appId(), target.name(), bucket, input.toString());
    ExecutionRecord start = new ExecutionRecord(
        executionId,
        target.appId(),
        target.owner(),
        "running",
        null,
        null,
        now,
        null,
        frontend,
        null);
    String line = "started by the trigger bucket:" + bucket + ": application '" + writer.name()
        + "' wrote key '" + key + "' on host " + host;
    records.execute(() -> {
      try {
        store.buckets().putFiredEvent(fired, ttl); // first: a failure may reach its frontend soon
        store.startExecution(start, ttl);
        store.appendLogs(
            List.of(new HostAgentTables.LogLine(
                executionId,
                now.getEpochSecond() * 1_000_000_000L + now.getNano(),
                0,
                entry,
                "INFO",
                line)),
            ttl);
      } catch (RuntimeException e) {
        LOG.warn(
            "[host {}] [app {}] [exec {}] could not record the triggered execution's start: {}",
            host,
            target.appId(),
            executionId,
            e.toString());
      }
    });
  }

  private Optional<ApplicationRecord> application(String appId) {
    Cached<Optional<ApplicationRecord>> c = apps.get(appId);
    if (c == null || c.read().plus(CACHE_FOR).isBefore(clock.instant())) {
      if (apps.size() > CACHE_MAX) {
        apps.clear();
      }
      c = new Cached<>(store.application(appId), clock.instant());
      apps.put(appId, c);
    }
    return c.value();
  }

  private Optional<Bucket> bucket(String owner, String name) {
    String k = owner + "\n" + name;
    Cached<Optional<Bucket>> c = buckets.get(k);
    if (c == null || c.read().plus(CACHE_FOR).isBefore(clock.instant())) {
      if (buckets.size() > CACHE_MAX) {
        buckets.clear();
      }
      c = new Cached<>(store.buckets().bucket(owner, name), clock.instant());
      buckets.put(k, c);
    }
    return c.value();
  }

  /**
   * A live frontend (heartbeat within {@link #CACHE_FOR} x 3), picked at random per execution: it records the
   * result. One that dies meanwhile has its response topic taken over by a live one, which records it then.
   */
  private String frontend() {
    Cached<List<String>> c = frontends;
    Instant now = clock.instant();
    if (c == null || c.read().plus(CACHE_FOR).isBefore(now)) {
      List<String> live = new ArrayList<>();
      String newest = null;
      Instant newestBeat = Instant.MIN;
      for (FrontendInfo f : store.frontends()) {
        if (f.heartbeat().isAfter(now.minus(CACHE_FOR.multipliedBy(3)))) {
          live.add(f.frontendId());
        }
        if (f.heartbeat().isAfter(newestBeat)) {
          newest = f.frontendId();
          newestBeat = f.heartbeat();
        }
      }
      if (live.isEmpty() && newest != null) {
        live.add(newest); // its topic is adopted by whichever frontend comes up
      }
      c = new Cached<>(List.copyOf(live), now);
      frontends = c;
    }
    List<String> live = c.value();
    return live.isEmpty() ? null : live.get(RANDOM.nextInt(live.size()));
  }

  private static String newId() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  @Override
  public void close() {
    records.shutdown();
  }
}
