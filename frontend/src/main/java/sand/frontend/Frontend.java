package sand.frontend;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.component.LifeCycle;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterKeysRefresher;
import sand.cluster.ClusterSettings;
import sand.cluster.ClusterStore;
import sand.cluster.KafkaClients;
import sand.cluster.SecretBox;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalDataSettings;
import sand.cluster.metrics.StoreHealth;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;
import sand.common.log.LogIdentity;
import sand.contracts.ApplicationLimits;
import sand.contracts.ClusterKeys;
import sand.contracts.ExecutionTag;
import sand.contracts.TopicNames;
import sand.frontend.internal.BodyBudget;
import sand.frontend.internal.JsonErrorHandler;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.internal.Router;
import sand.frontend.internal.Throttle;
import sand.frontend.invoke.AgentGates;
import sand.frontend.invoke.AppDirectory;
import sand.frontend.invoke.ControlWatcher;
import sand.frontend.invoke.ExecutionLog;
import sand.frontend.invoke.IdempotencyKeys;
import sand.frontend.invoke.InvokeAuth;
import sand.frontend.invoke.InvokeHandler;
import sand.frontend.invoke.KafkaResponseTopics;
import sand.frontend.invoke.ResponseListener;
import sand.frontend.invoke.ResponseTopicTakeover;
import sand.frontend.invoke.Results;
import sand.frontend.knix.GrainManagement;
import sand.frontend.knix.KnixExecutions;
import sand.frontend.knix.KnixLogins;
import sand.frontend.knix.KnixManagement;
import sand.frontend.knix.KnixStorage;
import sand.frontend.trigger.BucketRetries;
import sand.frontend.trigger.Deliveries;
import sand.frontend.trigger.KafkaTopicSource;
import sand.frontend.trigger.QueueConsumers;
import sand.frontend.trigger.TimerScheduler;
import sand.frontend.trigger.TopicSource;
import sand.frontend.trigger.TriggerSet;

/**
 * The frontend server (paper §4.3): the developers' REST API and the end users' requests, on embedded
 * Jetty. {@link #newServer} builds it from settings and its dependencies (tests hand in an in-memory
 * cluster store and Kafka mocks); {@link #main} connects the real ones, starts it and joins it.
 */
public final class Frontend {
  private static final Logger LOG = LoggerFactory.getLogger(Frontend.class);

  /** Read by deploy/frontend.sh, not by this process (so not reported as unknown settings). */
  static final Set<String> SCRIPT_VARIABLES =
      Set.of("SAND_FRONTEND_PORTS", "SAND_FRONTEND_HEAP_MB");

  /** The frontend's settings (SAND_FRONTEND_&lt;KEY&gt;): {@link FrontendSettings}; Kafka and Cassandra: {@link ClusterSettings}. */
  public static final ConfigDef DEF = FrontendSettings.DEF;

  /**
   * What the frontend talks to; the real ones come from {@link #connect}, tests hand in fakes.
   *
   * @param peerResponses a consumer for the response topic of another (dead) frontend, given its id
   * @param data          the global data layer, for the KNIX door's storage actions (null: none, they fail)
   * @param control       a consumer for {@code sand.control}, to see other frontends' deploys and undeploys at once
   *                      (null: they are seen when the application cache's entry expires)
   * @param triggerTopics the Kafka that queue triggers consume (null: no queue triggers)
   */
  public record Deps(
      ClusterStore store,
      Producer<String, byte[]> producer,
      Consumer<String, byte[]> responses,
      ResponseListener.TopicCreator topics,
      Clock clock,
      Function<String, Consumer<String, byte[]>> peerResponses,
      GlobalDataLayer data,
      Consumer<String, byte[]> control,
      TopicSource triggerTopics) {
    public Deps(
        ClusterStore store,
        Producer<String, byte[]> producer,
        Consumer<String, byte[]> responses,
        ResponseListener.TopicCreator topics,
        Clock clock,
        Function<String, Consumer<String, byte[]>> peerResponses,
        GlobalDataLayer data,
        Consumer<String, byte[]> control) {
      this(store, producer, responses, topics, clock, peerResponses, data, control, null);
    }

    public Deps(
        ClusterStore store,
        Producer<String, byte[]> producer,
        Consumer<String, byte[]> responses,
        ResponseListener.TopicCreator topics,
        Clock clock,
        Function<String, Consumer<String, byte[]>> peerResponses,
        GlobalDataLayer data) {
      this(store, producer, responses, topics, clock, peerResponses, data, null);
    }

    public Deps(
        ClusterStore store,
        Producer<String, byte[]> producer,
        Consumer<String, byte[]> responses,
        ResponseListener.TopicCreator topics,
        Clock clock,
        Function<String, Consumer<String, byte[]>> peerResponses) {
      this(store, producer, responses, topics, clock, peerResponses, null);
    }

    /** The same, with every call to Cassandra (the cluster state, the global data layer) counted by health. */
    Deps watchedBy(StoreHealth health) {
      return new Deps(
          health.watch(StoreHealth.CLUSTER_STATE, ClusterStore.class, store),
          producer,
          responses,
          topics,
          clock,
          peerResponses,
          data == null ? null : health.watch(StoreHealth.GLOBAL_DATA, GlobalDataLayer.class, data),
          control,
          triggerTopics);
    }

    /** No other frontend's response topic can be read (a test with one frontend). */
    public Deps(
        ClusterStore store,
        Producer<String, byte[]> producer,
        Consumer<String, byte[]> responses,
        ResponseListener.TopicCreator topics,
        Clock clock) {
      this(store, producer, responses, topics, clock, peer -> {
        throw new IllegalStateException("no consumer for frontend " + peer + "'s response topic");
      });
    }
  }

