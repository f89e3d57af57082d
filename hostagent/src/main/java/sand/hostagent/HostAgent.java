package sand.hostagent;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterKeysRefresher;
import sand.cluster.ClusterSettings;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.KafkaClients;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.metrics.StoreHealth;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;
import sand.common.Credentials;
import sand.common.ThriftServer;
import sand.common.log.LogIdentity;
import sand.contracts.ApplicationLimits;
import sand.contracts.ClusterKeys;
import sand.contracts.ExecutionTag;
import sand.contracts.gate.HostAgentGate;
import sand.datalayer.DataLayerServer;
import sand.datalayer.DataLayerSettings;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.BridgeSettings;
import sand.hostagent.bridge.BucketTriggers;
import sand.hostagent.bridge.FrontendGate;
import sand.hostagent.bridge.GlobalBusBridge;
import sand.hostagent.bridge.HostAgentQueueProcessor;
import sand.hostagent.bridge.LocalDelivery;
import sand.hostagent.bridge.ManagementRelay;
import sand.hostagent.bridge.PoisonLedger;
import sand.hostagent.cluster.ClusterMembership;
import sand.hostagent.cluster.Scheduler;
import sand.hostagent.sandbox.DockerEngine;
import sand.hostagent.sandbox.DockerHttpEngine;
import sand.hostagent.sandbox.SandboxCgroups;
import sand.hostagent.sandbox.SandboxManager;
import sand.hostagent.sandbox.SandboxSettings;
import sand.localbus.LocalBusServer;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;

/**
 * The host agent (paper §4.1): one per host. Embeds the local message bus and the local data layer,
 * joins the cluster, runs the sandboxes of the applications deployed here, bridges the local bus and
 * Kafka with condition flags, and stores instances' logs. {@link #newAgent} builds it from settings and
 * {@link Deps} (tests hand in fakes), {@link #connect} makes the real ones, {@link #main} runs it until SIGTERM.
 */
