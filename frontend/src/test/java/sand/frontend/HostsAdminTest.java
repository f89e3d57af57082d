package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.HostLoads;
import sand.frontend.internal.Json;

/** Cordon, drain, uncordon and remove a host over the admin API (issue 31). */
class HostsAdminTest {
  private static final String ADMIN = "admin-key-0123456789";
  private TestFrontend fe;
  private String alice;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend(Map.of("admin.key", ADMIN), true);
    alice = fe.signUp("alice");
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private JsonNode host(String id) throws Exception {
    for (JsonNode h : fe.call("GET", "/api/v1/admin/hosts", ADMIN, null).json().path("hosts")) {
      if (h.path("host").asText().equals(id)) {
        return h;
      }
    }
    return null;
  }

  private List<String> hostEvents() throws Exception {
    List<String> out = new ArrayList<>();
    for (var r : fe.sent("sand.control")) {
      JsonNode e = Json.MAPPER.readTree(r.value());
      if (e.path("type").asText().equals("host")) {
        out.add(e.path("host").asText());
      }
    }
    return out;
  }

  @Test
  void onlyTheAdminKeyChangesAHost() throws Exception {
    fe.deployHello(alice, "shop", null);
    for (String[] route : new String[][] {
      {"POST", "/api/v1/admin/hosts/h1/cordon"},
      {"POST", "/api/v1/admin/hosts/h1/drain"},
      {"POST", "/api/v1/admin/hosts/h1/uncordon"},
      {"DELETE", "/api/v1/admin/hosts/h1"}
    }) {
      assertEquals(401, fe.call(route[0], route[1], null, null).status(), route[1]);
      assertEquals(403, fe.call(route[0], route[1], alice, null).status(), route[1]);
    }
    assertEquals("schedulable", host("h1").path("schedule").asText());
  }

