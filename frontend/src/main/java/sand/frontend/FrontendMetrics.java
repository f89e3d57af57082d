package sand.frontend;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;
import sand.cluster.metrics.Exposition;
import sand.cluster.metrics.ProcessMetrics;

/**
 * The frontend's Prometheus metrics (text format 0.0.4, made by the Prometheus Java client): requests by route and
 * status and their latency (a histogram), invocations and trigger events by application and outcome, values read at
 * scrape time (requests waiting for a result, ...), and the JVM's, the process' and the build's. Every series has
 * {@code frontend}; an application's have {@code app} (its name) and {@code account} (its owner), as on the host
 * agents. Application names come only from applications the cluster state holds (a request naming no application
 * is not counted under it), so the series are bounded by what was deployed.
 */
public final class FrontendMetrics {
  /** Seconds: from a cached answer to a synchronous request waiting up to its longest timeout. */
  static final double[] REQUEST_BUCKETS = {
    .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300
  };

  /** The HELP of each value read at scrape time ({@link #gauge}): declared here, once, so none goes without. */
  static final Map<String, String> HELP = Map.ofEntries(
      Map.entry("sand_frontend_requests_waiting", "synchronous requests waiting for their result"),
      Map.entry(
          "sand_frontend_ready",
          "1 while this frontend takes invocations (GET /readyz), 0 while it declines them"),
      Map.entry(
          "sand_frontend_results_refused_total",
          "results refused: not for an execution of this frontend, or a bad tag"),
      Map.entry(
          "sand_frontend_execution_writes_pending",
          "execution records waiting to be written to Cassandra"),
      Map.entry(
          "sand_frontend_execution_writes_retry_bytes",
          "bytes of execution records waiting for a retry (Cassandra was behind)"),
      Map.entry(
          "sand_frontend_execution_writes_dropped_total",
          "execution records given up beyond the retry bound"),
      Map.entry(
          "sand_frontend_body_bytes_held", "request body bytes held in memory (the body budget)"),
      Map.entry(
          "sand_frontend_bodies_refused_total",
          "requests refused because the body budget was used up"),
      Map.entry(
          "sand_frontend_deliveries_in_flight",
          "asynchronous deliveries of triggers not finished yet"),
      Map.entry(
          "sand_frontend_gate_requests_total",
          "requests handed to host agents through their gates"),
      Map.entry(
          "sand_frontend_gate_unacknowledged",
          "gate requests a host agent has not acknowledged yet"),
      Map.entry(
          "sand_frontend_password_derivations_total",
          "password hashes derived (KNIX logins and sign-ups)"),
      Map.entry(
          "sand_frontend_throttled_total", "sign-ups and logins refused by their rate limits"),
      Map.entry(
          "sand_frontend_knix_result_waits", "KNIX clients waiting for an execution's result"));

  private final PrometheusRegistry registry;
  private final Labels frontend;
  private final Function<String, String> accountOf;
  private final Counter requests;
  private final Histogram requestSeconds;
  private final Counter invocations;
  private final Counter triggerEvents;
  private final Map<List<String>, Supplier<Number>> triggerLags = new ConcurrentHashMap<>();

  /** A frontend whose application labels have no account (tests). */
  public FrontendMetrics(String frontendId) {
    this(new PrometheusRegistry(), frontendId, name -> "");
  }

  /**
   * @param accountOf an application's account from its name ("" when not known): the app directory's cache, so
   *                  a label costs no cluster-state read
   */
  public FrontendMetrics(
      PrometheusRegistry registry, String frontendId, Function<String, String> accountOf) {
    this.registry = registry;
    this.frontend = labels(frontendId);
    this.accountOf = accountOf;
    ProcessMetrics.register(registry, "frontend", frontend);
    requests = Counter.builder()
        .name("sand_frontend_requests_total")
        .help("HTTP requests by method, route (the pattern matched, not the path) and status")
        .labelNames("method", "route", "status")
        .constLabels(frontend)
        .register(registry);
    requestSeconds = Histogram.builder()
        .name("sand_frontend_request_duration_seconds")
        .help(
            "time to answer an HTTP request, by method and route (a synchronous invocation waits for its result)")
        .unit(Unit.SECONDS)
        .labelNames("method", "route")
        .constLabels(frontend)
        .classicOnly()
        .classicUpperBounds(REQUEST_BUCKETS)
        .register(registry);
    invocations = Counter.builder()
        .name("sand_frontend_invocations_total")
        .help(
            "application invocations by outcome (ok, error, timeout, async, rejected, replayed, unauthorized)")
        .labelNames("app", "account", "outcome")
        .constLabels(frontend)
        .register(registry);
    triggerEvents = Counter.builder()
        .name("sand_frontend_trigger_events_total")
        .help("events of triggers and asynchronous deliveries, by trigger and outcome")
        .labelNames("app", "account", "trigger", "outcome")
        .constLabels(frontend)
        .register(registry);
    GaugeWithCallback.builder()
        .name("sand_frontend_trigger_lag")
        .help("records of a queue trigger's topic not yet consumed by this frontend")
        .labelNames("app", "account", "trigger")
        .constLabels(frontend)
        .callback(cb -> triggerLags.forEach((k, v) ->
            cb.call(v.get().doubleValue(), k.get(0), accountOf.apply(k.get(0)), k.get(1))))
        .register(registry);
  }

  /** The label every series of frontend {@code frontendId} has. */
  public static Labels labels(String frontendId) {
    return Labels.of("frontend", frontendId);
  }

  void request(String method, String route, int status, double seconds) {
    requests.labelValues(method, route, Integer.toString(status)).inc();
    requestSeconds.labelValues(method, route).observe(seconds);
  }

  /** One invocation of an application ended with {@code outcome} (ok, error, timeout, rejected, async). */
  public void invocation(String appName, String outcome) {
    invocations.labelValues(appName, accountOf.apply(appName), outcome).inc();
  }

  /**
   * A trigger's (or asynchronous delivery's) event: {@code outcome} is fired, retried, succeeded, failed,
   * dead_lettered, duplicate, refused, skipped or missed.
   */
  public void trigger(String appName, String source, String outcome) {
    int hash = source.indexOf('#');
    String trigger = hash < 0 ? source : source.substring(0, hash);
    triggerEvents
        .labelValues(appName, accountOf.apply(appName), trigger, outcome)
        .inc();
  }

  /** A queue trigger's lag, read at scrape time; replaced when set again. */
  public void triggerLag(String appName, String trigger, Supplier<Number> lag) {
    triggerLags.put(List.of(appName, trigger), lag);
  }

  public void removeTriggerLag(String appName, String trigger) {
    triggerLags.remove(List.of(appName, trigger));
  }

  /**
   * A value read at scrape time: a counter when its name ends in _total, else a gauge; its HELP is {@link #HELP}'s.
   */
  void gauge(String name, Supplier<Number> value) {
    String help = HELP.get(name);
    if (help == null) {
      throw new IllegalArgumentException(name + " has no HELP: declare it in FrontendMetrics.HELP");
    }
    if (name.endsWith("_total")) {
      CounterWithCallback.builder()
          .name(name)
          .help(help)
          .constLabels(frontend)
          .callback(cb -> cb.call(value.get().doubleValue()))
          .register(registry);
    } else {
      GaugeWithCallback.builder()
          .name(name)
          .help(help)
          .constLabels(frontend)
          .callback(cb -> cb.call(value.get().doubleValue()))
          .register(registry);
    }
  }

  /** The scrape. */
  public String render() {
    return Exposition.text(registry);
  }
}
