package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.KafkaClients;
import sand.contracts.ConditionFlag;
import sand.contracts.DataMetadata;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.contracts.GrainRef;
import sand.contracts.TopicNames;
import sand.contracts.Trace;
import sand.datalayer.ApplicationData;
import sand.datalayer.DataLayerException;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.InFlightEvents.Home;
import sand.hostagent.bridge.InstanceReport.DataItem;
import sand.localbus.HostAgentMessage;
import sand.localbus.LocalMessageBus;

/**
 * The host agent's work on LQ_HA (paper Figure 4 steps 5b-10b, §4.3). For every report a grain
 * instance published:
 *
 * <ul>
 *   <li>an output the instance delivered locally is backed up, {@code processing}, to a partition this
 *       host owns of the next grain's topic (the local delivery happened already: it never waits for
 *       Kafka);
 *   <li>an output for a grain not running here is published {@code new} to that grain's topic;
 *   <li>an output to {@code end} (the workflow's result) goes to the response topic of its frontend;
 *   <li>when the report says the instance finished: once those sends are acknowledged and the data the
 *       instance wrote is in the global data layer, a {@code data} flag with the data's metadata, then
 *       the {@code finished} flag of the event the instance handled, both in that event's partition.
 * </ul>
 *
 * <p>A report's application is the one the bus stamped on it: a report that names another
 * application, in itself or in one of its events, is refused whole. An output is refused (logged, counted,
 * not sent) when its {@link ExecutionTag} does not prove that its execution entered through that
 * application and answers to the frontend it names, or when it names a grain that is not in the
 * application's workflow: a grain can neither answer another application's caller nor make Kafka topics.
 *
 * <p>Reports whose sends Kafka has not acknowledged hold at most {@link BridgeSettings#maxPendingBytes()};
 * beyond that this processor stops taking reports (LQ_HA fills up, then grain instances see QUEUE_FULL
 * and back off): nothing is dropped while Kafka or Cassandra is away.
 */
