package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.log.LogIdentity;
import sand.contracts.ExecutionTag;
import sand.contracts.TopicNames;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.InFlightEvents.Home;
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
 * <p>Grains write their reports themselves, so a report is only believed as far as it can be checked (issue 26):
 * its grain must be one of the workflow's and its status one grain workers write, else it is refused whole; a
 * data list longer than {@link ReportLimits#dataItems()} distinct items gets no data flag; an output claiming a
 * local delivery counts against the application's bound of such events in flight
 * ({@link InFlightEvents#registerLocal});
 * its log lines are kept only when its execution is the one of the event it names, an event of its application in
 * flight here ({@link InstanceReport#executionBound()}). Refusals are counted per application and fixed reason
 * ({@link #refusedReports()}), and what is logged of a grain's strings is cut ({@link InstanceReport#shown}).
 *
 * <p>One thread takes reports from LQ_HA (which the bus hands out round-robin across applications) into one queue
 * per application ({@link ReportLanes}); {@link ReportLimits#threads()} threads serve those queues round-robin, so
 * a slow application never holds up another's reports. Nothing on those threads waits for Cassandra: the data
 * flag's metadata is computed on a small pool of its own, after the data's backup, with a bounded queue and at most
 * {@value ReportForwarder#METADATA_TASKS_PER_APP} tasks per application (beyond: no data flag, which only costs a
 * re-run in recovery); a supervisor's health report goes to a bounded queue too.
 *
 * <p>This class takes reports and checks them; {@link ReportForwarder} sends what an accepted report says,
 * {@link WorkerReports} handles supervisors' reports, {@link Refusals} counts what was refused.
 *
 * <p>Reports taken and not yet in Kafka hold at most {@link BridgeSettings#maxPendingBytes()}; beyond that this
 * processor stops taking reports (LQ_HA fills up, then grain instances see QUEUE_FULL and back off): nothing
 * is dropped while Kafka or Cassandra is away.
 */
public final class HostAgentQueueProcessor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HostAgentQueueProcessor.class);

  private final GlobalBusBridge bridge;
  private final LocalMessageBus bus;
  private final String credential;
  private final Consumer<InstanceReport> listener;
  private final BiPredicate<String, String> knownGrain;
  private final BridgeSettings settings;
  private final String host;
  private final InFlightEvents inFlight;
  private final LocalRecovery recovery;
  private final Semaphore budget;
  private final int budgetPermits;
  private final ReportLimits limits;
  private final ReportLanes lanes;
  private final Refusals refusals = new Refusals();
  private final ReportForwarder forwarder;
  private final WorkerReports workerReports;
  private volatile long nextExpiry = System.nanoTime();
  private volatile boolean closing;
  private Thread thread;
  private final List<Thread> workers = new ArrayList<>();

  /** Why a report or output was refused: the fixed label values of {@link #refusedReports()}. */
  public enum Refusal {
    UNKNOWN_GRAIN,
    UNKNOWN_STATUS,
    BAD_REPORT,
    QUEUE_FULL,
    DATA_LIST_TOO_LONG,
    IN_FLIGHT_FULL,
    FOREIGN_EXECUTION,
    BUSY;

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * @param tags       checks that an output's execution entered through its application (the cluster secret)
   * @param knownGrain whether (application, grain) is a grain of that application's workflow
   * @param health     gets reports of type "worker" (the application of the bus's stamp, never the report's); may
   *                   be null (they are ignored)
   * @param gate       results also go to frontends through it (their response topics still get every one); may be
   *                   null (no gate)
   * @param listener   also gets every accepted report (logs, instance tracking); may be null
   */
  public HostAgentQueueProcessor(
      GlobalBusBridge bridge,
      LocalMessageBus bus,
      String hostAgentCredential,
      LocalDataLayer data,
      ExecutionTag tags,
      BiPredicate<String, String> knownGrain,
      WorkerHealth health,
      FrontendGate gate,
      Consumer<InstanceReport> listener) {
    this.knownGrain = knownGrain;
    this.bridge = bridge;
    this.bus = bus;
    this.credential = hostAgentCredential;
    this.listener = listener == null ? r -> {} : listener;
    this.settings = bridge.settings();
    this.host = bridge.host();
    this.inFlight = bridge.inFlight();
    this.recovery = bridge.localRecovery();
    this.budgetPermits = (int) Math.min(Integer.MAX_VALUE, settings.maxPendingBytes());
    this.budget = new Semaphore(budgetPermits);
    this.limits = settings.reports();
    this.lanes = new ReportLanes(limits.appQueueMessages(), limits.appQueueBytes());
    this.forwarder = new ReportForwarder(bridge, data, tags, knownGrain, gate, refusals);
    this.workerReports = new WorkerReports(host, recovery, knownGrain, health, refusals);
  }

  /** A pool whose queue holds at most {@code queue} tasks: more are refused (the caller decides what that costs). */
  static ThreadPoolExecutor boundedPool(String name, int threads, int queue) {
    ThreadPoolExecutor p = new ThreadPoolExecutor(
        threads,
        threads,
        30,
        TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(queue),
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        },
        new ThreadPoolExecutor.AbortPolicy());
    p.allowCoreThreadTimeOut(true);
    return p;
  }

  /**
   * Take one batch from LQ_HA (waiting up to {@link BridgeSettings#haPollTimeout()}) and handle it on this thread
   * (tests; {@link #start()} handles reports on threads of their own).
   */
  public int processOnce() throws InterruptedException {
    List<HostAgentMessage> batch = poll();
    for (HostAgentMessage m : batch) {
      if (dispatch(m, System.nanoTime())) {
        ReportLanes.Turn t;
        while ((t = lanes.take(0)) != null) {
          serve(t);
        }
      }
    }
    return batch.size();
  }

  private List<HostAgentMessage> poll() throws InterruptedException {
    long now = System.nanoTime();
    if (now - nextExpiry >= 0) {
      nextExpiry = now + 1_000_000_000L;
      expireLocal(now);
    }
    return bus.pollHostAgent(
        credential, settings.haPollMessages(), (int) settings.haPollTimeout().toMillis());
  }

  /**
   * Queue a report behind its application's others, with its share of the budget (waiting for it: Kafka's
   * backpressure); false when the application's queue is full (refused, counted) or this processor closes.
   */
  private boolean dispatch(HostAgentMessage m, long taken) throws InterruptedException {
    int permits = Math.max(1, Math.min(budgetPermits, m.payload().length));
    while (!budget.tryAcquire(permits, 100, TimeUnit.MILLISECONDS)) {
      if (closing) {
        return false; // the event it finishes stays unfinished: replayed by the partition's next
        // owner
      }
    }
    String app = m.application();
    if (app.equals(
        HostAgentMessage.FROM_HOST_AGENT)) { // LocalRecovery's reports: small, and trusted
      try {
        app = InstanceReport.read(m.payload()).path("app").asText(app);
      } catch (IllegalArgumentException e) {
        // handled (and logged) as unreadable in its turn
      }
    }
    if (!lanes.offer(new ReportLanes.Item(app, m, taken, permits))) {
      budget.release(permits);
      refuse(m.application(), Refusal.QUEUE_FULL);
      return false;
    }
    return true;
  }

  /** Handle one report of a queue, then let its application's next one go. */
  private void serve(ReportLanes.Turn t) throws InterruptedException {
    HostAgentMessage m = t.item().message();
    try {
      handle(m, t.item().taken(), t.item().permits());
    } catch (RuntimeException e) { // one bad report must not cost the others
      LOG.error(
          "[host {}] [app {}] LQ_HA report dropped: {}", host, m.application(), e.toString(), e);
    } finally {
      lanes.done(t);
    }
  }

  /** Forget the claimed local deliveries never finished: their backups no longer hold their partitions' commits. */
  void expireLocal(long now) {
    for (Map.Entry<String, Home> e : inFlight.expireLocal(now)) {
      Home h = e.getValue();
      if (h.partition() != null) {
        bridge.tracker().abandon(new TopicPartition(h.topic(), h.partition()), e.getKey());
      }
      LOG.info(
          "[host {}] [app {} grain {}] event {} said delivered locally was not finished within {} s: forgotten",
          host,
          h.app(),
          h.grain(),
          InstanceReport.shown(e.getKey()),
          limits.inFlightExpiry().toSeconds());
    }
  }

  private void refuse(String app, Refusal why) {
    refusals.refuse(app, why);
  }

  /**
   * Reports (or parts of them) refused so far, by application and reason ({@link Refusal#label()}): the
   * application is the bus's stamp (a granted application), the reason one of a fixed few.
   */
  public Map<List<String>, Long> refusedReports() {
    return refusals.snapshot();
  }

  /** Events in flight on this host, per application (gauge). */
  public Map<String, Number> inFlightByApplication() {
    return inFlight.countByApplication();
  }

  /** Bytes of those events, per application (gauge; bounded by {@link ReportLimits#appInFlightBytes()}). */
  public Map<String, Number> inFlightBytesByApplication() {
    return inFlight.bytesByApplication();
  }

  /** What a sandbox's supervisor says of a grain worker (state "crash-looping" or "running"). */
  public interface WorkerHealth {
    void report(String app, String grain, String state, String message);
  }

  /** Outputs refused so far (forged execution, unknown grain). */
  public long refusedOutputs() {
    return forwarder.refusedOutputs();
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
    for (int i = 0; i < limits.threads(); i++) {
      Thread w = new Thread(this::work, "sand-reports-" + host + "-" + i);
      w.setDaemon(true);
      w.start();
      workers.add(w);
    }
  }

  /** A thread serving the applications' report queues, round-robin. */
  private void work() {
    while (!closing) {
      try {
        ReportLanes.Turn t = lanes.take(100);
        if (t != null) {
          serve(t);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
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
      for (Thread w : workers) {
        w.join(10_000);
      }
      budget.release((int)
          lanes.clear()); // not handled: their events are replayed by the partitions' next owner
      forwarder.close();
      workerReports.close();
      if (!budget.tryAcquire(budgetPermits, 10, TimeUnit.SECONDS)) {
        LOG.warn(
            "[host {}] closing with {} bytes of reports not yet in Kafka: their events are replayed by the "
                + "partitions' next owner",
            host,
            pendingBytes());
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
        for (HostAgentMessage m : poll()) {
          dispatch(m, System.nanoTime());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.error("[host {}] LQ_HA processing failed: {}", host, e.toString(), e);
      }
    }
  }

  void handle(HostAgentMessage m) throws InterruptedException {
    int permits = Math.max(1, Math.min(budgetPermits, m.payload().length));
    budget.acquire(permits);
    handle(m, System.nanoTime(), permits);
  }

  /**
   * @param taken   when the report was taken from LQ_HA (monotonic ns, for the result's trace)
   * @param permits the budget it holds: given back when its sends are done, or now if it sends nothing
   */
  private void handle(HostAgentMessage m, long taken, int permits) {
    boolean released = false;
    LogIdentity.Scope log = LogIdentity.scope(m.application(), null);
    try {
      CompletableFuture<?> chain = handleReport(m, taken, log);
      if (chain != null) {
        released = true;
        chain.whenComplete((v, e) -> budget.release(permits));
      }
    } finally {
      if (!released) {
        budget.release(permits);
      }
      log.close();
    }
  }

  /**
   * The report's sends, or null when it sends nothing (refused, or only recorded); {@code log} is tagged with
   * the execution once the report is known to be valid.
   */
  private CompletableFuture<?> handleReport(HostAgentMessage m, long taken, LogIdentity.Scope log) {
    InstanceReport r;
    try {
      JsonNode json = InstanceReport.read(m.payload());
      if ("worker".equals(json.path("type").asText())) {
        workerReports.report(m, json);
        return null;
      }
      r = InstanceReport.parse(json);
    } catch (IllegalArgumentException e) {
      refuse(m.application(), Refusal.BAD_REPORT);
      LOG.warn(
          "[host {}] [app {}] unreadable LQ_HA report dropped: {}",
          host,
          m.application(),
          InstanceReport.shown(e.getMessage()));
      return null;
    }
    String app =
        m.application().equals(HostAgentMessage.FROM_HOST_AGENT) ? r.app() : m.application();
    String spoofed = !app.equals(r.app())
        ? r.app()
        : r.outputs().stream()
            .map(o -> o.path("app").asText(""))
            .filter(a -> !a.equals(app))
            .findFirst()
            .orElse(null);
    if (spoofed != null || !TopicNames.validApplication(app)) {
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] report refused: it names application '{}'",
          host,
          InstanceReport.shown(app),
          InstanceReport.shown(r.grain()),
          InstanceReport.shown(r.executionId()),
          InstanceReport.shown(spoofed == null ? app : spoofed));
      return null;
    }
    Refusal invalid = !knownGrain.test(app, r.grain())
        ? Refusal.UNKNOWN_GRAIN
        : !InstanceReport.STATUSES.contains(r.status())
            ? Refusal.UNKNOWN_STATUS
            : r.eventId().length() > 256 || r.executionId().length() > 256
                ? Refusal.BAD_REPORT
                : null;
    if (invalid
        != null) { // a grain's made-up names never become metric labels, log keys or anything else
      refuse(app, invalid);
      LOG.debug(
          "[host {}] [app {}] report refused ({}): grain '{}', status '{}'",
          host,
          app,
          invalid.label(),
          InstanceReport.shown(r.grain()),
          InstanceReport.shown(r.status()));
      return null;
    }
    log.app(app); // a report the agent itself put on LQ_HA names its application only inside
    log.exec(r.executionId());
    Home own = inFlight.get(app, r.eventId());
    r = r.withExecutionBound(own != null
        && own.event() != null
        && r.executionId().equals(own.event().path("execution_id").asText(null)));
    if (!r.executionBound() && !r.json().path("logs").isEmpty()) {
      refuse(app, Refusal.FOREIGN_EXECUTION); // its log lines are not stored (ExecutionLogs)
    }
    if (recovery.duplicate(app, r)) {
      LOG.info(
          "[host {}] [app {} grain {}] [exec {}] event {} was already finished by another run of it: this "
              + "run's report is dropped",
          host,
          app,
          r.grain(),
          InstanceReport.shown(r.executionId()),
          InstanceReport.shown(r.eventId()));
      return null;
    }
    if ("lost".equals(r.status()) && recovery.instanceLost(app, r)) {
      accepted(app, r);
      return null;
    }
    CompletableFuture<?> chain = forwarder.forward(app, r, taken);
    InstanceReport report = r;
    chain.whenComplete((v, e) -> {
      if (e != null && !closing) {
        LOG.error(
            "[host {}] [app {} grain {}] [exec {}] event {}: {}",
            host,
            app,
            report.grain(),
            InstanceReport.shown(report.executionId()),
            InstanceReport.shown(report.eventId()),
            e.toString());
      }
    });
    accepted(app, r);
    return chain;
  }

  private void accepted(String app, InstanceReport r) {
    try {
      listener.accept(r);
    } catch (RuntimeException e) {
      LOG.warn(
          "[host {}] [app {} grain {}] report listener failed: {}",
          host,
          app,
          r.grain(),
          e.toString(),
          e);
    }
  }
}
