package sand.hostagent.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostLoads.HostLoad;
import sand.cluster.HostSchedules;
import sand.cluster.InMemoryClusterStore;
import sand.contracts.ApplicationLimits;
import sand.contracts.ElasticPlacement;
import sand.contracts.LoadReport;
import sand.contracts.TopicNames;

class SchedulerTest {
  private static final String ELASTIC = "{\"max_hosts\": 3, \"scale_in_after_s\": 30}";
  private final InMemoryClusterStore store = new InMemoryClusterStore();
  private final Clock clock = Clock.fixed(Instant.parse("2026-11-28T00:00:00Z"), ZoneOffset.UTC);
  private final AtomicReference<Set<String>> live = new AtomicReference<>(Set.of("h1", "h2", "h3"));

  private Scheduler on(String host, MockProducer<String, byte[]> producer) {
    return new Scheduler(
        host,
        store,
        live::get,
        ApplicationLimits.defaults(),
        new SchedulerSettings(Duration.ofSeconds(2), 4, 90, Duration.ZERO),
        producer,
        clock);
  }

  private static MockProducer<String, byte[]> producer() {
    return new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer());
  }

  private void app(String id, String settings, List<String> hosts) {
    store.putApplication(
        new ApplicationRecord(
            id, id, "acct", "{}", "", settings, 1, HostAgentTables.DESIRED_DEPLOYED, hosts),
        Map.of());
  }

  private void queued(String host, Map<String, Integer> byApp) {
    Map<String, LoadReport.AppLoad> apps = new java.util.HashMap<>();
    byApp.forEach((a, n) -> apps.put(a, new LoadReport.AppLoad(n, 1, 7, false)));
    store
        .hostLoads()
        .report(new HostLoad(
            host, new LoadReport(10, 4096, 2048, 1, 0, apps).toJson(), clock.instant()));
  }

  @Test
  void onlyTheLowestLiveHostPlacesAndItsDecisionIsStoredWithItsReasonAndAnnounced()
      throws Exception {
    app("busy", ELASTIC, List.of("h2"));
    app("static", "{}", List.of());
    queued("h2", Map.of("busy", 12, "static", 50));
    MockProducer<String, byte[]> p1 = producer();
    MockProducer<String, byte[]> p2 = producer();
    Scheduler s1 = on("h1", p1);
    Scheduler s2 = on("h2", p2);
    for (int i = 0; i < 2; i++) {
      s1.look();
      s2.look();
    }
    assertTrue(s1.elected());
    assertFalse(s2.elected());
    assertEquals(List.of("h2", "h1"), store.application("busy").orElseThrow().hosts());
    assertEquals(
        List.of(), store.application("static").orElseThrow().hosts(), "no max_hosts: not placed");
    var record = new ObjectMapper()
        .readTree(store
            .appRecord("busy", ElasticPlacement.RECORD_KIND, ElasticPlacement.RECORD_ID)
            .orElseThrow()
            .value());
    assertEquals("h1", record.path("by").asText());
    assertTrue(record.path("reason").asText().contains("12 events queued"), record.toString());
    assertEquals(1, p1.history().size());
    assertEquals(TopicNames.CONTROL, p1.history().get(0).topic());
    assertTrue(new String(p1.history().get(0).value()).contains("\"deploy\""));
    assertTrue(p2.history().isEmpty(), "h2 is not the scheduler");
    assertEquals(Map.of("out", 1L), s1.scaleEvents());
  }

  @Test
  void whenTheSchedulersHostDiesTheNextLiveHostTakesOver() {
    app("a", ELASTIC, List.of("h1", "h3"));
    Scheduler s2 = on("h2", producer());
    s2.look();
    assertFalse(s2.elected());
    live.set(Set.of("h2", "h3")); // h1's heartbeat aged out
    s2.look();
    assertTrue(s2.elected());
    assertEquals(
        List.of("h3"), store.application("a").orElseThrow().hosts(), "the dead h1 leaves it");
  }

  @Test
  void undeployedApplicationsAndDrainingHostsAreLeftAlone() {
    store.putApplication(
        new ApplicationRecord(
            "gone",
            "gone",
            "acct",
            "{}",
            "",
            ELASTIC,
            1,
            HostAgentTables.DESIRED_UNDEPLOYED,
            List.of("h9")),
        Map.of());
    app("a", "{\"max_hosts\": 3, \"min_hosts\": 2}", List.of("h2", "h3"));
    store
        .hostSchedules()
        .set(new HostSchedules.HostSchedule("h3", HostSchedules.DRAINING, "test", clock.instant()));
    on("h1", producer()).look();
    assertEquals(List.of("h9"), store.application("gone").orElseThrow().hosts());
    assertEquals(List.of("h2", "h1"), store.application("a").orElseThrow().hosts());
  }
}
