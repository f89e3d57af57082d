package sand.hostagent;

import static sand.common.ConfigDef.HOST_PORTS;
import static sand.common.ConfigDef.PORT;
import static sand.common.ConfigDef.SECRET;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.emptyOr;
import static sand.common.ConfigDef.matches;
import static sand.common.ConfigDef.or;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.CassandraClusterStore;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.KafkaClients;
import sand.common.ConfigDef.Check;
import sand.common.ConfigDef.Config;
import sand.common.ConfigDef;
import sand.common.Credentials;
import sand.common.ThriftServer;
import sand.contracts.ApplicationLimits;
import sand.contracts.ExecutionTag;
import sand.contracts.gate.HostAgentGate;
import sand.datalayer.DataLayerConfig;
import sand.datalayer.DataLayerServer;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.BridgeSettings;
import sand.hostagent.bridge.FrontendGate;
import sand.hostagent.bridge.GlobalBusBridge;
import sand.hostagent.bridge.HostAgentQueueProcessor;
import sand.hostagent.cluster.ClusterMembership;
import sand.hostagent.sandbox.DockerHttpEngine;
import sand.hostagent.sandbox.SandboxManager;
import sand.hostagent.sandbox.SandboxSettings;
import sand.localbus.LocalBusServer;
import sand.localbus.LocalBusSettings;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

/**
 * The host agent (paper §4.1): one per host. Embeds the local message bus and the local data layer,
 * joins the cluster, runs the sandboxes of the applications deployed here, bridges the local bus and
 * Kafka with condition flags, and stores instances' logs. {@link #main} runs it until SIGTERM.
 */
