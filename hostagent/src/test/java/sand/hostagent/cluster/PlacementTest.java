package sand.hostagent.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import sand.contracts.ElasticPlacement;
import sand.contracts.LoadReport;
import sand.contracts.LoadReport.AppLoad;

class PlacementTest {
  private static final SchedulerSettings SETTINGS =
      new SchedulerSettings(Duration.ofSeconds(2), 4, 90, Duration.ofSeconds(5));
  private static final ElasticPlacement ONE_TO_THREE =
      new ElasticPlacement(1, 3, Duration.ofSeconds(30));
  private static final Set<String> HOSTS = Set.of("h1", "h2", "h3");
  private static final long SANDBOX_MB = 512;
  private final Instant t0 = Instant.parse("2026-11-28T00:00:00Z");
  private final Placement.Memory memory = new Placement.Memory();
  private final Map<String, LoadReport> loads = new HashMap<>();

  private void report(String host, double cpu, AppLoad app) {
    loads.put(
        host, new LoadReport(cpu, 4096, 2048, 1, 0, app == null ? Map.of() : Map.of("a", app)));
  }

  private Placement.Cluster cluster() {
    return new Placement.Cluster(HOSTS, HOSTS, Set.of(), Map.copyOf(loads));
  }

  private Optional<Placement.Decision> look(
      ElasticPlacement want, List<String> placed, Placement.Cluster c, int atSecond) {
    return Placement.decide(
        "a", want, SANDBOX_MB, placed, c, memory, SETTINGS, t0.plusSeconds(atSecond));
  }

  @Test
  void queueingAtTwoLooksInARowAddsTheLeastBusyHost() {
    report("h1", 80, new AppLoad(9, 1, 100, false));
    report("h2", 60, null);
    report("h3", 20, null);
    assertEquals(
        Optional.empty(),
        look(ONE_TO_THREE, List.of("h1"), cluster(), 0),
        "one look is not enough");
    Placement.Decision d = look(ONE_TO_THREE, List.of("h1"), cluster(), 2).orElseThrow();
    assertEquals(List.of("h1", "h3"), d.hosts(), "h3 has the lowest CPU");
    assertEquals("out", d.direction());
    assertTrue(d.reason().contains("9 events queued on 1 host"), d.reason());
  }

  @Test
  void aScaleOutWaitsForTheLastChangeToSettleAndStopsAtMaxHosts() {
    report("h1", 50, new AppLoad(20, 1, 100, false));
    report("h2", 50, null);
    report("h3", 10, new AppLoad(20, 1, 100, false));
    look(ONE_TO_THREE, List.of("h1"), cluster(), 0);
    assertEquals(
        List.of("h1", "h3"),
        look(ONE_TO_THREE, List.of("h1"), cluster(), 2).orElseThrow().hosts());
    look(ONE_TO_THREE, List.of("h1", "h3"), cluster(), 3);
    assertEquals(
        Optional.empty(), look(ONE_TO_THREE, List.of("h1", "h3"), cluster(), 4), "settling");
    assertEquals(
        List.of("h1", "h3", "h2"),
        look(ONE_TO_THREE, List.of("h1", "h3"), cluster(), 7).orElseThrow().hosts());
    look(ONE_TO_THREE, List.of("h1", "h3", "h2"), cluster(), 20);
    assertEquals(
        Optional.empty(),
        look(ONE_TO_THREE, List.of("h1", "h3", "h2"), cluster(), 22),
        "max_hosts=3");
  }

  @Test
  void aFewEventsQueuedOnASaturatedHostAlsoScaleOut() {
    report("h1", 97, new AppLoad(1, 1, 10, false));
    report("h2", 5, null);
    look(ONE_TO_THREE, List.of("h1"), cluster(), 0);
    Placement.Decision d = look(ONE_TO_THREE, List.of("h1"), cluster(), 2).orElseThrow();
    assertEquals(List.of("h1", "h2"), d.hosts());
    assertTrue(d.reason().contains("saturated"), d.reason());
  }

