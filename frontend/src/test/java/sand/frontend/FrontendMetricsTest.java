package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The frontend's exposition: Prometheus' conventions (types, HELP, histograms) and the label scheme. */
class FrontendMetricsTest {
  private final FrontendMetrics m = new FrontendMetrics(
      new PrometheusRegistry(), "fe-1", name -> name.equals("shop") ? "alice@example.com" : "");

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
  void typesHelpAndTheRequestHistogram() {
    m.request("POST", "/app/{app}", 200, 0.004);
    m.invocation("shop", "ok");
    m.trigger("shop", "every-minute#2026-11-27T08:00", "fired");
    m.triggerLag("shop", "orders", () -> 7);
    m.gauge("sand_frontend_requests_waiting", () -> 2);
    m.gauge("sand_frontend_bodies_refused_total", () -> 3);
    String text = m.render();
    Set<String> help = new HashSet<>();
    Map<String, String> types = types(text, help);
    assertEquals(types.keySet(), help, "HELP on every metric");
    types.forEach((name, type) ->
        assertEquals(type.equals("counter"), name.endsWith("_total"), name + " is a " + type));
    assertEquals("histogram", types.get("sand_frontend_request_duration_seconds"));
    assertEquals("counter", types.get("sand_frontend_bodies_refused_total"));
    assertTrue(
        text.contains(
            "sand_frontend_request_duration_seconds_bucket{frontend=\"fe-1\",method=\"POST\","
                + "route=\"/app/{app}\",le=\"0.005\"} 1"),
        text);
    assertTrue(
        text.contains("sand_frontend_invocations_total{account=\"alice@example.com\",app=\"shop\","
            + "frontend=\"fe-1\",outcome=\"ok\"} 1.0"),
        text);
    assertTrue(
        text.contains(
            "sand_frontend_trigger_events_total{account=\"alice@example.com\",app=\"shop\","
                + "frontend=\"fe-1\",outcome=\"fired\",trigger=\"every-minute\"} 1.0"),
        text);
    assertTrue(
        text.contains("sand_frontend_trigger_lag{account=\"alice@example.com\",app=\"shop\","
            + "frontend=\"fe-1\",trigger=\"orders\"} 7.0"),
        text);
    assertTrue(text.contains("sand_build_info{component=\"frontend\",frontend=\"fe-1\""), text);
    assertTrue(types.containsKey("jvm_threads_current"), "the JVM's metrics");
  }

  @Test
  void aValueWithoutHelpIsRefused() {
    var e = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> m.gauge("sand_frontend_new_thing", () -> 1));
    assertTrue(e.getMessage().contains("FrontendMetrics.HELP"), e.getMessage());
  }

  @Test
  void aRemovedTriggerLagIsGone() {
    m.triggerLag("shop", "orders", () -> 7);
    m.removeTriggerLag("shop", "orders");
    assertFalse(m.render().contains("sand_frontend_trigger_lag{"));
  }

  @Test
  void anUnknownApplicationHasNoAccount() {
    m.invocation("nobody", "rejected");
    assertTrue(m.render().contains("sand_frontend_invocations_total{account=\"\",app=\"nobody\""));
  }
}
