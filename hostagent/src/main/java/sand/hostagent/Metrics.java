package sand.hostagent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.Unit;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.metrics.Exposition;
import sand.cluster.metrics.ProcessMetrics;
import sand.contracts.Event;
import sand.contracts.TopicNames;
import sand.hostagent.bridge.InstanceReport;
import sand.localbus.QueueStats;

/**
 * The host agent's Prometheus metrics on {@code GET /metrics} (text format 0.0.4, made by the Prometheus Java
 * client): grain instances, their durations and hops, events out, deploys, plus values read when scraped (queues,
 * sandboxes and their cgroups, Kafka lag, pending backups); {@link HostMetrics} declares those. Every series has
 * {@code host}; an application's have {@code app} (its name) and {@code account} (its owner), as on the frontends.
 *
 * <p>Label values never come from a report as a grain wrote it (issue 26): a grain label is a grain of the
 * application's deployed workflow, a status one of {@link InstanceReport#STATUSES}, anything else is counted under
 * {@value #OTHER}; the application is the bus's stamp, named by what this host deployed ({@link #deployed}). So the
 * series are bounded by what operators deployed.
 */
final class Metrics
    implements Consumer<InstanceReport>, ApplicationDeployer.Observer, AutoCloseable {
  /** The label value of a grain or status that is not one of the deployed workflow's or the known ones. */
  static final String OTHER = "other";

  /** Seconds: a grain instance's run, and an event's hop, from a millisecond to its longest timeout. */
  static final double[] RUN_BUCKETS = {
    .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300
  };

  /** Seconds: a deploy, from a swap of code to a sandbox that installs packages. */
  static final double[] DEPLOY_BUCKETS = {.5, 1, 2, 5, 10, 20, 30, 60, 120, 300};

  /** An application's labels: its name and its account (the owner), as the cluster state has them. */
  record AppLabel(String app, String account) {}

  private final PrometheusRegistry registry;
  private final Labels host;
  private final BiPredicate<String, String> knownGrain;
  private final Map<String, AppLabel> apps = new ConcurrentHashMap<>();
  private final Counter instances;
  private final Counter eventsOut;
  private final Histogram instanceSeconds;
  private final Histogram hopSeconds;
  private final Histogram deploySeconds;
  private final Counter scaledToZero;
  private final Histogram coldStartSeconds;
  private HttpServer server;

  /**
   * @param knownGrain whether (application id, grain) is a grain of that application's deployed workflow
   */
  Metrics(PrometheusRegistry registry, String hostId, BiPredicate<String, String> knownGrain) {
    this.registry = registry;
    this.host = Labels.of("host", hostId);
    this.knownGrain = knownGrain;
    ProcessMetrics.register(registry, "hostagent", host);
    instances = Counter.builder()
        .name("sand_instances_total")
        .help("grain instances that finished here, by status (ok, error, lost)")
        .labelNames("app", "account", "grain", "status")
        .constLabels(host)
        .register(registry);
    eventsOut = Counter.builder()
        .name("sand_events_out_total")
        .help(
            "events grain instances produced, by delivery: local queue, Kafka (global), workflow result")
        .labelNames("app", "account", "grain", "delivery")
        .constLabels(host)
        .register(registry);
    instanceSeconds = Histogram.builder()
        .name("sand_instance_duration_seconds")
        .help("run time of grain instances (their handler, as the grain worker timed it)")
        .unit(Unit.SECONDS)
        .labelNames("app", "account", "grain")
        .constLabels(host)
        .classicOnly()
        .classicUpperBounds(RUN_BUCKETS)
        .register(registry);
    hopSeconds = Histogram.builder()
        .name("sand_hop_duration_seconds")
        .help(
            "from an event being sent (by a frontend or a grain) to the grain instance handling it starting here")
        .unit(Unit.SECONDS)
        .labelNames("app", "account", "grain")
        .constLabels(host)
        .classicOnly()
        .classicUpperBounds(RUN_BUCKETS)
        .register(registry);
    deploySeconds = Histogram.builder()
        .name("sand_deploy_duration_seconds")
        .help(
            "deploys of an application on this host, from the cluster state read to ready, by outcome")
        .unit(Unit.SECONDS)
        .labelNames("app", "account", "outcome")
        .constLabels(host)
        .classicOnly()
        .classicUpperBounds(DEPLOY_BUCKETS)
        .register(registry);
    scaledToZero = Counter.builder()
        .name("sand_scaled_to_zero_total")
        .help(
            "times the application's sandbox here was stopped after scale_to_zero_after_s without an event")
        .labelNames("app", "account")
        .constLabels(host)
        .register(registry);
    coldStartSeconds = Histogram.builder()
        .name("sand_cold_start_duration_seconds")
        .help(
            "after scale to zero, from the event that came to the application's sandbox running again here")
        .unit(Unit.SECONDS)
        .labelNames("app", "account")
        .constLabels(host)
        .classicOnly()
        .classicUpperBounds(RUN_BUCKETS)
        .register(registry);
  }

  Labels hostLabels() {
    return host;
  }

  /** The registry, for what else this process measures (Cassandra's health). */
  PrometheusRegistry registry() {
    return registry;
  }

  /** An application's labels: learnt when it was deployed here; else its id and no account. */
  AppLabel label(String appId) {
    AppLabel l = apps.get(appId);
    return l != null ? l : new AppLabel(appId, "");
  }

  /** The application of a queue or a grain topic, or null for the host's own. */
  AppLabel labelOfQueue(QueueStats queue) {
    String app = queue.application();
    return app == null ? null : label(app);
  }

  AppLabel labelOfTopic(String topic) {
    return TopicNames.parseGrainTopic(topic).map(g -> label(g.app())).orElse(null);
  }

  @Override
  public void deployed(ApplicationRecord app, boolean ok, double seconds) {
    AppLabel l = new AppLabel(
        app.name() == null || app.name().isEmpty() ? app.appId() : app.name(),
        app.owner() == null ? "" : app.owner());
    apps.put(app.appId(), l); // bounded by the applications deployed here
    deploySeconds.labelValues(l.app(), l.account(), ok ? "ok" : "failed").observe(seconds);
  }

  @Override
  public void scaledToZero(ApplicationRecord app) {
    AppLabel l = label(app.appId());
    scaledToZero.labelValues(l.app(), l.account()).inc();
  }

  @Override
  public void coldStart(ApplicationRecord app, double seconds) {
    AppLabel l = label(app.appId());
    coldStartSeconds.labelValues(l.app(), l.account()).observe(seconds);
  }

  @Override
  public void accept(InstanceReport r) {
    AppLabel a = label(r.app());
    String grain = knownGrain.test(r.app(), r.grain()) ? r.grain() : OTHER;
    if (r.finished()) {
      String status = InstanceReport.STATUSES.contains(r.status()) ? r.status() : OTHER;
      instances.labelValues(a.app(), a.account(), grain, status).inc();
      JsonNode j = r.json();
      long start = j.path("start_ns").asLong();
      instanceSeconds
          .labelValues(a.app(), a.account(), grain)
          .observe(Math.max(0, j.path("end_ns").asLong() - start) / 1e9);
      long sent = j.path("event_" + Event.SENT_NS)
          .asLong(); // wall clocks: exact on one host, NTP across hosts
      if (sent > 0 && start >= sent) {
        hopSeconds.labelValues(a.app(), a.account(), grain).observe((start - sent) / 1e9);
      }
    }
    for (ObjectNode o : r.outputs()) {
      String to = o.path("grain").asText();
      String kind = to.equals("end") ? "result" : o.path("local").asBoolean() ? "local" : "global";
      eventsOut.labelValues(a.app(), a.account(), grain, kind).inc();
    }
  }

  // ---- values read at scrape time

  /** A gauge without labels but the host. */
  Metrics gauge(String name, String help, DoubleSupplier value) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .constLabels(host)
        .callback(cb -> cb.call(value.getAsDouble()))
        .register(registry);
    return this;
  }

  /** A counter (its name ends in _total) kept elsewhere and read at scrape time. */
  Metrics counter(String name, String help, DoubleSupplier value) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .constLabels(host)
        .callback(cb -> cb.call(value.getAsDouble()))
        .register(registry);
    return this;
  }

  /** A counter read at scrape time with one label of a fixed set of values (e.g. a delivery). */
  Metrics counter(String name, String help, String label, Supplier<Map<String, Long>> values) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .labelNames(label)
        .constLabels(host)
        .callback(cb -> values.get().forEach((k, v) -> cb.call(v, k)))
        .register(registry);
    return this;
  }

  /** A per-application gauge (or counter, for a name ending in _total) read from a map by application id. */
  <U> Metrics perApp(
      String name, String help, Supplier<Map<String, U>> byAppId, ToDoubleFunction<U> value) {
    Consumer<Callback> each = cb -> byAppId.get().forEach((id, u) -> {
      AppLabel l = label(id);
      cb.call(value.applyAsDouble(u), l.app(), l.account());
    });
    if (name.endsWith("_total")) {
      CounterWithCallback.builder()
          .name(name)
          .help(help)
          .labelNames("app", "account")
          .constLabels(host)
          .callback(cb -> each.accept(cb::call))
          .register(registry);
    } else {
      GaugeWithCallback.builder()
          .name(name)
          .help(help)
          .labelNames("app", "account")
          .constLabels(host)
          .callback(cb -> each.accept(cb::call))
          .register(registry);
    }
    return this;
  }

  /** What a callback metric is handed: a value and its label values. */
  interface Callback {
    void call(double value, String... labelValues);
  }

  String render() {
    return Exposition.text(registry);
  }

  /** Serve {@code GET /metrics} on host:port (0 = a free port). */
  Metrics serve(String bindHost, int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress(bindHost, port), 16);
    server.createContext("/metrics", ex -> {
      byte[] body = Exposition.bytes(registry);
      ex.getResponseHeaders().set("Content-Type", Exposition.CONTENT_TYPE);
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    return this;
  }

  int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    if (server != null) {
      server.stop(0);
    }
  }
}
