package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables.AppHostState;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.GrainCode;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.HostAgentTables.LogLine;

/**
 * What every {@link ClusterStore} promises the host agents ({@link HostAgentTables}), run against the fake
 * ({@code InMemoryClusterStoreTest}) and against Cassandra ({@code CassandraClusterStoreTest}, -Dsand.it=true).
 * The Cassandra side shares one keyspace between tests, so each test names its rows with {@link #uid}.
 */
interface HostAgentTablesContract {

  ClusterStore store();

  static String uid(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  static Instant now() {
    return Instant.now().truncatedTo(ChronoUnit.MILLIS);
  }

  static ApplicationRecord app(String appId, String desired, List<String> hosts) {
    return new ApplicationRecord(
        appId,
        "name-" + appId,
        "dev",
        "{\"name\":\"hello\"}",
        "requests==2",
        "{}",
        1,
        desired,
        hosts);
  }

  static GrainCode code(String resource, String text) {
    return new GrainCode(resource, text.getBytes(StandardCharsets.UTF_8), "py", "sha-" + text);
  }

  @Test
  default void theClusterSecretIsThirtyTwoBytesAndTheSameForEveryCaller() {
    byte[] first = store().clusterSecret();
    assertEquals(32, first.length);
    assertArrayEquals(first, store().clusterSecret());
  }

  @Test
  default void liveHostsAreThoseWithAYoungHeartbeatSortedById() {
    Instant now = now();
    String b = uid("hb");
    String a = uid("ha");
    String old = uid("hold");
    store()
        .upsertHost(new HostInfo(
            b, "127.0.0.1:9190", "127.0.0.1:9191", "127.0.0.1:9192", 8, 16384, now, now));
    store().upsertHost(new HostInfo(a, "bus", "data", "", 4, 0, now, now.minusSeconds(5)));
    store().upsertHost(new HostInfo(old, "bus", "data", "", 4, 0, now, now.minusSeconds(60)));
    List<HostInfo> live = live(now, Duration.ofSeconds(10), a, b, old);
    assertEquals(
        List.of(
            new HostInfo(a, "bus", "data", "", 4, 0, now, now.minusSeconds(5)),
            new HostInfo(
                b, "127.0.0.1:9190", "127.0.0.1:9191", "127.0.0.1:9192", 8, 16384, now, now)),
        live);
    assertEquals(
        live,
        store().liveHostsAtQuorum(now, Duration.ofSeconds(10)).stream()
            .filter(h -> Set.of(a, b, old).contains(h.hostId()))
            .toList(),
        "the same hosts read at quorum only");
    if (a.compareTo(b) > 0) { // the ids are random: the order is by id whatever they are
      assertEquals(List.of(b, a), live.stream().map(HostInfo::hostId).toList());
    }

    store().heartbeat(old, now);
    assertEquals(
        Set.of(a, b, old),
        Set.copyOf(live(now, Duration.ofSeconds(10), a, b, old).stream()
            .map(HostInfo::hostId)
            .toList()));
    assertEquals(
        new HostInfo(old, "bus", "data", "", 4, 0, now, now),
        live(now, Duration.ofSeconds(10), old).get(0),
        "a heartbeat changes the heartbeat only");

    store().removeHost(a);
    assertEquals(
        Set.of(b, old),
        Set.copyOf(live(now, Duration.ofSeconds(10), a, b, old).stream()
            .map(HostInfo::hostId)
            .toList()));
  }

  @Test
  default void aHeartbeatOfAnUnknownHostDoesNotMakeItLive() {
    // A host agent's last heartbeat can land after it removed itself.
    String ghost = uid("ghost");
    store().heartbeat(ghost, now());
    assertEquals(List.of(), live(now(), Duration.ofSeconds(10), ghost));
    store().upsertHost(new HostInfo(ghost, "bus", "data", "", 1, 0, now(), now().minusSeconds(60)));
    store().removeHost(ghost);
    store().heartbeat(ghost, now());
    assertEquals(List.of(), live(now(), Duration.ofSeconds(10), ghost));
  }

  @Test
  default void operatorsScheduleOutlivesTheHostsRowUntilTheHostIsForgotten() {
    String h = uid("hs");
    String appId = uid("app");
    Instant now = now();
    store().upsertHost(new HostInfo(h, "bus", "data", "", 1, 0, now, now));
    store().putApplication(app(appId, HostAgentTables.DESIRED_DEPLOYED, List.of()), Map.of());
    store().setAppHostState(appId, h, HostAgentTables.HOST_DEPLOYED, null, now);
    HostSchedules.HostSchedule drain =
        new HostSchedules.HostSchedule(h, HostSchedules.DRAINING, "kernel upgrade", now);
    store().hostSchedules().set(drain);
    store().removeHost(h); // a clean stop of its agent
    assertEquals(drain, store().hostSchedules().of(h).orElseThrow(), "a restart keeps the drain");
    store().hostSchedules().clear(h);
    assertTrue(store().hostSchedules().of(h).isEmpty());

    store().upsertHost(new HostInfo(h, "bus", "data", "", 1, 0, now, now.minusSeconds(600)));
    store().hostSchedules().set(new HostSchedules.HostSchedule(h, HostSchedules.CORDONED, "", now));
    store().forgetHost(h);
    assertEquals(List.of(), live(now, Duration.ofDays(1), h));
    assertTrue(store().hostSchedules().of(h).isEmpty());
    assertEquals(List.of(), store().appHostStates(appId));
  }

  private List<HostInfo> live(Instant now, Duration maxAge, String... ids) {
    Set<String> mine = Set.of(ids);
    return store().liveHosts(now, maxAge).stream()
        .filter(h -> mine.contains(h.hostId()))
        .toList();
  }

  @Test
  default void anApplicationRoundTripsWithItsCode() {
    String id = uid("app");
    assertTrue(store().application(id).isEmpty());
    assertEquals(Map.of(), store().applicationCode(id));

    ApplicationRecord app = app(id, HostAgentTables.DESIRED_UNDEPLOYED, List.of());
    store()
        .putApplication(
            app,
            Map.of(
                "greet",
                code("greet", "def handle(e, c):\n    return e\n"),
                "empty",
                new GrainCode("empty", new byte[0], "zip", "e")));
    assertEquals(app, store().application(id).orElseThrow());
    assertTrue(store().applications().contains(app));
    Map<String, GrainCode> stored = store().applicationCode(id);
    assertEquals(Set.of("greet", "empty"), stored.keySet());
    assertArrayEquals(
        "def handle(e, c):\n    return e\n".getBytes(StandardCharsets.UTF_8),
        stored.get("greet").code());
    assertEquals("py", stored.get("greet").kind());
    assertEquals("sha-def handle(e, c):\n    return e\n", stored.get("greet").sha256());
    assertArrayEquals(new byte[0], stored.get("empty").code());
  }

  @Test
  default void puttingAnApplicationAgainUpsertsItsCodeAndKeepsTheRest() {
    String id = uid("app");
    store()
        .putApplication(
            app(id, HostAgentTables.DESIRED_UNDEPLOYED, List.of()),
            Map.of("a", code("a", "1"), "b", code("b", "1")));
    ApplicationRecord v2 = new ApplicationRecord(
        id,
        "renamed",
        "dev",
        "{}",
        "",
        "{\"x\":1}",
        2,
        HostAgentTables.DESIRED_DEPLOYED,
        List.of("h1", "h2"));
    store().putApplication(v2, Map.of("b", code("b", "2"), "c", code("c", "2")));
    assertEquals(v2, store().application(id).orElseThrow());
    Map<String, GrainCode> stored = store().applicationCode(id);
    assertEquals(Set.of("a", "b", "c"), stored.keySet());
    assertEquals("sha-2", stored.get("b").sha256());
  }

  @Test
  default void setDesiredChangesOnlyWhatIsWantedAndWhere() {
    String id = uid("app");
    ApplicationRecord app = app(id, HostAgentTables.DESIRED_UNDEPLOYED, List.of());
    store().putApplication(app, Map.of());
    store().setDesired(id, HostAgentTables.DESIRED_DEPLOYED, List.of("h1"));
    ApplicationRecord got = store().application(id).orElseThrow();
    assertEquals(
        new ApplicationRecord(
            id,
            app.name(),
            app.owner(),
            app.workflow(),
            app.requirements(),
            app.settings(),
            app.version(),
            HostAgentTables.DESIRED_DEPLOYED,
            List.of("h1")),
        got);
    assertTrue(got.wantedOn("h1"));
    assertFalse(got.wantedOn("h2"));
    store().setDesired(id, HostAgentTables.DESIRED_DEPLOYED, List.of());
    assertTrue(store().application(id).orElseThrow().wantedOn("h2"), "no hosts: every host");
  }

  @Test
  default void setDesiredOfAnUnknownApplicationCreatesNone() {
    // An undeploy can race the application's deletion; the agents must not see a half application.
    String id = uid("gone");
    store().setDesired(id, HostAgentTables.DESIRED_UNDEPLOYED, List.of("h1"));
    assertTrue(store().application(id).isEmpty());
    assertTrue(store().applications().stream().noneMatch(a -> a.appId().equals(id)));
  }

  @Test
  default void appHostStatesAreOnePerHostSortedByHostAndPerApplication() {
    String id = uid("app");
    String other = uid("app");
    Instant now = now();
    store().setAppHostState(id, "h2", HostAgentTables.HOST_DEPLOYING, null, now);
    store()
        .setAppHostState(
            id, "h1", HostAgentTables.HOST_FAILED, "pip: no matching distribution", now);
    store().setAppHostState(id, "h2", HostAgentTables.HOST_DEPLOYED, null, now.plusSeconds(1));
    store().setAppHostState(other, "h1", HostAgentTables.HOST_STOPPED, null, now);
    assertEquals(
        List.of(
            new AppHostState(
                id, "h1", HostAgentTables.HOST_FAILED, "pip: no matching distribution", now),
            new AppHostState(id, "h2", HostAgentTables.HOST_DEPLOYED, null, now.plusSeconds(1))),
        store().appHostStates(id));
    assertEquals(List.of(), store().appHostStates(uid("none")));
  }

  @Test
  default void logsAreReadOldestFirstAndByPage() {
    String x = uid("x");
    store()
        .appendLogs(
            List.of(
                new LogLine(x, 2, 0, "greet", "INFO", "third"),
                new LogLine(x, 1, 1, "greet", "INFO", "second"),
                new LogLine(x, 1, 0, "greet", "WARNING", "first"),
                new LogLine(uid("y"), 1, 0, "greet", "INFO", "another execution's")),
            Duration.ofMinutes(5));
    awaitLogs(x, 3);
    assertEquals(
        List.of(
            new LogLine(x, 1, 0, "greet", "WARNING", "first"),
            new LogLine(x, 1, 1, "greet", "INFO", "second"),
            new LogLine(x, 2, 0, "greet", "INFO", "third")),
        store().logs(x));
    assertEquals(List.of("first"), texts(store().logs(x, Long.MIN_VALUE, Integer.MIN_VALUE, 1)));
    assertEquals(List.of("second", "third"), texts(store().logs(x, 1, 0, 5)));
    assertEquals(List.of("third"), texts(store().logs(x, 1, 1, 5)));
    assertEquals(List.of(), store().logs(x, 2, 0, 5));
    assertEquals(List.of(), store().logs(uid("none")));
  }

  /** Log writes may be asynchronous (Cassandra: fire and forget): wait for them. */
  private void awaitLogs(String executionId, int count) {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (store().logs(executionId).size() < count && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
  }

  private static List<String> texts(List<LogLine> lines) {
    return lines.stream().map(LogLine::text).toList();
  }
}
