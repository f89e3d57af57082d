package sand.frontend;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The frontend's Prometheus metrics (text format 0.0.4): requests by route and status, their durations,
 * invocations by application and outcome, and gauges read at scrape time (requests waiting for a result).
 */
public final class FrontendMetrics {
  private final String frontendId;
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private final Map<String, DoubleAdder> sums = new ConcurrentHashMap<>();
  private final Map<String, Supplier<Number>> gauges = new ConcurrentHashMap<>();

  public FrontendMetrics(String frontendId) {
    this.frontendId = frontendId;
  }

  static String esc(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  void request(String method, String route, int status, double seconds) {
    String l = "{frontend=\"" + esc(frontendId) + "\",method=\"" + method + "\",route=\""
        + esc(route) + "\"";
    counters
        .computeIfAbsent(
            "sand_frontend_requests_total" + l + ",status=\"" + status + "\"}",
            k -> new LongAdder())
        .increment();
    sums.computeIfAbsent(
            "sand_frontend_request_duration_seconds_sum" + l + "}", k -> new DoubleAdder())
        .add(seconds);
    counters
        .computeIfAbsent(
            "sand_frontend_request_duration_seconds_count" + l + "}", k -> new LongAdder())
        .increment();
  }

  /** One invocation of an application ended with {@code outcome} (ok, error, timeout, rejected, async). */
  public void invocation(String appName, String outcome) {
    counters
        .computeIfAbsent(
            "sand_frontend_invocations_total{frontend=\"" + esc(frontendId) + "\",app=\""
                + esc(appName) + "\",outcome=\"" + outcome + "\"}",
            k -> new LongAdder())
        .increment();
  }

  /**
   * A trigger's (or asynchronous delivery's) event: {@code outcome} is fired, retried, succeeded, failed,
   * dead_lettered, duplicate, refused, skipped or missed.
   */
  public void trigger(String appName, String source, String outcome) {
    int hash = source.indexOf('#');
    String trigger = hash < 0 ? source : source.substring(0, hash);
    counters
        .computeIfAbsent(
            "sand_frontend_trigger_events_total{frontend=\"" + esc(frontendId) + "\",app=\""
                + esc(appName) + "\",trigger=\"" + esc(trigger) + "\",outcome=\"" + outcome + "\"}",
            k -> new LongAdder())
        .increment();
  }

  /** A gauge with labels, e.g. a queue trigger's lag; replaced when set again. */
  public void labelledGauge(String nameWithLabels, Supplier<Number> value) {
    gauges.put(nameWithLabels, value);
  }

  public void removeGauge(String nameWithLabels) {
    gauges.remove(nameWithLabels);
  }

  void gauge(String name, Supplier<Number> value) {
    gauges.put(name, value);
  }

  /** The scrape. */
  public String render() {
    StringBuilder sb = new StringBuilder();
    Map<String, String> help = Map.of(
        "sand_frontend_requests_total", "counter HTTP requests by route and status",
        "sand_frontend_request_duration_seconds_sum", "counter seconds spent answering, by route",
        "sand_frontend_request_duration_seconds_count", "counter requests timed, by route",
        "sand_frontend_invocations_total", "counter application invocations by outcome");
    Map<String, TreeMap<String, String>> byName = new TreeMap<>();
    counters.forEach((k, v) -> byName
        .computeIfAbsent(k.substring(0, k.indexOf('{')), n -> new TreeMap<>())
        .put(k, Long.toString(v.sum())));
    sums.forEach((k, v) -> byName
        .computeIfAbsent(k.substring(0, k.indexOf('{')), n -> new TreeMap<>())
        .put(k, Double.toString(v.sum())));
    byName.forEach((name, samples) -> {
      String h = help.getOrDefault(name, "counter " + name);
      sb.append("# HELP ")
          .append(name)
          .append(' ')
          .append(h.substring(h.indexOf(' ') + 1))
          .append('\n');
      sb.append("# TYPE ").append(name).append(' ').append(h, 0, h.indexOf(' ')).append('\n');
      samples.forEach((k, v) -> sb.append(k).append(' ').append(v).append('\n'));
    });
    String typed = "";
    for (var g : new TreeMap<>(gauges).entrySet()) {
      String name = g.getKey();
      int brace = name.indexOf('{');
      String base = brace < 0 ? name : name.substring(0, brace);
      String labels = brace < 0 ? "" : "," + name.substring(brace + 1, name.length() - 1);
      if (!base.equals(typed)) {
        sb.append("# TYPE ").append(base).append(" gauge\n");
        typed = base;
      }
      sb.append(base)
          .append("{frontend=\"")
          .append(esc(frontendId))
          .append('"')
          .append(labels)
          .append("} ")
          .append(g.getValue().get())
          .append('\n');
    }
    return sb.toString();
  }
}
