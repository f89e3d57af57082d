package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
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
import sand.hostagent.bridge.HostAgentQueueProcessor.Refusal;
import sand.hostagent.bridge.InFlightEvents.Home;
import sand.hostagent.bridge.InstanceReport.DataItem;

/**
 * What {@link HostAgentQueueProcessor} does with an accepted report (paper Figure 4 steps 6b, 10a, 10b): each output
 * backed up, forwarded or answered; for a finished instance, once those sends are acknowledged and its data is in
 * the global data layer, the {@code data} flag, then the {@code finished} flag, in the event's partition. The data
 * flag's metadata is computed on a small pool of its own (it may read Cassandra), with a bounded queue and at most
 * {@value #METADATA_TASKS_PER_APP} tasks per application.
 */
final class ReportForwarder {
  // the processor's logger: operators filter these lines by the name they have always had
  private static final Logger LOG = LoggerFactory.getLogger(HostAgentQueueProcessor.class);
  private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
  /** Most metadata tasks queued or running per application. */
  static final int METADATA_TASKS_PER_APP = 16;

  private final GlobalBusBridge bridge;
  private final LocalDataLayer data;
  private final ExecutionTag tags;
  private final BiPredicate<String, String> knownGrain;
  private final FrontendGate gate;
  private final Refusals refusals;
  private final String host;
  private final ReliableSender sender;
  private final InFlightEvents inFlight;
  private final ReportLimits limits;
  private final AtomicLong refused = new AtomicLong();
  /** Sends of {@code sent} reports, by "app/event" their instance handles: its finished flag waits for them. */
  private final ConcurrentHashMap<String, CompletableFuture<Void>> sentOutputs =
      new ConcurrentHashMap<>();

  private final ThreadPoolExecutor metadataPool;
  /** Metadata tasks queued or running per application: one application cannot fill the pool for the others. */
  private final Map<String, AtomicInteger> metadataTasks = new ConcurrentHashMap<>();

  ReportForwarder(
      GlobalBusBridge bridge,
      LocalDataLayer data,
      ExecutionTag tags,
      BiPredicate<String, String> knownGrain,
      FrontendGate gate,
      Refusals refusals) {
    this.bridge = bridge;
    this.data = data;
    this.tags = tags;
    this.knownGrain = knownGrain;
    this.gate = gate;
    this.refusals = refusals;
    this.host = bridge.host();
    this.sender = bridge.sender();
    this.inFlight = bridge.inFlight();
    this.limits = bridge.settings().reports();
    this.metadataPool = HostAgentQueueProcessor.boundedPool("sand-data-flags-" + host, 2, 1024);
  }

  /** Outputs refused so far (forged execution, unknown grain). */
  long refusedOutputs() {
    return refused.get();
  }

  /** No more data flags' metadata is computed (those queued still are). */
  void close() {
    metadataPool.shutdown();
  }