public final class HostAgentQueueProcessor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HostAgentQueueProcessor.class);
  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

  private final GlobalBusBridge bridge;
  private final LocalMessageBus bus;
  private final String credential;
  private final LocalDataLayer data;
  private final java.util.function.Consumer<InstanceReport> listener;
  private final ExecutionTag tags;
  private final BiPredicate<String, String> knownGrain;
  private volatile FrontendGate gate;
  private volatile WorkerHealth health;
  private final AtomicLong refused = new AtomicLong();
  private final BridgeSettings settings;
  private final String host;
  private final ReliableSender sender;
  private final InFlightEvents inFlight;
  private final LocalRecovery recovery;
  private final Semaphore budget;
  private final int budgetPermits;
  /** Sends of {@code sent} reports, by "app/event" their instance handles: its finished flag waits for them. */
  private final ConcurrentHashMap<String, CompletableFuture<Void>> sentOutputs = new ConcurrentHashMap<>();
  private volatile boolean closing;
  private Thread thread;

  /**
   * @param tags       checks that an output's execution entered through its application (the cluster secret)
   * @param knownGrain whether (application, grain) is a grain of that application's workflow
   * @param listener   also gets every accepted report (logs, instance tracking); may be null
   */
  public HostAgentQueueProcessor(GlobalBusBridge bridge, LocalMessageBus bus, String hostAgentCredential,
                                 LocalDataLayer data, ExecutionTag tags, BiPredicate<String, String> knownGrain,
                                 java.util.function.Consumer<InstanceReport> listener) {
    this.tags = tags;
    this.knownGrain = knownGrain;
    this.bridge = bridge;
    this.bus = bus;
    this.credential = hostAgentCredential;
    this.data = data;
    this.listener = listener == null ? r -> { } : listener;
    this.settings = bridge.settings();
    this.host = bridge.host();
    this.sender = bridge.sender();
    this.inFlight = bridge.inFlight();
    this.recovery = new LocalRecovery(host, bus, hostAgentCredential, inFlight, settings.lostRetries());
    this.budgetPermits = (int) Math.min(Integer.MAX_VALUE, settings.maxPendingBytes());
    this.budget = new Semaphore(budgetPermits);
  }

  /** Take one batch from LQ_HA (waiting up to {@link BridgeSettings#haPollTimeout()}) and handle it. */
  public int processOnce() throws InterruptedException {
    List<HostAgentMessage> batch = bus.pollHostAgent(credential, settings.haPollMessages(),
        (int) settings.haPollTimeout().toMillis());
    long taken = System.nanoTime();
    for (HostAgentMessage m : batch) {
      try {
        handle(m, taken);
      } catch (RuntimeException e) { // one bad report must not cost the rest of the batch
        LOG.error("[host {}] [app {}] LQ_HA report dropped: {}", host, m.application(), e.toString(), e);
      }
    }
    return batch.size();
  }

  /** Results also go to frontends through {@code gate} (their response topics still get every one). */
  public void setGate(FrontendGate gate) {
    this.gate = gate;
  }

  /** What a sandbox's supervisor says of a grain worker (state "crash-looping" or "running"). */
  public interface WorkerHealth {
    void report(String app, String grain, String state, String message);
  }

  /** Reports of type "worker" go to {@code health} (the application of the bus's stamp, never the report's). */
  public void setWorkerHealth(WorkerHealth health) {
    this.health = health;
  }

  /**
   * {@code app}'s sandbox died and is being started again: the events it had taken and not finished are
   * delivered again ({@link LocalRecovery}). Call before the new sandbox runs.
   */
  public void sandboxExited(String app) {
    recovery.sandboxExited(app);
  }

  /**
   * A supervisor's report on a grain worker, for the application the bus stamped: a worker that died has
   * what it had taken delivered again; its health goes to {@code health}.
   */
  private void workerReport(HostAgentMessage m, JsonNode r) {
    WorkerHealth h = health;
    String grain = r.path("grain").asText("");
    if ("exited".equals(r.path("state").asText()) && knownGrain.test(m.application(), grain)) {
      recovery.workerExited(m.application(), grain);
      return;
    }
    if (h != null) { // it checks the grain itself: a sandbox still starting is not known here yet
      h.report(m.application(), grain, r.path("state").asText(""), r.path("message").asText(""));
    }
  }

  /** Outputs refused so far (forged execution, unknown grain). */
  public long refusedOutputs() {
    return refused.get();
  }

  /** Bytes of reports whose Kafka sends or data backups are not done yet. */
  public long pendingBytes() {
    return budgetPermits - budget.availablePermits();
  }

  /** Run {@link #processOnce()} on a thread of its own until {@link #close()}. */
  public synchronized void start() {
    if (thread != null) {
      throw new IllegalStateException("LQ_HA processor of host " + host + " already started");
    }
    thread = new Thread(this::run, "sand-lqha-" + host);
    thread.setDaemon(true);
    thread.start();
  }

  /** Stop taking reports, then wait up to 10 s for the sends of those taken. */
  @Override
  public void close() {
    closing = true;
    Thread t;
    synchronized (this) {
      t = thread;
    }
    try {
      if (t != null) {
        t.join(10_000);
      }
      if (!budget.tryAcquire(budgetPermits, 10, TimeUnit.SECONDS)) {
        LOG.warn("[host {}] closing with {} bytes of reports not yet in Kafka: their events are replayed by the "
            + "partitions' next owner", host, pendingBytes());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("[host {}] LQ_HA processor closed", host);
  }

  private void run() {
    LOG.info("[host {}] LQ_HA processor started", host);
    while (!closing) {
      try {
        processOnce();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.error("[host {}] LQ_HA processing failed: {}", host, e.toString(), e);
      }
    }
  }

  void handle(HostAgentMessage m) throws InterruptedException {
    handle(m, System.nanoTime());
  }

  /** @param taken when the report was taken from LQ_HA (monotonic ns, for the result's trace) */
  void handle(HostAgentMessage m, long taken) throws InterruptedException {
    InstanceReport r;
    try {
      JsonNode json = InstanceReport.read(m.payload());
      if ("worker".equals(json.path("type").asText())) {
        workerReport(m, json);
        return;
      }
      r = InstanceReport.parse(json);
    } catch (IllegalArgumentException e) {
      LOG.warn("[host {}] [app {}] unreadable LQ_HA report dropped: {}", host, m.application(), e.getMessage());
      return;
    }
    String app = m.application().equals(HostAgentMessage.FROM_HOST_AGENT) ? r.app() : m.application();
    String spoofed = !app.equals(r.app()) ? r.app()
        : r.outputs().stream().map(o -> o.path("app").asText("")).filter(a -> !a.equals(app)).findFirst().orElse(null);
    if (spoofed != null || !TopicNames.validApplication(app)) {
      LOG.warn("[host {}] [app {} grain {}] [exec {}] report refused: it names application '{}'", host, app, r.grain(),
          r.executionId(), spoofed == null ? app : spoofed);
      return;
    }
    if (recovery.duplicate(app, r)) {
      LOG.info("[host {}] [app {} grain {}] [exec {}] event {} was already finished by another run of it: this "
          + "run's report is dropped", host, app, r.grain(), r.executionId(), r.eventId());
      return;
    }
    if ("lost".equals(r.status()) && recovery.instanceLost(app, r)) {
      listener.accept(r);
      return;
    }
    int permits = Math.max(1, Math.min(budgetPermits, m.payload().length));
    while (!budget.tryAcquire(permits, 100, TimeUnit.MILLISECONDS)) {
      if (closing) {
        return; // the event it finishes stays unfinished: replayed by the partition's next owner
      }
    }
    CompletableFuture<?> chain;
    try {
      chain = forward(app, r, taken);
    } catch (RuntimeException e) {
      budget.release(permits);
      throw e;
    }
    chain.whenComplete((v, e) -> {
      budget.release(permits);
      if (e != null && !closing) {
        LOG.error("[host {}] [app {} grain {}] [exec {}] event {}: {}", host, app, r.grain(), r.executionId(),
            r.eventId(), e.toString());
      }
    });
    try {
      listener.accept(r);
    } catch (RuntimeException e) {
      LOG.warn("[host {}] [app {} grain {}] report listener failed: {}", host, app, r.grain(), e.toString(), e);
    }
  }

  /** Send the report's outputs; for a finished instance, then its event's flags. */
  private CompletableFuture<?> forward(String app, InstanceReport r, long taken) {
    List<CompletableFuture<?>> sends = new ArrayList<>();
    for (ObjectNode out : r.outputs()) {
      sends.add(route(app, r, out, taken));
    }
    CompletableFuture<Void> outputs = CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new));
    if (r.finished()) {
      return finish(app, r, outputs);
    }
    String key = app + "/" + r.eventId();
    CompletableFuture<Void> merged = sentOutputs.merge(key, outputs, CompletableFuture::allOf);
    merged.whenComplete((v, e) -> sentOutputs.remove(key, merged));
    return outputs;
  }

  /** Back up, forward or answer one output (steps 6b, 10a). */
  private CompletableFuture<?> route(String app, InstanceReport r, ObjectNode out, long taken) {
    String id = out.path("id").asText();
    String grain = out.path("grain").asText();
    ObjectNode event = out.deepCopy();
    event.remove("local");
    try {
      Event.of(event);
    } catch (IllegalArgumentException e) {
      refused.incrementAndGet();
      LOG.warn("[host {}] [app {} grain {}] [exec {}] output {} refused: {}", host, app, r.grain(), r.executionId(), id,
          e.getMessage());
      return DONE;
    }
    String execution = event.path("execution_id").asText("");
    String frontend = event.path("frontend").asText("");
    if (!tags.verify(event.path(ExecutionTag.FIELD).asText(null), app, execution, frontend)) {
      refused.incrementAndGet();
      LOG.warn("[host {}] [app {} grain {}] [exec {}] output {} refused: its tag does not show that execution '{}' "
          + "entered through this application for frontend '{}'", host, app, r.grain(), r.executionId(), id,
          execution, frontend);
      return DONE;
    }
    if (!grain.equals(TopicNames.END) && !knownGrain.test(app, grain)) {
      refused.incrementAndGet();
      LOG.warn("[host {}] [app {} grain {}] [exec {}] output {} refused: '{}' is not a grain of the application's "
          + "workflow", host, app, r.grain(), r.executionId(), id, grain);
      return DONE;
    }
    if (grain.equals(TopicNames.END)) {
      if (!TopicNames.validFrontend(frontend)) {
        LOG.warn("[host {}] [app {} grain {}] [exec {}] result has no frontend to go to ('{}'): not sent", host, app,
            r.grain(), r.executionId(), frontend);
        return DONE;
      }
      LOG.debug("[host {}] [app {}] [exec {}] result to frontend {}", host, app, execution, frontend);
      Event.of(event).trace(Trace.AGENT_OUT, host, taken, System.nanoTime());
      byte[] result = ConditionFlag.toBytes(event);
      if (gate != null) {
        gate.deliver(frontend, result); // the frontend's fast path; the response topic below is the record
      }
      return sender.send(new ProducerRecord<>(TopicNames.responseTopic(frontend), execution, result));
    }
    if (!TopicNames.validGrain(grain)) {
      LOG.warn("[host {}] [app {} grain {}] [exec {}] output {} names no valid grain ('{}'): not sent", host, app,
          r.grain(), r.executionId(), id, grain);
      return DONE;
    }
    GrainRef next = new GrainRef(app, grain);
    boolean local = out.path("local").asBoolean(false);
    if (local && bridge.runsHere(next)) {
      Integer partition = bridge.backupPartition(next.topic(), id);
      CompletableFuture<?> sent = sender.send(KafkaClients.record(next.topic(), partition, ConditionFlag.processing(event, host)));
      inFlight.register(id, new Home(next.topic(), partition, app, sent, grain, event));
      LOG.debug("[host {}] [app {} grain {}] [exec {}] event {} backed up to {}-{}", host, app, grain,
          r.executionId(), id, next.topic(), partition == null ? "(by key)" : partition);
      return sent;
    }
    if (local) {
      LOG.warn("[host {}] [app {} grain {}] [exec {}] event {} was delivered locally but {} does not run here: "
          + "publishing it for the hosts that run it", host, app, r.grain(), r.executionId(), id, next);
    }
    return sender.send(KafkaClients.record(next.topic(), null, ConditionFlag.newEvent(event, host)));
  }

  /** Steps 10b and §4.3: data flag when the data is durable, then finished, in the event's partition. */
  private CompletableFuture<?> finish(String app, InstanceReport r, CompletableFuture<Void> outputs) {
    String id = r.eventId();
    CompletableFuture<Void> earlier = sentOutputs.remove(app + "/" + id);
    CompletableFuture<Void> allOutputs = earlier == null ? outputs : CompletableFuture.allOf(outputs, earlier);
    Home home = inFlight.remove(app, id);
    if (home == null) { // not an event of this application this host took from Kafka or backed up
      LOG.debug("[host {}] [app {} grain {}] event {} has no flags here", host, app, r.grain(), id);
      return allOutputs;
    }
    List<DataMetadata> metadata = new ArrayList<>();
    List<CompletableFuture<Void>> backups = new ArrayList<>();
    ApplicationData appData = data.forApplication(app);
    boolean flagData = true;
    for (DataItem d : r.data()) {
      try {
        metadata.add(appData.metadata(d.kind(), d.name()));
        backups.add(data.backupOf(app, d.kind(), d.name()));
      } catch (DataLayerException e) {
        // no data flag then: recovery re-processes the event instead of trusting its data (always safe)
        flagData = false;
        LOG.warn("[host {}] [app {}] [exec {}] no data flag for event {}: {} '{}': {}", host, app, r.executionId(), id,
            d.kind(), d.name(), e.getMessage());
      }
    }
    boolean withData = flagData && !metadata.isEmpty();
    CompletableFuture<Void> ready = CompletableFuture.allOf(passUnsendable(home.backup()), passUnsendable(allOutputs),
        CompletableFuture.allOf(backups.toArray(CompletableFuture[]::new)));
    String topic = home.topic();
    Integer partition = home.partition();
    CompletableFuture<?> dataFlag = !withData ? ready
        : ready.thenCompose(v -> sender.send(KafkaClients.record(topic, partition, ConditionFlag.data(id, metadata, host))));
    return dataFlag
        .thenCompose(v -> sender.send(KafkaClients.record(topic, partition, ConditionFlag.finished(id, host))))
        .thenAccept(md -> {
          bridge.eventFinished(topic, md.partition(), id);
          LOG.debug("[host {}] [app {} grain {}] [exec {}] event {} finished ({}-{})", host, app, r.grain(),
              r.executionId(), id, topic, md.partition());
        });
  }

  /**
   * A send that can never succeed (logged by the sender) must not keep the event unfinished forever;
   * any other failure (closing) must: then the finished flag is not written.
   */
  private static CompletableFuture<?> passUnsendable(CompletableFuture<?> f) {
    return f.handle((v, e) -> {
      if (e != null && !ReliableSender.unsendable(e)) {
        throw e instanceof CompletionException ce ? ce : new CompletionException(e);
      }
      return null;
    });
  }
}