  @Test
  void idleForScaleInAfterTakesAwayTheHostAddedLastDownToMinHosts() {
    ElasticPlacement twoToThree = new ElasticPlacement(2, 3, Duration.ofSeconds(30));
    List<String> placed = List.of("h2", "h1", "h3");
    report("h1", 5, new AppLoad(0, 0, 50, false));
    report("h2", 5, new AppLoad(0, 0, 50, false));
    report("h3", 5, new AppLoad(0, 0, 50, false));
    assertEquals(Optional.empty(), look(twoToThree, placed, cluster(), 0));
    assertEquals(Optional.empty(), look(twoToThree, placed, cluster(), 29), "idle 29 s of 30");
    Placement.Decision d = look(twoToThree, placed, cluster(), 30).orElseThrow();
    assertEquals(List.of("h2", "h1"), d.hosts());
    assertEquals("in", d.direction());
    assertEquals(Optional.empty(), look(twoToThree, d.hosts(), cluster(), 90), "min_hosts=2");
  }

  @Test
  void newEventsBetweenReportsAreNotIdle() {
    List<String> placed = List.of("h1", "h2");
    report("h1", 5, new AppLoad(0, 0, 50, false));
    report("h2", 5, new AppLoad(0, 0, 50, false));
    look(ONE_TO_THREE, placed, cluster(), 0);
    report(
        "h2",
        5,
        new AppLoad(0, 0, 51, false)); // one event went through, finished before the report
    look(ONE_TO_THREE, placed, cluster(), 20);
    assertEquals(
        Optional.empty(), look(ONE_TO_THREE, placed, cluster(), 31), "idle only since second 20");
    assertEquals(
        List.of("h1"), look(ONE_TO_THREE, placed, cluster(), 50).orElseThrow().hosts());
  }

  @Test
  void aFailedHostIsReplacedBelowMinHostsAndNothingGoesToACordonedOne() {
    ElasticPlacement two = new ElasticPlacement(2, 3, Duration.ofSeconds(30));
    report("h2", 1, null);
    report("h3", 50, null);
    Placement.Cluster c = new Placement.Cluster(
        Set.of("h2", "h3", "h4"),
        Set.of("h3", "h4"),
        Set.of(),
        Map.copyOf(loads)); // h1 died, h2 cordoned
    Placement.Decision d = look(two, List.of("h1", "h3"), c, 0).orElseThrow();
    assertEquals(List.of("h3", "h4"), d.hosts(), "h2 is cordoned; h4 has no report but is free");
    assertEquals("replace", d.direction());
    assertTrue(d.reason().contains("[h1] failed or drain"), d.reason());
  }

  @Test
  void aDrainingHostLeavesThePlacement() {
    Placement.Cluster c =
        new Placement.Cluster(HOSTS, Set.of("h1", "h3"), Set.of("h2"), Map.copyOf(loads));
    assertEquals(
        List.of("h1"),
        look(ONE_TO_THREE, List.of("h1", "h2"), c, 0).orElseThrow().hosts());
  }

  @Test
  void aHostWithoutMemoryAvailableForTheSandboxGetsNone() {
    report("h1", 50, new AppLoad(20, 1, 100, false));
    loads.put("h3", new LoadReport(1, 4096, SANDBOX_MB - 1, 0, 0, Map.of())); // idle, but too full
    report("h2", 70, null);
    look(ONE_TO_THREE, List.of("h1"), cluster(), 0);
    assertEquals(
        List.of("h1", "h2"),
        look(ONE_TO_THREE, List.of("h1"), cluster(), 2).orElseThrow().hosts(),
        "h3 has the lowest CPU but not 512 MB available");
    loads.put("h2", new LoadReport(70, 4096, 100, 1, 0, Map.of()));
    look(ONE_TO_THREE, List.of("h1"), cluster(), 10);
    assertEquals(
        Optional.empty(),
        look(ONE_TO_THREE, List.of("h1"), cluster(), 12),
        "queueing, but no host holds the sandbox: no scale-out");
  }
}