  /** Send the report's outputs; for a finished instance, then its event's flags. */
  CompletableFuture<?> forward(String app, InstanceReport r, long taken) {
    List<CompletableFuture<?>> sends = new ArrayList<>();
    for (ObjectNode out : r.outputs()) {
      sends.add(route(app, r, out, taken));
    }
    CompletableFuture<Void> outputs =
        CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new));
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
    String exec = InstanceReport.shown(r.executionId());
    ObjectNode event = out.deepCopy();
    event.remove("local");
    try {
      Event.of(event);
    } catch (IllegalArgumentException e) {
      refused.incrementAndGet();
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] output {} refused: {}",
          host,
          app,
          r.grain(),
          exec,
          InstanceReport.shown(id),
          InstanceReport.shown(e.getMessage()));
      return DONE;
    }
    String execution = event.path("execution_id").asText("");
    String frontend = event.path("frontend").asText("");
    if (!tags.verify(event.path(ExecutionTag.FIELD).asText(null), app, execution, frontend)) {
      refused.incrementAndGet();
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] output {} refused: its tag does not show that execution '{}' "
              + "entered through this application for frontend '{}'",
          host,
          app,
          r.grain(),
          exec,
          InstanceReport.shown(id),
          InstanceReport.shown(execution),
          InstanceReport.shown(frontend));
      return DONE;
    }
    if (!grain.equals(TopicNames.END) && !knownGrain.test(app, grain)) {
      refused.incrementAndGet();
      LOG.debug(
          "[host {}] [app {} grain {}] [exec {}] output {} refused: '{}' is not a grain of the application's "
              + "workflow",
          host,
          app,
          r.grain(),
          exec,
          InstanceReport.shown(id),
          InstanceReport.shown(grain));
      return DONE;
    }
    if (grain.equals(TopicNames.END)) {
      if (!TopicNames.validFrontend(frontend)) {
        LOG.warn(
            "[host {}] [app {} grain {}] [exec {}] result has no frontend to go to ('{}'): not sent",
            host,
            app,
            r.grain(),
            exec,
            InstanceReport.shown(frontend));
        return DONE;
      }
      LOG.debug(
          "[host {}] [app {}] [exec {}] result to frontend {}", host, app, execution, frontend);
      Event.of(event).trace(Trace.AGENT_OUT, host, taken, System.nanoTime());
      byte[] result = ConditionFlag.toBytes(event);
      if (gate != null) {
        gate.deliver(
            frontend, result); // the frontend's fast path; the response topic below is the record
      }
      return sender.send(
          new ProducerRecord<>(TopicNames.responseTopic(frontend), execution, result));
    }
    if (!TopicNames.validGrain(grain)) {
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] output {} names no valid grain ('{}'): not sent",
          host,
          app,
          r.grain(),
          exec,
          InstanceReport.shown(id),
          InstanceReport.shown(grain));
      return DONE;
    }
    GrainRef next = new GrainRef(app, grain);
    boolean local = out.path("local").asBoolean(false);
    if (local && bridge.runsHere(next)) {
      Integer partition = bridge.backupPartition(next.topic(), id);
      byte[] backup = ConditionFlag.processing(event, host).value();
      CompletableFuture<Void> sent = new CompletableFuture<>();
      // Only the instance's word: the agent did not see the delivery. So such events are bounded
      // and expire.
      // In another host's partition (none of the topic's is ours), the backup is renewed while the
      // event is in
      // flight here, so that host does not take it over while it waits in a busy local queue
      // (BackupRenewal).
      BackupRenewal renewal = partition == null ? new BackupRenewal(bridge.nowMs()) : null;
      if (!inFlight.registerLocal(
          id,
          new Home(next.topic(), partition, app, sent, grain, event, renewal),
          backup.length,
          limits.inFlightMax(),
          limits.inFlightMaxBytes(),
          System.nanoTime() + limits.inFlightExpiry().toNanos())) {
        refused.incrementAndGet();
        refusals.refuse(app, Refusal.IN_FLIGHT_FULL);
        LOG.debug(
            "[host {}] [app {} grain {}] event {} said delivered locally refused: the application has {} such "
                + "events or {} bytes of them in flight here",
            host,
            app,
            grain,
            InstanceReport.shown(id),
            limits.inFlightMax(),
            limits.inFlightMaxBytes());
        return DONE;
      }
      sender
          .send(KafkaClients.record(next.topic(), partition, ConditionFlag.processing(event, host)))
          .whenComplete((v, e) -> {
            if (e != null) {
              sent.completeExceptionally(e);
            } else {
              sent.complete(null);
            }
          });
      LOG.debug(
          "[host {}] [app {} grain {}] [exec {}] event {} backed up to {}-{}",
          host,
          app,
          grain,
          exec,
          id,
          next.topic(),
          partition == null ? "(by key)" : partition);
      return sent;
    }
    if (local) {
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] event {} was delivered locally but {} does not run here: "
              + "publishing it for the hosts that run it",
          host,
          app,
          r.grain(),
          exec,
          InstanceReport.shown(id),
          next);
    }
    return sender.send(
        KafkaClients.record(next.topic(), null, ConditionFlag.newEvent(event, host)));
  }

  /** Steps 10b and §4.3: data flag when the data is durable, then finished, in the event's partition. */
  private CompletableFuture<?> finish(
      String app, InstanceReport r, CompletableFuture<Void> outputs) {
    String id = r.eventId();
    CompletableFuture<Void> earlier = sentOutputs.remove(app + "/" + id);
    CompletableFuture<Void> allOutputs =
        earlier == null ? outputs : CompletableFuture.allOf(outputs, earlier);
    Home home = inFlight.remove(app, id);
    if (home == null) { // not an event of this application this host took from Kafka or backed up
      LOG.debug(
          "[host {}] [app {} grain {}] event {} has no flags here",
          host,
          app,
          r.grain(),
          InstanceReport.shown(id));
      return allOutputs;
    }
    // An instance names what it wrote once per call: the same item many times, or more items than
    // any grain
    // writes, is a forged report; it costs at most one list walk (no data flag: recovery re-runs
    // the event).
    LinkedHashSet<DataItem> items = new LinkedHashSet<>();
    for (DataItem d : r.data()) {
      if (items.add(d) && items.size() > limits.dataItems()) {
        break;
      }
    }
    boolean tooMany = items.size() > limits.dataItems();
    if (tooMany) {
      refusals.refuse(app, Refusal.DATA_LIST_TOO_LONG);
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] event {} names more than {} data items: no data flag",
          host,
          app,
          r.grain(),
          InstanceReport.shown(r.executionId()),
          InstanceReport.shown(id),
          limits.dataItems());
    }
    List<CompletableFuture<Void>> backups = new ArrayList<>();
    if (!tooMany) {
      for (DataItem d : items) {
        backups.add(data.backupOf(app, d.kind(), d.name()));
      }
    }
    // after its backup and its backup's last renewal (none is sent from here on: a renewal after
    // the finished flag
    // would have the other host take a finished event over)
    CompletableFuture<Void> ready = CompletableFuture.allOf(
        passUnsendable(home.backup()),
        passUnsendable(home.endRenewals()),
        passUnsendable(allOutputs),
        CompletableFuture.allOf(backups.toArray(CompletableFuture[]::new)));
    String topic = home.topic();
    Integer partition = home.partition();
    CompletableFuture<?> dataFlag = tooMany || items.isEmpty()
        ? ready
        : ready
            .thenCompose(v -> metadata(app, r, items))
            .thenCompose(md -> md.isEmpty()
                ? DONE
                : sender
                    .send(KafkaClients.record(topic, partition, ConditionFlag.data(id, md, host)))
                    .thenApply(x -> (Void) null));
    return dataFlag
        .thenCompose(v ->
            sender.send(KafkaClients.record(topic, partition, ConditionFlag.finished(id, host))))
        .thenAccept(md -> {
          bridge.eventFinished(topic, md.partition(), id);
          LOG.debug(
              "[host {}] [app {} grain {}] [exec {}] event {} finished ({}-{})",
              host,
              app,
              r.grain(),
              InstanceReport.shown(r.executionId()),
              InstanceReport.shown(id),
              topic,
              md.partition());
        });
  }

  /**
   * The metadata of the items an instance wrote, for its data flag, on the data-flag pool (it may read Cassandra):
   * empty (no data flag: recovery re-runs the event, always safe) when an item cannot be read or the pool is full.
   */
  private CompletableFuture<List<DataMetadata>> metadata(
      String app, InstanceReport r, Collection<DataItem> items) {
    CompletableFuture<List<DataMetadata>> out = new CompletableFuture<>();
    AtomicInteger tasks = metadataTasks.computeIfAbsent(app, a -> new AtomicInteger());
    if (tasks.incrementAndGet() > METADATA_TASKS_PER_APP) {
      tasks.decrementAndGet();
      refusals.refuse(app, Refusal.BUSY);
      out.complete(List.of());
      return out;
    }
    Runnable compute = () -> {
      try {
        List<DataMetadata> metadata = new ArrayList<>();
        ApplicationData appData = data.forApplication(app);
        for (DataItem d : items) {
          metadata.add(appData.metadata(d.kind(), d.name()));
        }
        out.complete(metadata);
      } catch (DataLayerException e) {
        LOG.warn(
            "[host {}] [app {}] [exec {}] no data flag for event {}: {}",
            host,
            app,
            InstanceReport.shown(r.executionId()),
            InstanceReport.shown(r.eventId()),
            InstanceReport.shown(e.getMessage()));
        out.complete(List.of());
      } catch (RuntimeException e) {
        out.completeExceptionally(e);
      } finally {
        tasks.decrementAndGet();
      }
    };
    try {
      metadataPool.execute(compute);
    } catch (RejectedExecutionException e) {
      tasks.decrementAndGet();
      refusals.refuse(app, Refusal.BUSY);
      out.complete(List.of());
    }
    return out;
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