  private Frontend() {}

  /** The id of a frontend: the setting, or fe-&lt;port&gt;. */
  public static String id(Config config) {
    return FrontendSettings.from(config).frontendId();
  }

  /** {@link #newServer(Config, ApplicationLimits, Deps)} with every cap at its default (tests). */
  public static Server newServer(Config config, Deps deps) {
    return newServer(config, ApplicationLimits.defaults(), deps);
  }

  /**
   * Build the server (not started). Starting it creates the response topic and starts listening on it.
   * {@code limits} are the operator's caps on applications' settings ({@code SAND_LIMITS_*}).
   */
  /** How long a stopping frontend lets its requests under way finish (deploy/frontend.sh kills it after 30 s). */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);

  public static Server newServer(Config config, ApplicationLimits limits, Deps given) {
    FrontendSettings s = FrontendSettings.from(config);
    String id = s.frontendId();
    // every call to Cassandra counted (sand_cassandra_*): the metrics' registry comes first
    PrometheusRegistry registry = new PrometheusRegistry();
    StoreHealth health =
        new StoreHealth(registry, FrontendMetrics.labels(id), given.clock()::millis);
    Deps deps = given.watchedBy(health);
    QueuedThreadPool pool = new QueuedThreadPool(200, 8);
    pool.setName("frontend-" + id);
    Server server = new Server(pool);
    server.setErrorHandler(new JsonErrorHandler());
    ServerConnector http = new ServerConnector(server);
    // As long a request line as nginx passes on (large_client_header_buffers 64k): a query longer
    // than a route
    // allows reaches it and gets the route's own 400, not Jetty's 414.
    http.getConnectionFactory(HttpConnectionFactory.class)
        .getHttpConfiguration()
        .setRequestHeaderSize(REQUEST_LINE_MAX_BYTES);
    http.setHost(s.host());
    http.setPort(s.port());
    // A synchronous request may wait up to 300 s for its result (request_timeout_s).
    http.setIdleTimeout(Duration.ofSeconds(330).toMillis());
    server.addConnector(http);

    // the cluster secret, as every process holds it: read again every few seconds, so a rotation
    // reaches this frontend without a restart (ClusterSecretHandler)
    ClusterKeys clusterKeys = ClusterKeys.of(deps.store().clusterSecret());
    ClusterKeysRefresher keysRead =
        new ClusterKeysRefresher(deps.store().clusterSecrets(), clusterKeys, "frontend " + id);
    ExecutionTag tags = new ExecutionTag(clusterKeys);
    SecretBox box = new SecretBox(clusterKeys);
    ExecutionLog executions = new ExecutionLog(deps.store(), s.executionTtl(), 4, 50_000);
    ExecutorService refresher = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "app-directory-" + id);
      t.setDaemon(true);
      return t;
    });
    AppDirectory directory =
        new AppDirectory(deps.store(), s.appCache(), System::nanoTime, refresher, clusterKeys);
    FrontendMetrics metrics = new FrontendMetrics(registry, id, directory::cachedOwner);
    // A data trigger's failed first execution ends here unawaited: retried (docs/data-triggers.md).
    BucketRetries bucketRetries = new BucketRetries(deps.store(), directory);
    Results results =
        new Results(executions, deps.clock(), tags, id).onUnawaitedEnd(bucketRetries::ended);
    ResponseListener listener = new ResponseListener(
        TopicNames.responseTopic(id), deps.responses(), deps.topics(), results);
    ResponseTopicTakeover takeover = new ResponseTopicTakeover(
        deps.store(),
        deps.clock(),
        s.frontendMaxAge(),
        s.heartbeat(),
        id,
        peer -> new ResponseListener(
            TopicNames.responseTopic(peer),
            deps.peerResponses().apply(peer),
            t -> {},
            new Results(executions, deps.clock(), tags, peer).onUnawaitedEnd(bucketRetries::ended),
            true));
    metrics.gauge("sand_frontend_requests_waiting", results::waiting);
    metrics.gauge("sand_frontend_results_refused_total", results::refused);
    metrics.gauge("sand_frontend_execution_writes_pending", executions::pending);
    metrics.gauge("sand_frontend_execution_writes_retry_bytes", executions::retryBytes);
    metrics.gauge("sand_frontend_execution_writes_dropped_total", executions::dropped);

    BodyBudget budget = new BodyBudget(s.bodyBudgetBytes());
    metrics.gauge("sand_frontend_body_bytes_held", budget::used);
    metrics.gauge("sand_frontend_bodies_refused_total", budget::refused);
    Router router = new Router(s.maxBodyBytes(), budget);
    AtomicReference<AgentGates> gated = new AtomicReference<>(); // set below, when the gates are on
    Readiness readiness = new Readiness(
        id,
        s.readyResultsSilence(),
        () -> listener.kafkaAnsweredWithin(s.readyResultsSilence()),
        () -> gated.get() == null ? 0 : gated.get().gatesUp(),
        health);
    metrics.gauge("sand_frontend_ready", () -> readiness.ready() ? 1 : 0);
    new SystemHandler(id, metrics, listener::running, readiness).routes(router);
    AppsHandler apps =
        new AppsHandler(deps.store(), deps.clock(), s.hostMaxAge(), limits, directory);
    Quotas quotas = new Quotas(s.quotaAppsPerAccount(), s.quotaGrains());
    apps.useQuotas(quotas);
    if (deps.data() != null) {
      apps.useStorage(
          deps.data()); // bytes used / allowed in the global data layer, in GET /api/v1/apps/{app}
    }
    GrainsHandler grains = new GrainsHandler(
        deps.store(), apps, deps.clock(), 4 * s.maxBodyBytes(), limits.requirementsAllowUrls());
    grains.useQuotas(quotas);
    grains.routes(router);
    apps.routes(router);
    new SecretsHandler(deps.store(), apps, deps.clock(), box).routes(router);
    new AliasesHandler(deps.store(), apps, new ControlEvents(deps.producer())).routes(router);
    DeploymentsHandler deployments = new DeploymentsHandler(
        deps.store(), apps, new ControlEvents(deps.producer()), deps.clock());
    deployments.routes(router);
    DisabledAccounts disabled = new DisabledAccounts(deps.store(), AuthHandler.KEY_MAX_AGE);
    Throttle signUps = new Throttle(
        "sign-ups from this address",
        FrontendSettings.SIGNUP_PER_ADDRESS_PER_MINUTE,
        s.signUpsPerAddressPerMinute());
    AccountsHandler accounts =
        new AccountsHandler(deps.store(), s.openSignup(), deps.clock(), apps, disabled);
    accounts.limitSignUps(signUps);
    accounts.routes(router);
    new AdminHandler(deps.store(), apps, deployments, disabled, deps.clock(), s.hostMaxAge())
        .routes(router);
    new HostsAdmin(deps.store(), new ControlEvents(deps.producer()), deps.clock(), s.hostMaxAge())
        .routes(router);
    InvokeAuth invokeAuth = new InvokeAuth(directory, metrics, deps.clock());
    new ExecutionsHandler(deps.store(), directory).useAuth(invokeAuth).routes(router);
    new EndpointHandler(deps.store(), apps, deps.clock(), box).routes(router);
    new ClusterSecretHandler(deps.store(), deps.clock()).routes(router);
    new AppExecutionsHandler(deps.store(), apps, deps.clock()).routes(router);
    new DataViewHandler(apps, deps.data()).routes(router);
    InvokeHandler invoke = new InvokeHandler(
        directory,
        deps.producer(),
        results,
        executions,
        tags,
        metrics,
        deps.clock(),
        id,
        s.requestTimeoutS(),
        s.maxConcurrentPerAccount());
    invoke.shareLimitWith(takeover::liveFrontends);
    invoke.limitRate(s.quotaRequestsPerSecond());
    invoke.useAuth(invokeAuth);
    invoke.routes(router);
    // Events no caller waits for: retries, dead letters, idempotency keys, timers and queues
    // (docs/triggers.md).
    IdempotencyKeys keys = new IdempotencyKeys(deps.store());
    invoke.useKeys(keys);
    Deliveries deliveries = new Deliveries(invoke, keys, deps.store(), metrics, deps.clock());
    bucketRetries.use(deliveries);
    invoke.useAsyncRunner((app, value, executionId) -> deliveries
        .deliver(app, value, "async", null, executionId, Deliveries.Unsent.CALLER_RETRIES)
        .map(Deliveries.Delivery::firstSent));
    metrics.gauge("sand_frontend_deliveries_in_flight", deliveries::inFlight);
    TriggerSet triggerSet = new TriggerSet(deps.store());
    TimerScheduler timers = new TimerScheduler(
        triggerSet, deps.store(), directory, deliveries, metrics, deps.clock(), id);
    QueueConsumers queues = deps.triggerTopics() == null
        ? null
        : new QueueConsumers(
            triggerSet, deps.triggerTopics(), directory, deliveries, metrics, deps.clock(), id);
    TriggersHandler triggers = new TriggersHandler(
            deps.store(), apps, directory, deps.triggerTopics(), deps.clock())
        .useDeliveries(deliveries, queues)
        .onChange(triggerSet::changed);
    triggers.routes(router);
    apps.useTriggers(triggers);
    ControlEvents control = new ControlEvents(deps.producer());
    BucketsHandler buckets =
        new BucketsHandler(deps.store(), control::publishBuckets, deps.clock());
    buckets.routes(router);
    apps.useBuckets(buckets);
    AgentGates gates = null;
    if (s.gate()) {
      gates = new AgentGates(
          deps.store(),
          deps.clock(),
          s.hostMaxAge(),
          id,
          () -> tags.credential("gate"),
          m -> results.arrived(null, m),
          invoke::send);
      invoke.useGates(gates);
      gated.set(gates);
      metrics.gauge("sand_frontend_gate_requests_total", gates::submitted);
      metrics.gauge("sand_frontend_gate_unacknowledged", gates::unacked);
    }

    AuthHandler auth =
        new AuthHandler(deps.store(), s.adminKey(), s.adminKeyPrevious(), disabled, router);
    String bind = s.host();
    String self = bind.equals("0.0.0.0") || bind.equals("::")
        ? "127.0.0.1"
        : bind.contains(":") ? "[" + bind + "]" : bind;
    LoopbackApi loopback =
        new LoopbackApi(() -> URI.create("http://" + self + ":" + http.getLocalPort()));
    Throttle loginsByAddress = new Throttle(
        "logins from this address",
        FrontendSettings.LOGIN_PER_ADDRESS_PER_MINUTE,
        s.loginPerAddressPerMinute());
    Throttle loginsByEmail = new Throttle(
        "logins to this e-mail",
        FrontendSettings.LOGIN_PER_EMAIL_PER_MINUTE,
        s.loginPerEmailPerMinute());
    KnixManagement knixManagement = new KnixManagement(
            deps.store(),
            auth::account,
            loopback::call,
            new KnixStorage(deps.data(), s.knixStorageBytesPerAccount()),
            deps.clock(),
            KnixLogins.ITERATIONS)
        .limitLogins(signUps, loginsByAddress, loginsByEmail, s.loginHashSlots())
        .limitZips(s.maxBodyBytes(), 4 * s.maxBodyBytes());
    knixManagement.routes(router);
    if (gates != null) { // grains' management requests come through the agents' gates
      gates.useManagement(new GrainManagement(deps.store(), auth::delegate, knixManagement));
    }
    metrics.gauge("sand_frontend_password_derivations_total", KnixLogins::derivations);
    metrics.gauge(
        "sand_frontend_throttled_total",
        () -> signUps.refused() + loginsByAddress.refused() + loginsByEmail.refused());
    KnixExecutions knix = new KnixExecutions(
        invoke,
        name -> directory.find(name).map(AppDirectory.Target::appId),
        deps.store(),
        results);
    metrics.gauge("sand_frontend_knix_result_waits", knix::waits);
    knix.routes(router);
    limitBodies(router);
    // A graceful stop (TERM: a rolling upgrade, systemd): no new connection, requests under way
    // finish within STOP_TIMEOUT, one arriving meanwhile on a kept-alive connection is closed
    // unanswered (nginx sends it to the other frontend); so is an invocation while results cannot
    // reach this frontend (DecliningHandler, Readiness). The console (/console/) needs no key.
    DecliningHandler declining = new DecliningHandler(
        new GracefulHandler(new MetricsHandler(metrics, ConsoleHandler.around(auth, s))),
        readiness);
    server.addEventListener(declining);
    server.setHandler(declining);
    server.setStopTimeout(STOP_TIMEOUT.toMillis());
    server.addBean(router, false);
    server.addBean(listener, true);
    server.addBean(takeover, true);
    if (gates != null) {
      server.addBean(gates, true);
    }
    if (deps.control() != null) {
      server.addBean(new ControlWatcher(deps.control(), directory, results), true);
    }
    server.addBean(timers, true);
    if (queues != null) {
      server.addBean(queues, true);
    }
    server.addEventListener(new LifeCycle.Listener() {
      @Override
      public void lifeCycleStopped(LifeCycle event) {
        executions.close();
        refresher.shutdownNow();
        keysRead.close();
        deliveries.close();
        keys.close();
        knix.close();
      }
    });
    return server;
  }

  /** The longest request line and headers a frontend reads (nginx passes as much: deploy/nginx/nginx.conf.tmpl). */
  static final int REQUEST_LINE_MAX_BYTES = 64 * 1024;

  /** The largest body of a route that takes a few fields of JSON (docs/api.md "Request bodies"). */
  static final long SMALL_BODY_BYTES = 64 * 1024;

  /** Routes whose bodies are a few fields take no more than that: nobody parks megabytes on them. */
  private static void limitBodies(Router router) {
    router
        .limitBody("POST", "/api/v1/accounts", SMALL_BODY_BYTES)
        .limitBody("DELETE", "/api/v1/accounts/{account}", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/apps/{app}/deploy", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/apps/{app}/undeploy", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/apps/{app}/rollback", SMALL_BODY_BYTES)
        .limitBody("PUT", "/api/v1/apps/{app}/aliases/{alias}", SMALL_BODY_BYTES)
        .limitBody("PUT", "/api/v1/apps/{app}/secrets/{name}", SMALL_BODY_BYTES)
        .limitBody("PUT", "/api/v1/apps/{app}/endpoint", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/apps/{app}/keys", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/apps/{app}/signing-secret", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/admin/apps/{app}/undeploy", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/admin/accounts/{account}/disable", SMALL_BODY_BYTES)
        .limitBody("POST", "/api/v1/admin/accounts/{account}/enable", SMALL_BODY_BYTES);
  }

  /** The real dependencies: Cassandra, a Kafka producer and the response topic's consumer. */
  public static Deps connect(Config config, ClusterSettings cluster) {
    String id = id(config);
    ClusterStore store = cluster.connectStore();
    String bootstrap = cluster.kafkaBootstrap();
    Properties p = KafkaClients.producerProperties(bootstrap, id);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, ResponseListener.groupId(id));
    boolean gate = FrontendSettings.from(config).gate();
    return new Deps(
        store,
        new KafkaProducer<>(p),
        responseConsumer(bootstrap, id, id, gate),
        new KafkaResponseTopics(bootstrap, cluster.kafkaReplication()),
        Clock.systemUTC(),
        peer -> responseConsumer(bootstrap, id, peer, false),
        GlobalDataSettings.open(GlobalDataSettings.DEF.parse(Map.of())),
        controlConsumer(bootstrap, id),
        new KafkaTopicSource(bootstrap));
  }

  /** A consumer of sand.control with no group (assigned, nothing committed): {@link ControlWatcher}. */
  private static Consumer<String, byte[]> controlConsumer(String bootstrap, String id) {
    Properties c = KafkaClients.clientProperties(bootstrap);
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, "sand-frontend-" + id + "-control");
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return new KafkaConsumer<>(c);
  }

  /** A consumer of {@code owner}'s response topic for frontend {@code id}, committing in the owner's group. */
  private static Consumer<String, byte[]> responseConsumer(
      String bootstrap, String id, String owner, boolean gate) {
    Properties c = KafkaClients.clientProperties(bootstrap);
    c.put(
        ConsumerConfig.CLIENT_ID_CONFIG,
        "sand-frontend-" + id + (owner.equals(id) ? "" : "-for-" + owner));
    c.put(
        ConsumerConfig.GROUP_ID_CONFIG,
        ResponseListener.groupId(owner)); // where its offsets are committed
    c.put(
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
        false); // committed once recorded (ResponseListener)
    c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, KafkaClients.MAX_REQUEST_BYTES);
    if (gate) {
      // Results come through the host agents' gates; the response topic is their record and the
      // path of the
      // few requests that fell back to Kafka: read it in batches (up to 100 ms late) rather than
      // once per result.
      c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
      c.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, 64 * 1024);
    }
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return new KafkaConsumer<>(c);
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--help")) { // the settings tables of docs/config.md
      String which = args.length > 1 ? args[1] : "";
      System.out.print(
          which.equals(ApplicationLimits.COMPONENT)
              ? ApplicationLimits.DEF.toMarkdown()
              : which.equals(ClusterSettings.COMPONENT)
                  ? ClusterSettings.DEF.toMarkdown()
                  : DEF.toMarkdown());
      return;
    }
    Config config;
    ApplicationLimits limits;
    ClusterSettings cluster;
    try {
      config = DEF.parse(Map.of());
      FrontendSettings.from(config); // its cross-field checks, before any socket opens
      limits = ApplicationLimits.fromEnvironment(System.getenv());
      cluster = ClusterSettings.fromEnvironment(System.getenv());
    } catch (ConfigDef.ConfigException e) {
      System.err.println("Error: " + e.getMessage());
      System.exit(2);
      return;
    }
    LogIdentity.set("frontend", config.getString(FrontendSettings.ID));
    // of the data layer's settings this process reads only where the global layer is; the rest are
    // the host agents'
    Set<String> elsewhere = new HashSet<>(SCRIPT_VARIABLES);
    System.getenv().keySet().stream()
        .filter(k -> k.startsWith("SAND_DATALAYER_"))
        .forEach(elsewhere::add);
    for (String unknown : ConfigDef.unknownVariables(
        System.getenv(),
        List.of(DEF, ApplicationLimits.DEF, ClusterSettings.DEF, GlobalDataSettings.DEF),
        elsewhere)) {
      LOG.warn(unknown);
    }
    Deps deps;
    Server server;
    try {
      deps = connect(config, cluster);
      server = newServer(config, limits, deps);
    } catch (Exception | Error e) {
      // A frontend that could not start must not linger as a JVM that never serves: its supervisor
      // restarts it.
      LOG.error("[frontend] could not start: {}", e.toString(), e);
      Runtime.getRuntime().halt(1);
      return;
    }
    Runtime.getRuntime()
        .addShutdownHook(new Thread(
            () -> {
              try {
                server.stop();
              } catch (Exception e) {
                LOG.warn("stopping: {}", e.toString());
              }
              deps.producer().close();
              deps.store().close();
              if (deps.data() != null) {
                deps.data().close();
              }
            },
            "frontend-shutdown"));
    try {
      server.start();
    } catch (Exception | Error e) {
      LOG.error("[frontend] could not start serving: {}", e.toString(), e);
      Runtime.getRuntime().halt(1);
      return;
    }
    LOG.info(
        "[frontend {}] listening on http://{}:{}",
        id(config),
        FrontendSettings.from(config).host(),
        ((ServerConnector) server.getConnectors()[0]).getLocalPort());
    server.join();
  }
}
