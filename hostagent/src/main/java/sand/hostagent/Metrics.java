package sand.hostagent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import sand.datalayer.LocalDataLayer;
import sand.hostagent.bridge.HostAgentQueueProcessor;
import sand.hostagent.bridge.InstanceReport;
import sand.hostagent.sandbox.SandboxManager;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

/**
 * The host agent's Prometheus metrics (text format 0.0.4 on {@code GET /metrics}): events in and out per
 * grain, local vs global deliveries, instance durations, plus gauges read when scraped (queue lengths,
 * sandboxes, pending backups).
 *
 * <p>Label values never come from a report as a grain wrote it (issue 26): a grain label is a grain of the
 * application's deployed workflow, a status one of {@link InstanceReport#STATUSES}, anything else is counted under
 * {@value #OTHER}; the application is the bus's stamp. So the series are bounded by what operators deployed.
 */
final class Metrics implements Consumer<InstanceReport>, AutoCloseable {
  /** The label value of a grain or status that is not one of the deployed workflow's or the known ones. */
  static final String OTHER = "other";

  private final String hostId;
  private final BiPredicate<String, String> knownGrain;
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private final Map<String, DoubleAdder> sums = new ConcurrentHashMap<>();
  private final List<Gauge> gauges = new ArrayList<>();
  private HttpServer server;

  /** A value read at scrape time, one sample per label set. */
  record Gauge(String name, String help, Supplier<Map<String, Number>> samples) {}

  /** @param knownGrain whether (application, grain) is a grain of that application's deployed workflow */
  Metrics(String hostId, BiPredicate<String, String> knownGrain) {
    this.hostId = hostId;
    this.knownGrain = knownGrain;
  }

  Metrics gauge(String name, String help, Supplier<Map<String, Number>> samples) {
    gauges.add(new Gauge(name, help, samples));
    return this;
  }

  /** The gauges of a host: its local queues, sandboxes, pending backups and each application's share. */
  Metrics hostGauges(
      LocalMessageBus bus,
      LocalDataLayer data,
      SandboxManager sandboxes,
      HostAgentQueueProcessor processor) {
    return gauge(
            "sand_queue_length",
            "messages waiting in a local queue",
            () -> queues(bus, QueueStats::length))
        .gauge(
            "sand_queue_published_total",
            "messages published to a local queue",
            () -> queues(bus, QueueStats::published))
        .gauge(
            "sand_sandboxes",
            "sandboxes on this host",
            () -> Map.of("", sandboxes.list().size()))
        .gauge(
            "sand_data_backups_pending",
            "data layer writes not yet in Cassandra",
            () -> Map.of("", data.pendingWrites()))
        .gauge(
            "sand_bus_app_bytes",
            "bytes an application has waiting in the local bus (payloads plus 64 per message)",
            () -> perApp(bus.applicationUsage(), u -> u.bytes()))
        .gauge(
            "sand_bus_app_queues",
            "local queues of an application",
            () -> perApp(bus.applicationUsage(), u -> u.queues()))
        .gauge(
            "sand_data_app_bytes",
            "bytes an application holds in the local data layer",
            () -> perApp(data.usage(), u -> u.bytes()))
        .gauge(
            "sand_data_app_pending_bytes",
            "of those, bytes waiting for Cassandra",
            () -> perApp(data.usage(), u -> u.pendingBytes()))
        .gauge(
            "sand_data_app_evicted_total",
            "items of an application evicted from memory (already in Cassandra)",
            () -> perApp(data.usage(), u -> u.evictedItems()))
        .gauge(
            "sand_kafka_backlog_bytes",
            "reports waiting for Kafka",
            () -> Map.of("", processor.pendingBytes()))
        .gauge(
            "sand_outputs_refused_total",
            "grain outputs refused: forged execution or unknown grain",
            () -> Map.of("", processor.refusedOutputs()))
        .gauge(
            "sand_reports_refused_total",
            "LQ_HA reports (or parts of them) refused, by application and reason",
            () -> refusals(processor))
        .gauge(
            "sand_events_in_flight",
            "events delivered into a local queue of this host and not finished yet",
            () -> perApp(processor.inFlightByApplication(), n -> n))
        .gauge(
            "sand_events_in_flight_bytes",
            "bytes of those events (bridge.in.flight.app.max.bytes bounds them)",
            () -> perApp(processor.inFlightBytesByApplication(), n -> n));
  }