public final class HostAgent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HostAgent.class);

  /** Read by deploy/hostagent.sh, not by this process (so not reported as unknown settings). */
  static final Set<String> SCRIPT_VARIABLES = Set.of("SAND_HOSTAGENT_HEAP_MB");

  /** The host agent's settings: {@link HostAgentSettings#DEF}. */
  public static final ConfigDef DEF = HostAgentSettings.DEF;

  /**
   * What the host agent talks to: the cluster state, Kafka (the grain topics, the bridge's consumer, the producer,
   * the control topic's consumer), Docker, the global data layer behind the local one, and the clock. {@link
   * #connect} builds the real ones; tests hand in fakes ({@code InMemoryClusterStore}, {@link InMemoryGrainTopics},
   * {@code FakeDockerEngine}, {@code InMemoryGlobalDataLayer}, Kafka's {@code MockConsumer} and {@code
   * MockProducer}). The agent owns them: {@link #close()} closes each one that is {@link AutoCloseable}.
   *
   * @param store           the cluster state: the host agent's tables, and for data triggers the buckets, the
   *                        frontends' heartbeats and the execution records ({@link BucketTriggers})
   * @param grainConsumer   the bridge's consumer of the grain topics (group {@code bridge.group.id}, no auto commit)
   * @param producer        the agent's producer (flags, results, backups)
   * @param controlConsumer the consumer of {@code sand.control} (no group, no auto commit; read from its end)
   */
  public record Deps(
      ClusterStore store,
      GrainTopics topics,
      DockerEngine docker,
      GlobalDataLayer global,
      Consumer<String, byte[]> grainConsumer,
      Producer<String, byte[]> producer,
      Consumer<String, byte[]> controlConsumer,
      Clock clock) {
    /** The same, with every call to Cassandra (the cluster state, the global data layer) counted by health. */
    Deps watchedBy(StoreHealth health) {
      return new Deps(
          health.watch(StoreHealth.CLUSTER_STATE, ClusterStore.class, store),
          topics,
          docker,
          health.watch(StoreHealth.GLOBAL_DATA, GlobalDataLayer.class, global),
          grainConsumer,
          producer,
          controlConsumer,
          clock);
    }
  }

  private final HostAgentSettings settings;
  private final Deps deps;
  private final String hostId;
  private final LocalBusSettings busSettings;
  private final LocalBusServer busServer;
  private final DataLayerServer dataServer;
  private final ScheduledExecutorService scheduler;
  private final ClusterKeysRefresher keysRead;
  private final GlobalBusBridge bridge;
  private final Metrics metrics;
  private final ExecutionLogs logs;
  private final SandboxManager sandboxes;
  private final ApplicationDeployer deployer;
  private final ExecutorService control;
  private final ReconcileLanes lanes;
  private final LocalMessageBus bus;
  private final HostAgentQueueProcessor processor;
  private final FrontendGate gate; // null when gate.port is -1
  private final ControlListener controlListener;
  private final BucketTriggers bucketTriggers;
  private final Scheduler placement; // elastic placement: acts on the elected host only
  private ThriftServer gateServer;
  private volatile ClusterMembership membership; // from start(): it needs the ports bound
  private String busAddress;

  /**
   * The wiring, done once, in the order of the diagram: the local bus and data layer; the bridge (Kafka ↔ local
   * queues); the sandboxes, which tell the bridge of one that died; the deployer, which gives the bridge its grains;
   * the gate; the LQ_HA processor, which asks the deployer which grains are known and tells it of workers' health.
   * Each part gets what it calls at construction: no setters tie them afterwards.
   */
  private HostAgent(
      HostAgentSettings settings, Config dataConfig, ApplicationLimits limits, Deps given) {
    this.settings = settings;
    this.hostId = settings.hostId();
    // metrics first: Cassandra's health is counted on every call, the deployer reports each deploy
    metrics = new Metrics(new PrometheusRegistry(), hostId, this::knowsGrain);
    Deps deps = given.watchedBy(
        new StoreHealth(metrics.registry(), metrics.hostLabels(), given.clock()::millis));
    this.deps = deps;
    String agentCredential = settings.credential().isEmpty()
        ? HexFormat.of().formatHex(new SecureRandom().generateSeed(24))
        : settings.credential();
    Credentials credentials = new Credentials(agentCredential);
    Clock clock = deps.clock();

    busSettings = settings.bus();
    LocalMessageBus bus = new LocalMessageBus(credentials, busSettings, HostAgentSettings.BUS);
    busServer = new LocalBusServer(bus, busSettings);
    dataServer = new DataLayerServer(dataConfig, credentials, deps.global());
    LocalDataLayer data = dataServer.localDataLayer();
    // the cluster secret, read again every few seconds: a rotation reaches the agent without a
    // restart
    ClusterKeys clusterKeys = ClusterKeys.of(deps.store().clusterSecret());
    keysRead =
        new ClusterKeysRefresher(deps.store().clusterSecrets(), clusterKeys, "host " + hostId);
    ExecutionTag tags = new ExecutionTag(clusterKeys);

    scheduler = Executors.newScheduledThreadPool(2, daemon("agent-timer"));
    PoisonLedger.installIn(settings.sandbox().stateDir(), settings.poisonDeaths());
    bridge = new GlobalBusBridge(
        settings.bridge(),
        deps.grainConsumer(),
        deps.producer(),
        bus,
        agentCredential,
        data,
        clock,
        scheduler,
        this::knownFailed);
    logs = new ExecutionLogs(deps.store(), settings.logTtl());

    sandboxes = new SandboxManager(
        hostId, settings.sandbox(), deps.docker(), clock, limits, bridge::sandboxExited);
    deployer = new ApplicationDeployer(
        new ApplicationDeployer.Cluster(hostId, deps.store(), deps.topics(), clock),
        new ApplicationDeployer.Local(
            sandboxes, credentials, agentCredential, bus, data, settings.socketsDir()),
        ApplicationDeployer.Bridge.of(
            bridge::updateGrains,
            bridge::forgetApplication,
            bridge::hasPartitions,
            app -> bridge.inFlightByApplication().containsKey(app)),
        limits,
        settings.deploy(),
        metrics);
    control = Executors.newFixedThreadPool(settings.controlThreads(), daemon("control"));
    lanes = new ReconcileLanes(control, deployer::reconcile);
    this.bus = bus;
    // frontends hand requests over here and take results (gate.thrift); results also go through
    // Kafka
    gate = settings.gatePort() >= 0 ? new FrontendGate(bridge, bus, agentCredential, tags) : null;
    processor = new HostAgentQueueProcessor(
        bridge,
        bus,
        agentCredential,
        data,
        tags,
        deployer::knowsGrain,
        deployer::workerHealth,
        gate,
        r -> {
          metrics.accept(r);
          logs.accept(r);
        });
    // data triggers: a grain's write into a triggerable bucket starts its targets from this host
    bucketTriggers = new BucketTriggers(
        hostId,
        deps.store(),
        tags,
        new LocalDelivery(bridge, bus, agentCredential),
        clock,
        settings.logTtl());
    data.onMapEntryPut(bucketTriggers::mapEntryPut);
    // a grain's management request (KNIX's trigger and workflow calls) goes to a frontend through
    // the gate
    if (gate != null) {
      ManagementRelay relay = new ManagementRelay(hostId, gate::offerToAnyFrontend);
      gate.relayManagement(relay);
      data.onManagement(relay);
    }
    controlListener = new ControlListener(
        deps.controlConsumer(), lanes::request, bucketTriggers::forget, this::hostChanged);

    HostMetrics.register(
        metrics,
        new HostMetrics.Parts(
            bus,
            busSettings.appQueuedMaxBytes(),
            data,
            DataLayerSettings.options(dataConfig).appMaxBytes(),
            sandboxes,
            new SandboxCgroups(Path.of("/sys/fs/cgroup")),
            processor,
            bridge));
    metrics
        .counter(
            "sand_log_lines_dropped_total",
            "instances' log lines not stored: Cassandra was behind",
            logs::dropped)
        .counter(
            "sand_bucket_triggers_total",
            "executions started by writes to triggerable buckets here, by delivery",
            "delivery",
            bucketTriggers::counts);
    placement = new Scheduler(
        hostId,
        deps.store(),
        () -> membership == null ? Set.of() : membership.liveHostIds(),
        limits,
        settings.scheduler(),
        deps.producer(),
        clock);
    metrics
        .counter(
            "sand_scale_events_total",
            "placement changes decided here as the cluster's scheduler, by direction (out, in, replace)",
            "direction",
            placement::scaleEvents)
        .gauge(
            "sand_scheduler_look_seconds",
            "how long this host's last look as the cluster's scheduler took (0: not elected)",
            placement::lastLookSeconds);
  }

  /**
   * Build a host agent from its settings and what it talks to, not started: it binds no port and opens no
   * connection ({@link #start()} does). {@code env} holds {@code SAND_HOME} (the default sandbox state folder) and
   * the operator's caps ({@code SAND_LIMITS_*}).
   */
  public static HostAgent newAgent(
      Config config, Config dataConfig, Map<String, String> env, Deps deps) {
    return new HostAgent(
        HostAgentSettings.from(config, env),
        dataConfig,
        ApplicationLimits.fromEnvironment(env),
        deps);
  }

  /**
   * The real dependencies: Cassandra (the cluster state and the global data layer), Kafka (creating
   * {@code sand.control} if it is missing) and the Docker Engine on {@code sandbox.docker.socket}.
   */
  public static Deps connect(
      Config config, Config dataConfig, ClusterSettings cluster, Map<String, String> env) {
    HostAgentSettings settings = HostAgentSettings.from(config, env);
    String hostId = settings.hostId();
    BridgeSettings bridgeSettings = settings.bridge();
    SandboxSettings sandboxSettings = settings.sandbox();
    GlobalDataLayer global = DataLayerSettings.openGlobal(dataConfig);
    ClusterStore store = cluster.connectStore();
    String bootstrap = cluster.kafkaBootstrap();
    KafkaTopics topics =
        new KafkaTopics(bootstrap, settings.topicPartitions(), (short) cluster.kafkaReplication());
    topics.ensureControlTopic();
    return new Deps(
        store,
        topics,
        new DockerHttpEngine(sandboxSettings.dockerSocket()),
        global,
        KafkaClients.consumer(bootstrap, bridgeSettings.groupId(), bridgeSettings.hostId()),
        KafkaClients.producer(bootstrap, hostId),
        controlConsumer(bootstrap, hostId),
        Clock.systemUTC());
  }

  /**
   * Serve the bus and the data layer, remove the sandboxes of this host an earlier run left, join the cluster,
   * start the bridge, then reconcile every application now, every {@code reconcile.ms}, and on each control event.
   */
  public HostAgent start() throws Exception {
    busServer.start();
    busAddress = busSettings.host() + ":" + busServer.port();
    dataServer.start();
    sandboxes.removeOthers(
        Set.of()); // replaced, not adopted: the bus and data layer behind them are new
    String gateAddress = "";
    if (gate != null) {
      gateServer = ThriftServer.tcp(
              "gate",
              new HostAgentGate.Processor<>(gate),
              busSettings.host(),
              settings.gatePort(),
              256)
          .start();
      gateAddress = busSettings.host() + ":" + gateServer.port();
    }
    Clock clock = deps.clock();
    membership = new ClusterMembership(
            deps.store(),
            new HostAgentTables.HostInfo(
                hostId,
                busAddress,
                dataServer.address(),
                gateAddress,
                Runtime.getRuntime().availableProcessors(),
                hostMemoryMb(),
                clock.instant(),
                clock.instant()),
            clock,
            settings.failAfter())
        .reportingLoad(new HostLoadReport(bus, deployer, bridge::inFlightByApplication))
        .start(settings.heartbeat());
    bridge.start();
    processor.start();
    metrics.serve(busSettings.host(), settings.metricsPort());

    Runnable reconcileAll = this::reconcileAll;
    reconcileAll.run();
    long every = settings.reconcile().toMillis();
    scheduler.scheduleWithFixedDelay(reconcileAll, every, every, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(
        () -> safely("restart dead sandboxes", sandboxes::restartDead), 2, 2, TimeUnit.SECONDS);
    IdleSandboxes.watch(bus, deployer, lanes::request, scheduler); // scale to zero
    placement.start(scheduler);
    controlListener.start();
    LOG.info(
        "[host {}] host agent up: bus {}, data {}, metrics :{}",
        hostId,
        busAddress,
        dataServer.address(),
        metrics.port());
    return this;
  }

  /** A grain of an application deployed here (the metrics' bound on grain labels): the deployer's answer. */
  private boolean knowsGrain(String appId, String grain) {
    return deployer.knowsGrain(appId, grain);
  }

  /**
   * The bridge's {@code hostDead}: a failed host's backups here are taken over at once. False (it cannot tell)
   * until {@link #start()} has joined the cluster.
   */
  private boolean knownFailed(String host) {
    ClusterMembership m = membership;
    return m != null && m.knownFailed(host);
  }

  /** This host's id in the cluster: the setting {@code host.id}, or the host name. */
  public static String hostId(Config config) {
    return HostAgentSettings.hostId(config);
  }

  /** Every application of the cluster and every one running here, each in its lane. */
  private void reconcileAll() {
    safely("reconcile", () -> deployer.toReconcile().forEach(lanes::request));
  }

  /** A {@code host} control event: when it names this host, its schedule is read again and everything reconciled. */
  private void hostChanged(String host) {
    if (host.equals(hostId)) {
      deployer.scheduleChanged();
      reconcileAll();
    }
  }

  /**
   * The host's memory in MB, what the admin API shows its sandboxes' memory limits against (the JVM reads it
   * container-aware: a host agent in a container reports the container's limit); 0 if the JVM cannot tell.
   */
  static int hostMemoryMb() {
    if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return (int) Math.min(Integer.MAX_VALUE, os.getTotalMemorySize() / (1024 * 1024));
    }
    return 0;
  }

  private static void safely(String what, Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.warn("{} failed, will retry: {}", what, e.toString(), e);
    }
  }

  private static KafkaConsumer<String, byte[]> controlConsumer(String bootstrap, String hostId) {
    Properties p = KafkaClients.clientProperties(bootstrap);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "sand-control-" + hostId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  public String hostId() {
    return hostId;
  }

  public String busAddress() {
    return busAddress;
  }

  public int metricsPort() {
    return metrics.port();
  }

  /**
   * Stop taking work, stop the sandboxes (their applications stay deployed in the cluster state), then the
   * bridge and the clients; each step runs even when an earlier one failed.
   */
  @Override
  public void close() {
    closeQuietly("control listener", controlListener);
    closeQuietly("cluster membership", membership);
    closeQuietly("gate", gateServer);
    closeQuietly("deploys", (AutoCloseable) this::stopDeploys);
    closeQuietly("LQ_HA processor", processor);
    closeQuietly("execution logs", logs); // before the store they write to
    closeQuietly("bucket triggers", bucketTriggers);
    closeQuietly("bridge", bridge);
    closeQuietly("producer", (AutoCloseable) () -> {
      scheduler.shutdownNow();
      deps.producer().close(Duration.ofSeconds(5));
    });
    closeQuietly("metrics", metrics);
    closeQuietly("cluster keys", keysRead); // before the store it reads
    closeQuietly("Docker client", deps.docker());
    closeQuietly("grain topics", deps.topics());
    closeQuietly("cluster store", deps.store());
    closeQuietly(
        "data layer",
        dataServer); // waits (bounded) for pending writes to reach the global data layer
    closeQuietly("global data layer", deps.global());
    closeQuietly("bus", busServer);
    PoisonLedger.install(PoisonLedger.off()); // a next agent of this JVM (tests) opens its own
    LOG.info("[host {}] host agent stopped", hostId);
  }

  private void stopDeploys() throws InterruptedException {
    control
        .shutdown(); // reconciliations under way finish (each is bounded), then the sandboxes stop
    if (!control.awaitTermination(60, TimeUnit.SECONDS)) {
      LOG.warn("[host {}] deploys still running after 60 s; stopping the sandboxes anyway", hostId);
    }
    deployer.close();
  }

  /** Close {@code part} if it is there and closeable (a part not started yet is null; a fake may not be). */
  private void closeQuietly(String what, Object part) {
    if (part instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.warn("[host {}] stopping the {}: {}", hostId, what, e.toString());
      }
    }
  }

  /** Heap the JVM needs besides what the quotas let tenants fill: clients, threads, buffers, code. */
  static final long BASE_HEAP_MB = 192;

  /**
   * The heap this agent needs so that tenants filling every quota cannot run it out of memory: the
   * host-wide limits of the local bus ({@code bus.queued.max.bytes}) and data layer ({@code max.bytes}),
   * the reports it may hold for Kafka ({@code bridge.max.pending.bytes}), two messages being decoded, a
   * quarter on top for object overhead, plus {@link #BASE_HEAP_MB}. deploy/hostagent.sh sizes -Xmx with it.
   */
  static long requiredHeapMb(Config c, Config dc) {
    LocalBusSettings bus = LocalBusSettings.from(c, HostAgentSettings.BUS);
    long filled = bus.queuedMaxBytes()
        + dc.getLong("max.bytes")
        + BridgeSettings.from(c, HostAgentSettings.BRIDGE, "heap").maxPendingBytes()
        + 2L * bus.messageMaxBytes();
    return BASE_HEAP_MB + (filled + filled / 4 + (1 << 20) - 1) / (1 << 20);
  }

  /** Run until SIGTERM. Bad settings stop it before any socket opens, naming the setting. */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--help")) {
      System.out.println(
          args.length > 1 && args[1].equals(ClusterSettings.COMPONENT)
              ? ClusterSettings.DEF.toMarkdown()
              : DEF.toMarkdown());
      return;
    }
    if (args.length > 0
        && args[0].equals("--heap-mb")) { // the -Xmx its quotas need (deploy/hostagent.sh)
      try {
        System.out.println(
            requiredHeapMb(DEF.parse(Map.of()), DataLayerSettings.DEF.parse(Map.of())));
      } catch (ConfigDef.ConfigException e) {
        System.err.println("Error: " + e.getMessage());
        System.exit(2);
      }
      return;
    }
    Config c;
    Config dc;
    ClusterSettings cluster;
    try {
      c = DEF.parse(Map.of());
      dc = DataLayerSettings.DEF.parse(Map.of());
      cluster = ClusterSettings.fromEnvironment(System.getenv());
      ApplicationLimits.fromEnvironment(
          System.getenv()); // bad caps stop the agent before any socket opens
    } catch (ConfigDef.ConfigException e) {
      System.err.println("Error: " + e.getMessage());
      System.exit(2);
      return;
    }
    LogIdentity.set("hostagent", HostAgentSettings.hostId(c));
    for (String unknown : ConfigDef.unknownVariables(
        System.getenv(),
        List.of(DEF, DataLayerSettings.DEF, ApplicationLimits.DEF, ClusterSettings.DEF),
        SCRIPT_VARIABLES)) {
      LOG.warn(unknown);
    }
    HostAgent agent;
    try {
      agent = newAgent(c, dc, System.getenv(), connect(c, dc, cluster, System.getenv()))
          .start();
    } catch (
        Throwable
            e) { // e.g. Cassandra too slow to answer: exit, so the supervisor starts us again (the
      // clients already open keep non-daemon threads: without exit the process would stay up, never
      // ready)
      LOG.error("host agent not started: {}", e.toString(), e);
      System.err.flush();
      Runtime.getRuntime().halt(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(new Thread(
            () -> {
              agent.close();
              stopped.countDown();
            },
            "shutdown"));
    System.out.println("hostagent " + agent.hostId() + " listening on " + agent.busAddress()
        + " (metrics :" + agent.metricsPort() + ")");
    System.out.flush();
    stopped.await();
  }
}