public final class HostAgent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HostAgent.class);

  /** The host agent's settings (SAND_HOSTAGENT_&lt;KEY&gt;); the data layer's are SAND_DATALAYER_&lt;KEY&gt;. */
  public static final ConfigDef DEF = sandbox(bridge(bus(new ConfigDef("hostagent")
      .define("host.id", STRING, "", emptyOr("the host name", matches("[A-Za-z0-9_.-]{1,64}", "1-64 letters, digits, _ . -")), "this host's id in the cluster")
      .define("kafka.bootstrap", STRING, "127.0.0.1:9092", HOST_PORTS,
          "Kafka bootstrap servers (the global message bus)")
      .define("credential", STRING, "", emptyOr("random", SECRET),
          "the host agent's own credential for the local bus and data layer")
      .define("gate.port", INT, 9192, or(-1, "no gate", PORT),
          "TCP port of the gate frontends hand requests to and take results from (on bus.host); 0 picks a free port, "
              + "-1 turns the gate off (every request and result then goes through Kafka)")
      .define("metrics.port", INT, 9100, PORT,
          "Prometheus metrics on http://<bus.host>:<port>/metrics; 0 picks a free port")
      .define("heartbeat.ms", INT, 2000, between(100, 60_000),
          "how often this host writes its heartbeat to Cassandra")
      .define("fail.after.ms", INT, 10_000, between(1000, 600_000),
          "a host whose heartbeat is older than this is considered failed")
      .define("topic.partitions", INT, 4, between(1, 1000),
          "partitions of each grain topic (at least the number of hosts running the grain)")
      .define("topic.replication", INT, 1, between(1, 16),
          "replication factor of the topics the agent creates")
      .define("sockets.dir", STRING, "", Check.of(v -> true, "a folder, or empty for <sandbox.state.dir>/sockets"),
          "where each application's bus.sock and data.sock are created")
      .define("reconcile.ms", INT, 30_000, between(1000, 3_600_000),
          "how often the agent re-reads the cluster state as a safety net for missed control events")
      .define("control.threads", INT, 8, between(1, 256),
          "applications deployed at once (one application's deploys always run one at a time)")
      .define("deploy.workers.timeout.s", INT, 60, between(1, 3600),
          "longest wait for a new sandbox's grain workers to poll their queues before the deploy fails")
      .define("deploy.retry.initial.s", INT, 30, between(1, 86_400),
          "first wait before a failed deploy is tried again (doubling per failure)")
      .define("deploy.retry.max.s", INT, 1800, between(1, 86_400),
          "longest wait between attempts of a failed deploy")
      .define("log.ttl.hours", INT, 168, between(1, 24 * 365),
          "how long instances' log lines are kept in Cassandra"))));

  private static ConfigDef bus(ConfigDef d) {
    return LocalBusSettings.declare(d, "bus.");
  }

  private static ConfigDef bridge(ConfigDef d) {
    return BridgeSettings.declare(d, "bridge.");
  }

  private static ConfigDef sandbox(ConfigDef d) {
    return SandboxSettings.declare(d, "sandbox.");
  }

  private final Config config;
  private final Config dataConfig;
  private final Map<String, String> env;
  private final Clock clock = Clock.systemUTC();
  private final List<AutoCloseable> toClose = new java.util.ArrayList<>();
  private String hostId;
  private LocalBusServer busServer;
  private DataLayerServer dataServer;
  private Metrics metrics;
  private String busAddress;

  public HostAgent(Config config, Config dataConfig, Map<String, String> env) {
    this.config = config;
    this.dataConfig = dataConfig;
    this.env = env;
  }

  public HostAgent start() throws Exception {
    hostId = config.getString("host.id").isEmpty() ? hostName() : config.getString("host.id");
    String agentCredential = config.getString("credential").isEmpty()
        ? HexFormat.of().formatHex(new SecureRandom().generateSeed(24)) : config.getString("credential");
    Credentials credentials = new Credentials(agentCredential);

    LocalBusSettings busSettings = LocalBusSettings.from(config, "bus.");
    LocalMessageBus bus = new LocalMessageBus(credentials, busSettings, "bus.");
    busServer = closing(new LocalBusServer(bus, busSettings).start());
    busAddress = busSettings.host() + ":" + busServer.port();
    dataServer = closing(new DataLayerServer(dataConfig, credentials, DataLayerConfig.openGlobal(dataConfig))
        .start());
    LocalDataLayer data = dataServer.localDataLayer();

    var cassandra = DataLayerConfig.cassandra(dataConfig);
    ClusterStore store = closing(CassandraClusterStore.connect(cassandra.contactPoint(), cassandra.localDatacenter(),
        cassandra.keyspace(), cassandra.replicationFactor()));
    ExecutionTag tags = new ExecutionTag(store.clusterSecret());

    String bootstrap = config.getString("kafka.bootstrap");
    KafkaTopics topics = closing(new KafkaTopics(bootstrap, config.getInt("topic.partitions"),
        (short) config.getInt("topic.replication")));
    topics.ensureControlTopic();
    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2, daemon("agent-timer"));
    BridgeSettings bridgeSettings = BridgeSettings.from(config, "bridge.", hostId);
    Producer<String, byte[]> producer = KafkaClients.producer(bootstrap, hostId);
    GlobalBusBridge bridge = new GlobalBusBridge(bridgeSettings, KafkaClients.consumer(bootstrap, bridgeSettings.groupId(), bridgeSettings.hostId()),
        producer, bus, agentCredential, data, clock, scheduler);
    ExecutionLogs logs = new ExecutionLogs(store, Duration.ofHours(config.getInt("log.ttl.hours")));
    metrics = closing(new Metrics(hostId));

    SandboxSettings sandboxSettings = SandboxSettings.from(config, "sandbox.", env);
    ApplicationLimits limits = ApplicationLimits.fromEnvironment(env);
    SandboxManager sandboxes = new SandboxManager(hostId, sandboxSettings,
        new DockerHttpEngine(sandboxSettings.dockerSocket()), clock, limits);
    sandboxes.removeOthers(Set.of());
    Path sockets = config.getString("sockets.dir").isEmpty() ? sandboxSettings.stateDir().resolve("sockets")
        : Path.of(config.getString("sockets.dir"));
    ApplicationDeployer deployer = new ApplicationDeployer(hostId, store, sandboxes, bridge::updateGrains,
        credentials, agentCredential, bus, data, sockets, topics, clock, limits,
        new ApplicationDeployer.DeployPolicy(Duration.ofSeconds(config.getInt("deploy.workers.timeout.s")),
            Duration.ofSeconds(config.getInt("deploy.retry.initial.s")),
            Duration.ofSeconds(config.getInt("deploy.retry.max.s"))));
    ExecutorService control = Executors.newFixedThreadPool(config.getInt("control.threads"), daemon("control"));
    ReconcileLanes lanes = new ReconcileLanes(control, deployer::reconcile);
    HostAgentQueueProcessor processor = new HostAgentQueueProcessor(bridge, bus, agentCredential, data,
        tags, deployer::knowsGrain, r -> {
          metrics.accept(r);
          logs.accept(r);
        });
    processor.setWorkerHealth(deployer::workerHealth);
    String gateAddress = "";
    FrontendGate gate = null;
    if (config.getInt("gate.port") >= 0) { // frontends hand requests over here and take results (gate.thrift)
      gate = new FrontendGate(bridge, bus, agentCredential, tags);
      processor.setGate(gate);
      ThriftServer gateServer = closing(ThriftServer.tcp("gate", new HostAgentGate.Processor<>(gate),
          busSettings.host(), config.getInt("gate.port"), 256).start());
      gateAddress = busSettings.host() + ":" + gateServer.port();
    }
    closing(new ClusterMembership(store, new HostAgentTables.HostInfo(hostId, busAddress, dataServer.address(),
        gateAddress, Runtime.getRuntime().availableProcessors(), clock.instant(), clock.instant()), clock,
        Duration.ofMillis(config.getInt("fail.after.ms"))).start(Duration.ofMillis(config.getInt("heartbeat.ms"))));

    // Close order (reverse of this list): stop taking work, stop sandboxes, then the bridge and clients.
    toClose.add(() -> {
      scheduler.shutdownNow();
      producer.close(Duration.ofSeconds(5));
    });
    toClose.add(bridge);
    toClose.add(processor);
    toClose.add(() -> {
      control.shutdown(); // reconciliations under way finish (each is bounded), then the sandboxes stop
      if (!control.awaitTermination(60, TimeUnit.SECONDS)) {
        LOG.warn("[host {}] deploys still running after 60 s; stopping the sandboxes anyway", hostId);
      }
      deployer.close();
    });
    bridge.start();
    processor.start();

    metrics.gauge("sand_queue_length", "messages waiting in a local queue", () -> queues(bus, QueueStats::length))
        .gauge("sand_queue_published_total", "messages published to a local queue", () -> queues(bus,
            QueueStats::published))
        .gauge("sand_sandboxes", "sandboxes on this host", () -> Map.of("", sandboxes.list().size()))
        .gauge("sand_data_backups_pending", "data layer writes not yet in Cassandra",
            () -> Map.of("", data.pendingWrites()))
        .gauge("sand_bus_app_bytes",
            "bytes an application has waiting in the local bus (payloads plus 64 per message)",
            () -> perApp(bus.applicationUsage(), u -> u.bytes()))
        .gauge("sand_bus_app_queues", "local queues of an application", () -> perApp(bus.applicationUsage(),
            u -> u.queues()))
        .gauge("sand_data_app_bytes", "bytes an application holds in the local data layer",
            () -> perApp(data.usage(), u -> u.bytes()))
        .gauge("sand_data_app_pending_bytes", "of those, bytes waiting for Cassandra",
            () -> perApp(data.usage(), u -> u.pendingBytes()))
        .gauge("sand_data_app_evicted_total", "items of an application evicted from memory (already in Cassandra)",
            () -> perApp(data.usage(), u -> u.evictedItems()))
        .gauge("sand_kafka_backlog_bytes", "reports waiting for Kafka", () -> Map.of("", processor.pendingBytes()))
        .gauge("sand_outputs_refused_total", "grain outputs refused: forged execution or unknown grain",
            () -> Map.of("", processor.refusedOutputs()))
        .serve(busSettings.host(), config.getInt("metrics.port"));

    Runnable reconcileAll = () -> safely("reconcile", () -> deployer.toReconcile().forEach(lanes::request));
    reconcileAll.run();
    long every = config.getInt("reconcile.ms");
    scheduler.scheduleWithFixedDelay(reconcileAll, every, every, TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(() -> safely("restart dead sandboxes", sandboxes::restartDead), 2, 2,
        TimeUnit.SECONDS);
    closing(new ControlListener(controlConsumer(bootstrap), lanes::request).start());
    LOG.info("[host {}] host agent up: bus {}, data {}, metrics :{}", hostId, busAddress,
        dataServer.address(), metrics.port());
    return this;
  }

  private static <T extends Number> Map<String, Number> queues(LocalMessageBus bus,
                                                              java.util.function.Function<QueueStats, T> f) {
    Map<String, Number> out = new LinkedHashMap<>();
    for (QueueStats s : bus.queueStats()) {
      out.put("queue=\"" + s.queue().replace("\"", "") + "\"", f.apply(s));
    }
    return out;
  }

  private static <U> Map<String, Number> perApp(Map<String, U> usage, java.util.function.Function<U, Number> f) {
    Map<String, Number> out = new LinkedHashMap<>();
    usage.forEach((app, u) -> out.put("app=\"" + app + "\"", f.apply(u)));
    return out;
  }

  private static void safely(String what, Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      LOG.warn("{} failed, will retry: {}", what, e.toString(), e);
    }
  }

  private KafkaConsumer<String, byte[]> controlConsumer(String bootstrap) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "sand-control-" + hostId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  private <T extends AutoCloseable> T closing(T c) {
    toClose.add(c);
    return c;
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9_.-]", "-");
    } catch (UnknownHostException e) {
      return "host";
    }
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

  @Override
  public void close() {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      try {
        toClose.get(i).close();
      } catch (Exception e) {
        LOG.warn("[host {}] stopping {}: {}", hostId, toClose.get(i).getClass().getSimpleName(), e.toString());
      }
    }
    LOG.info("[host {}] host agent stopped", hostId);
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
    LocalBusSettings bus = LocalBusSettings.from(c, "bus.");
    long filled = bus.queuedMaxBytes() + dc.getLong("max.bytes")
        + BridgeSettings.from(c, "bridge.", "heap").maxPendingBytes() + 2L * bus.messageMaxBytes();
    return BASE_HEAP_MB + (filled + filled / 4 + (1 << 20) - 1) / (1 << 20);
  }

  /** Run until SIGTERM. Bad settings stop it before any socket opens, naming the setting. */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--help")) {
      System.out.println(DEF.toMarkdown());
      return;
    }
    if (args.length > 0 && args[0].equals("--heap-mb")) { // the -Xmx its quotas need (deploy/hostagent.sh)
      try {
        System.out.println(requiredHeapMb(DEF.parse(Map.of()), DataLayerConfig.DEF.parse(Map.of())));
      } catch (ConfigDef.ConfigException e) {
        System.err.println("Error: " + e.getMessage());
        System.exit(2);
      }
      return;
    }
    Config c;
    Config dc;
    try {
      c = DEF.parse(Map.of());
      dc = DataLayerConfig.DEF.parse(Map.of());
      ApplicationLimits.fromEnvironment(System.getenv()); // bad caps stop the agent before any socket opens
    } catch (ConfigDef.ConfigException e) {
      System.err.println("Error: " + e.getMessage());
      System.exit(2);
      return;
    }
    HostAgent agent = new HostAgent(c, dc, System.getenv()).start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      agent.close();
      stopped.countDown();
    }, "shutdown"));
    System.out.println("hostagent " + agent.hostId() + " listening on " + agent.busAddress()
        + " (metrics :" + agent.metricsPort() + ")");
    System.out.flush();
    stopped.await();
  }
}