  private static Map<String, Number> refusals(HostAgentQueueProcessor processor) {
    Map<String, Number> out = new LinkedHashMap<>();
    processor
        .refusedReports()
        .forEach((k, v) -> out.put("app=\"" + esc(k.get(0)) + "\",reason=\"" + k.get(1) + "\"", v));
    return out;
  }

  private static <T extends Number> Map<String, Number> queues(
      LocalMessageBus bus, Function<QueueStats, T> f) {
    Map<String, Number> out = new LinkedHashMap<>();
    for (QueueStats s : bus.queueStats()) {
      out.put("queue=\"" + s.queue().replace("\"", "") + "\"", f.apply(s));
    }
    return out;
  }

  private static <U> Map<String, Number> perApp(Map<String, U> usage, Function<U, Number> f) {
    Map<String, Number> out = new LinkedHashMap<>();
    usage.forEach((app, u) -> out.put("app=\"" + app + "\"", f.apply(u)));
    return out;
  }

  private String labels(String app, String grain) {
    return "{host=\"" + esc(hostId) + "\",app=\"" + esc(app) + "\",grain=\"" + esc(grain) + "\"}";
  }

  private static String esc(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  void inc(String name, String labels, long by) {
    counters.computeIfAbsent(name + labels, k -> new LongAdder()).add(by);
  }

  @Override
  public void accept(InstanceReport r) {
    String l = labels(r.app(), knownGrain.test(r.app(), r.grain()) ? r.grain() : OTHER);
    if (r.finished()) {
      String status = InstanceReport.STATUSES.contains(r.status()) ? r.status() : OTHER;
      inc("sand_instances_total", l.replace("}", ",status=\"" + status + "\"}"), 1);
      JsonNode j = r.json();
      double seconds =
          Math.max(0, j.path("end_ns").asLong() - j.path("start_ns").asLong()) / 1e9;
      sums.computeIfAbsent("sand_instance_duration_seconds_sum" + l, k -> new DoubleAdder())
          .add(seconds);
      inc("sand_instance_duration_seconds_count", l, 1);
    }
    for (ObjectNode o : r.outputs()) {
      String to = o.path("grain").asText();
      String kind = to.equals("end") ? "result" : o.path("local").asBoolean() ? "local" : "global";
      inc("sand_events_out_total", l.replace("}", ",delivery=\"" + kind + "\"}"), 1);
    }
  }

  String render() {
    StringBuilder sb = new StringBuilder();
    Map<String, String> help = Map.of(
        "sand_events_out_total",
            "events grain instances produced, by delivery: local queue, Kafka, workflow result",
        "sand_instances_total", "grain instances that finished, by status",
        "sand_instance_duration_seconds_sum", "total run time of grain instances",
        "sand_instance_duration_seconds_count", "grain instances timed");
    Map<String, Number> all = new TreeMap<>();
    counters.forEach((k, v) -> all.put(k, v.sum()));
    sums.forEach((k, v) -> all.put(k, v.sum()));
    String last = "";
    for (Map.Entry<String, Number> e : all.entrySet()) {
      String name = e.getKey().substring(0, e.getKey().indexOf('{'));
      if (!name.equals(last)) {
        sb.append("# HELP ")
            .append(name)
            .append(' ')
            .append(help.getOrDefault(name, name))
            .append('\n');
        sb.append("# TYPE ")
            .append(name)
            .append(name.endsWith("_sum") || name.endsWith("_count") ? " untyped\n" : " counter\n");
        last = name;
      }
      sb.append(e.getKey()).append(' ').append(e.getValue()).append('\n');
    }
    for (Gauge g : gauges) {
      sb.append("# HELP ").append(g.name()).append(' ').append(g.help()).append('\n');
      sb.append("# TYPE ").append(g.name()).append(" gauge\n");
      for (Map.Entry<String, Number> s : new TreeMap<>(g.samples().get()).entrySet()) {
        String lbl = s.getKey().isEmpty()
            ? "{host=\"" + esc(hostId) + "\"}"
            : "{host=\"" + esc(hostId) + "\"," + s.getKey() + "}";
        sb.append(g.name()).append(lbl).append(' ').append(s.getValue()).append('\n');
      }
    }
    return sb.toString();
  }

  /** Serve {@code GET /metrics} on host:port (0 = a free port). */
  Metrics serve(String host, int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress(host, port), 16);
    server.createContext("/metrics", ex -> {
      byte[] body = render().getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
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
