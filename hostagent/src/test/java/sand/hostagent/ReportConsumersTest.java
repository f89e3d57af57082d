package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;
import sand.cluster.InMemoryClusterStore;
import sand.contracts.ConditionFlag;
import sand.hostagent.bridge.InstanceReport;

/** Issue 26: what the metrics and the execution logs take from a report, which a grain writes itself. */
class ReportConsumersTest {

  private static InstanceReport report(
      String grain, String status, String execution, String... lines) {
    ObjectNode r = ConditionFlag.JSON.createObjectNode();
    r.put("type", "finished")
        .put("app", "shop")
        .put("grain", grain)
        .put("execution_id", execution)
        .put("event_id", "e1")
        .put("frontend", "fe1")
        .put("status", status);
    r.putArray("outputs");
    r.putArray("data");
    var logs = r.putArray("logs");
    for (String l : lines) {
      logs.addArray().add(1).add("INFO").add(l);
    }
    r.put("start_ns", 1L).put("end_ns", 2L);
    return InstanceReport.parse(r);
  }

  @Test
  void metricLabelsAreTheDeployedGrainsAndTheKnownStatusesOnly() {
    Metrics m = new Metrics(
        new PrometheusRegistry(),
        "h1",
        (app, grain) -> app.equals("shop") && Set.of("resize", "store").contains(grain));
    for (int i = 0; i < 2000; i++) {
      m.accept(report("g-" + i, "s-" + i, "x"));
      m.accept(report("resize", i % 2 == 0 ? "ok" : "s-" + i, "x"));
    }
    List<String> series =
        m.render().lines().filter(l -> l.startsWith("sand_instances_total{")).toList();
    assertEquals(
        List.of(
            "sand_instances_total{account=\"\",app=\"shop\",grain=\"other\",host=\"h1\",status=\"other\"} 2000.0",
            "sand_instances_total{account=\"\",app=\"shop\",grain=\"resize\",host=\"h1\",status=\"ok\"} 1000.0",
            "sand_instances_total{account=\"\",app=\"shop\",grain=\"resize\",host=\"h1\",status=\"other\"} 1000.0"),
        series);
    assertTrue(
        m.render().lines().filter(l -> l.startsWith("sand_instance")).count() < 50,
        "4,000 reports with made-up labels make a handful of series (two histograms of 19 lines)");
  }

  @Test
  void logLinesAreStoredOnlyUnderAnExecutionTheAgentKnowsForTheReportsEvent() throws Exception {
    InMemoryClusterStore store = new InMemoryClusterStore();
    try (ExecutionLogs logs = new ExecutionLogs(store, Duration.ofHours(1))) {
      logs.accept(report("resize", "ok", "victims-execution", "injected")); // parse: not bound
      logs.accept(report("resize", "ok", "own-execution", "mine").withExecutionBound(true));
      assertTrue(logs.drain(5000));
      assertEquals(List.of(), store.logs("victims-execution"));
      assertEquals(
          List.of("mine"),
          store.logs("own-execution").stream()
              .map(HostAgentTables.LogLine::text)
              .toList());
    }
  }

  @Test
  void aReportKeepsAtMostMaxLinesAndSaysSo() throws Exception {
    InMemoryClusterStore store = new InMemoryClusterStore();
    String[] many = new String[ExecutionLogs.MAX_LINES + 500];
    Arrays.fill(many, "line");
    try (ExecutionLogs logs = new ExecutionLogs(store, Duration.ofHours(1))) {
      logs.accept(report("resize", "ok", "x1", many).withExecutionBound(true));
      assertTrue(logs.drain(5000));
      List<HostAgentTables.LogLine> kept = store.logs("x1");
      assertEquals(ExecutionLogs.MAX_LINES + 1, kept.size());
      assertTrue(kept.get(kept.size() - 1).text().contains("500 more log lines"));
      assertFalse(kept.get(0).text().contains("more"));
    }
  }
}