  @Test
  void aCordonedHostGetsNothingNewButKeepsWhatItRuns() throws Exception {
    String shop = fe.deployHello(alice, "shop", null); // on h1
    fe.store.upsertHost(new HostInfo("h2", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    var c = fe.call(
        "POST", "/api/v1/admin/hosts/h1/cordon", ADMIN, "{\"reason\": \"disk replacement\"}");
    assertEquals(200, c.status(), c.body());
    assertEquals("cordoned", host("h1").path("schedule").asText());
    assertEquals("disk replacement", host("h1").path("schedule_reason").asText());
    assertEquals(List.of("h1"), hostEvents(), "the host agent is told at once");

    String blog =
        fe.deployHello(alice, "blog", null); // marks h1 deployed itself: look at what was asked
    List<String> asked = fe.store.appHostStates(blog).stream()
        .filter(s -> !s.hostId().equals("h1") || !s.status().equals("deployed"))
        .map(HostAgentTables.AppHostState::hostId)
        .toList();
    assertEquals(List.of("h2"), asked, "a new application is not asked of the cordoned host");
    fe.call("POST", "/api/v1/apps/shop/deploy", alice, null); // a new version of what h1 runs
    List<String> again = fe.store.appHostStates(shop).stream()
        .map(HostAgentTables.AppHostState::hostId)
        .toList();
    assertEquals(List.of("h1", "h2"), again, "a new version still goes where the application runs");

    var u = fe.call("POST", "/api/v1/admin/hosts/h1/uncordon", ADMIN, null);
    assertEquals(200, u.status(), u.body());
    assertEquals("schedulable", host("h1").path("schedule").asText());
    assertEquals(List.of("h1", "h1"), hostEvents());
  }

  @Test
  void aDrainingHostIsDrainedOnceNothingRunsThere() throws Exception {
    String shop = fe.deployHello(alice, "shop", null);
    var d = fe.call("POST", "/api/v1/admin/hosts/h1/drain", ADMIN, null);
    assertEquals(200, d.status(), d.body());
    assertEquals("draining", host("h1").path("schedule").asText());
    assertFalse(host("h1").path("drained").asBoolean(), "shop is still deployed there");
    fe.store.setAppHostState(shop, "h1", HostAgentTables.HOST_UNDEPLOYED, null, Instant.now());
    assertTrue(host("h1").path("drained").asBoolean(), host("h1").toString());
  }

  @Test
  void onlyADeadHostIsRemovedAndThenNothingListsIt() throws Exception {
    String shop = fe.deployHello(alice, "shop", null);
    var alive = fe.call("DELETE", "/api/v1/admin/hosts/h1", ADMIN, null);
    assertEquals(409, alive.status(), alive.body());
    assertTrue(alive.body().contains("is alive"), alive.body());

    Instant old = Instant.now().minusSeconds(600);
    fe.store.upsertHost(new HostInfo("h1", "b", "d", "", 1, 0, old, old));
    fe.call("POST", "/api/v1/admin/hosts/h1/cordon", ADMIN, null);
    var r = fe.call("DELETE", "/api/v1/admin/hosts/h1", ADMIN, null);
    assertEquals(200, r.status(), r.body());
    assertEquals(null, host("h1"));
    assertEquals(List.of(), fe.store.appHostStates(shop), "the application no longer lists it");
    assertEquals(Map.of(), fe.store.hostSchedules().all());
    JsonNode hosts = fe.call("GET", "/api/v1/apps/shop", alice, null).json().path("hosts");
    assertEquals(0, hosts.size(), hosts.toString());
  }

  /** Issue 31: each host's use (its sandboxes' limits, grains) against what it has. */
  @Test
  void eachHostShowsItsSandboxesUseAgainstItsCpusAndMemory() throws Exception {
    fe.deployHello(alice, "shop", null); // the defaults: 512 MB, 1 CPU
    fe.deployHello(alice, "blog", "{\"sandbox_memory_mb\": 256, \"sandbox_cpus\": 0.5}");
    fe.store.upsertHost(new HostInfo("h1", "b", "d", "", 2, 4096, Instant.now(), Instant.now()));
    fe.store.upsertHost(new HostInfo("h2", "b", "d", "", 4, 8192, Instant.now(), Instant.now()));
    JsonNode h1 = host("h1");
    assertEquals(2, h1.path("resources").path("cpus").asInt(), h1.toString());
    assertEquals(4096, h1.path("resources").path("memory_mb").asInt(), h1.toString());
    JsonNode use = h1.path("use");
    assertEquals(2, use.path("sandboxes").asInt(), use.toString());
    assertEquals(4, use.path("grains").asInt(), "greet and shout in each");
    assertEquals(768, use.path("sandbox_memory_mb").asLong(), use.toString());
    assertEquals(1.5, use.path("sandbox_cpus").asDouble(), use.toString());
    assertEquals(18.8, use.path("memory_percent").asDouble(), use.toString());
    assertEquals(75.0, use.path("cpu_percent").asDouble(), use.toString());
    JsonNode idle = host("h2").path("use");
    assertEquals(0, idle.path("sandboxes").asInt(), idle.toString());
    assertEquals(0.0, idle.path("memory_percent").asDouble(), idle.toString());
  }

  /** Issue 33: an application scaled to zero on a host holds no sandbox there, and is still deployed. */
  @Test
  void anApplicationScaledToZeroIsIdleOnItsHostAndStillDeployed() throws Exception {
    String shop = fe.deployHello(alice, "shop", "{\"scale_to_zero_after_s\": 60}");
    fe.deployHello(alice, "blog", null);
    fe.store.upsertHost(new HostInfo("h1", "b", "d", "", 2, 4096, Instant.now(), Instant.now()));
    fe.store.setAppHostState(shop, "h1", HostAgentTables.HOST_IDLE, null, Instant.now());
    JsonNode use = host("h1").path("use");
    assertEquals(1, use.path("sandboxes").asInt(), "blog's only: " + use);
    assertEquals(1, use.path("idle_applications").asInt(), use.toString());
    assertEquals(512, use.path("sandbox_memory_mb").asLong(), use.toString());
    JsonNode app = fe.call("GET", "/api/v1/apps/shop", alice, null).json();
    assertEquals("deployed", app.path("status").asText(), app.toString());
    assertEquals("idle", app.path("hosts").path(0).path("status").asText(), app.toString());
  }

  /** Issue 33: what each host agent last measured of its load is listed with the host. */
  @Test
  void eachHostShowsTheLoadItsAgentReported() throws Exception {
    fe.deployHello(alice, "shop", null);
    Instant at = Instant.parse("2026-11-28T01:00:00Z");
    fe.store
        .hostLoads()
        .report(new HostLoads.HostLoad(
            "h1", "{\"cpu_percent\": 12.5, \"sandboxes\": 1, \"apps\": {}}", at));
    JsonNode h1 = host("h1");
    assertEquals(12.5, h1.path("load").path("cpu_percent").asDouble(), h1.toString());
    assertEquals(1, h1.path("load").path("sandboxes").asInt(), h1.toString());
    assertEquals("2026-11-28T01:00:00Z", h1.path("load_at").asText(), h1.toString());
  }

  @Test
  void anUnknownHostIsA404NamingTheHosts() throws Exception {
    fe.deployHello(alice, "shop", null);
    for (String verb : List.of("cordon", "drain", "uncordon")) {
      var r = fe.call("POST", "/api/v1/admin/hosts/nosuch/" + verb, ADMIN, null);
      assertEquals(404, r.status(), r.body());
      assertTrue(r.body().contains("the cluster has h1"), r.body());
    }
    assertEquals(
        404, fe.call("DELETE", "/api/v1/admin/hosts/nosuch", ADMIN, null).status());
    var bad = fe.call("POST", "/api/v1/admin/hosts/h1/cordon", ADMIN, "{\"reason\": 3}");
    assertEquals(400, bad.status(), bad.body());
  }
}
