package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.contracts.ConditionFlag;
import sand.hostagent.bridge.InstanceReport;

/** The host agent's exposition: Prometheus' conventions (types, HELP, units) and the label scheme. */
class MetricsTest {

  private static InstanceReport report(String app, String grain, long sentNs, long startNs) {
    ObjectNode r = ConditionFlag.JSON.createObjectNode();
    r.put("type", "finished")
        .put("app", app)
        .put("grain", grain)
        .put("execution_id", "x1")
        .put("event_id", "e1")
        .put("frontend", "fe1")
        .put("status", "ok")
        .put("event_sent_ns", sentNs)
        .put("start_ns", startNs)
        .put("end_ns", startNs + 30_000_000L);
    r.putArray("outputs").addObject().put("id", "o1").put("grain", "end");
    r.putArray("data");
    r.putArray("logs");
    return InstanceReport.parse(r);
  }

  private static Metrics metrics() {
    Metrics m = new Metrics(new PrometheusRegistry(), "h1", (app, grain) -> grain.equals("resize"));
    m.counter("sand_outputs_refused_total", "outputs refused", () -> 3)
        .gauge("sand_sandboxes", "sandboxes", () -> 1)
        .perApp("sand_bus_app_bytes", "bus bytes", () -> Map.of("a1b2", 10L), Long::doubleValue);
    return m;
  }

  /** name -> TYPE, and each family's HELP, parsed from the text format. */
  private static Map<String, String> types(String text, Set<String> withHelp) {
    Map<String, String> types = new TreeMap<>();
    for (String l : text.lines().toList()) {
      String[] p = l.split(" ", 4);
      if (l.startsWith("# TYPE ")) {
        types.put(p[2], p[3]);
      } else if (l.startsWith("# HELP ") && p.length == 4 && !p[3].isBlank()) {
        withHelp.add(p[2]);
      }
    }
    return types;
  }

  @Test
  void everyFamilyHasHelpAndCountersEndInTotal() {
    Metrics m = metrics();
    m.deployed(
        new ApplicationRecord("a1b2", "shop", "alice", "{}", "", "{}", 1, "deployed", List.of()),
        false,
        0.2);
    m.accept(report("a1b2", "resize", 1_000_000_000L, 1_005_000_000L));
    Set<String> help = new HashSet<>();
    Map<String, String> types = types(m.render(), help);
    assertEquals(types.keySet(), help, "HELP on every metric");
    types.forEach((name, type) -> {
      if (type.equals("counter")) {
        assertTrue(name.endsWith("_total"), name + " is a counter: its name ends in _total");
      } else {
        assertTrue(!name.endsWith("_total"), name + " ends in _total but is a " + type);
      }
    });
    assertEquals("histogram", types.get("sand_instance_duration_seconds"));
    assertEquals("histogram", types.get("sand_hop_duration_seconds"));
    assertEquals("histogram", types.get("sand_deploy_duration_seconds"));
    assertEquals("counter", types.get("sand_outputs_refused_total"));
    assertEquals("gauge", types.get("sand_build_info"));
    assertTrue(types.containsKey("jvm_memory_used_bytes"), "the JVM's metrics");
    assertTrue(types.containsKey("process_cpu_seconds_total"), "the process' metrics");
  }

  @Test
  void applicationsAreLabelledByNameAndAccountOnceDeployed() {
    Metrics m = metrics();
    m.deployed(
        new ApplicationRecord(
            "a1b2", "shop", "alice@example.com", "{}", "", "{}", 1, "deployed", List.of()),
        true,
        1.5);
    m.accept(report("a1b2", "resize", 1_000_000_000L, 1_005_000_000L));
    String text = m.render();
    assertTrue(
        text.contains(
            "sand_instances_total{account=\"alice@example.com\",app=\"shop\",grain=\"resize\","
                + "host=\"h1\",status=\"ok\"} 1.0"),
        text);
    assertTrue(
        text.contains("sand_hop_duration_seconds_bucket{account=\"alice@example.com\",app=\"shop\","
            + "grain=\"resize\",host=\"h1\",le=\"0.005\"} 1"),
        "5 ms from sent to start: " + text);
    assertTrue(
        text.contains(
            "sand_deploy_duration_seconds_count{account=\"alice@example.com\",app=\"shop\","
                + "host=\"h1\",outcome=\"ok\"} 1"),
        text);
    assertTrue(
        text.contains(
            "sand_bus_app_bytes{account=\"alice@example.com\",app=\"shop\",host=\"h1\"} 10.0"),
        text);
    assertTrue(
        text.contains(
            "sand_events_out_total{account=\"alice@example.com\",app=\"shop\",delivery=\"result\","
                + "grain=\"resize\",host=\"h1\"} 1.0"),
        text);
  }

  @Test
  void aHopIsOnlyMeasuredWhenTheReportSaysWhenItsEventWasSent() {
    Metrics m = metrics();
    m.accept(report("a1b2", "resize", 0, 1_005_000_000L)); // an older grain worker
    m.accept(report("a1b2", "resize", 2_000_000_000L, 1_005_000_000L)); // a clock behind
    assertTrue(m.render().lines().noneMatch(l -> l.startsWith("sand_hop_duration_seconds_count")));
  }

  @Test
  void madeUpGrainsAreCountedAsOther() {
    Metrics m = metrics();
    Map<String, Integer> seen = new HashMap<>();
    for (int i = 0; i < 500; i++) {
      m.accept(report("a1b2", "g" + i, 1, 2));
    }
    m.render()
        .lines()
        .filter(l -> l.startsWith("sand_instances_total{"))
        .forEach(l -> seen.merge(l, 1, Integer::sum));
    assertEquals(1, seen.size(), seen.toString());
    assertTrue(seen.keySet().iterator().next().contains("grain=\"other\""));
  }
}
