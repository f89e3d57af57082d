package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.frontend.internal.Json;

/** The operator's API over HTTP: the admin key only; every account's applications, the hosts, undeploy, disable. */
class AdminApiTest {
  private static final String ADMIN = "admin-key-0123456789";
  private TestFrontend fe;
  private String alice;
  private String bob;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend(Map.of("admin.key", ADMIN), true);
    alice = fe.signUp("alice");
    bob = fe.signUp("bob");
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  @Test
  void onlyTheAdminKeyGetsIn() throws Exception {
    for (String[] route : new String[][] {
      {"GET", "/api/v1/admin/apps"},
      {"GET", "/api/v1/admin/hosts"},
      {"POST", "/api/v1/admin/apps/shop/undeploy"},
      {"POST", "/api/v1/admin/accounts/bob/disable"},
      {"POST", "/api/v1/admin/accounts/bob/enable"}
    }) {
      var none = fe.call(route[0], route[1], null, null);
      assertEquals(401, none.status(), route[1] + " " + none.body());
      assertTrue(none.body().contains("admin key"), none.body());
      var developer = fe.call(route[0], route[1], alice, null);
      assertEquals(403, developer.status(), route[1] + " " + developer.body());
      assertEquals("forbidden", developer.json().path("error").path("code").asText());
    }
  }

  /** Issue 31: rotating the admin key with no downtime: the old and the new key both work during the switch. */
  @Test
  void duringARotationTheNewAndThePreviousAdminKeyBothGetInAndNoOtherDoes() throws Exception {
    String old = "admin-key-old-0123456789";
    assertEquals(
        401, fe.call("GET", "/api/v1/admin/hosts", old, null).status(), "not before the rotation");
    try (TestFrontend rotating =
        new TestFrontend(Map.of("admin.key", ADMIN, "admin.key.previous", old), true)) {
      assertEquals(200, rotating.call("GET", "/api/v1/admin/hosts", ADMIN, null).status());
      assertEquals(200, rotating.call("GET", "/api/v1/admin/hosts", old, null).status());
      assertEquals(
          401,
          rotating
              .call("GET", "/api/v1/admin/hosts", "admin-key-other-0123456789", null)
              .status());
      String bob = rotating.signUp("bob");
      assertEquals(403, rotating.call("GET", "/api/v1/admin/hosts", bob, null).status());
    }
  }

  /** Issue 26, finding 13: /metrics names every application; it was anyone's. */
  @Test
  void metricsAreTheOperatorsOnly() throws Exception {
    fe.call("GET", "/api/v1/apps", alice, null);
    var none = fe.call("GET", "/metrics", null, null);
    assertEquals(401, none.status(), none.body());
    assertTrue(none.body().contains("admin key"), none.body());
    var developer = fe.call("GET", "/metrics", alice, null);
    assertEquals(403, developer.status(), developer.body());
    String metrics = fe.call("GET", "/metrics", ADMIN, null).body();
    assertTrue(
        metrics.contains(
            "sand_frontend_requests_total{frontend=\"fe-test\",method=\"GET\",route=\"/api/v1/apps\""
                + ",status=\"200\"} 1.0"),
        metrics);
  }

  @Test
  void theOperatorSeesEveryAccountsApplicationsAndTheHosts() throws Exception {
    fe.deployHello(alice, "shop", null);
    fe.deployHello(bob, "blog", "{\"max_hosts\": 2}");
    JsonNode apps = fe.call("GET", "/api/v1/admin/apps", ADMIN, null).json().path("apps");
    assertEquals(2, apps.size(), apps.toString());
    Map<String, String> owners = new TreeMap<>();
    apps.forEach(a -> owners.put(
        a.path("name").asText(),
        a.path("owner").asText() + " " + a.path("status").asText() + " "
            + a.path("hosts").get(0).path("host").asText()));
    assertEquals(Map.of("blog", "bob deployed h1", "shop", "alice deployed h1"), owners);
    JsonNode hosts = fe.call("GET", "/api/v1/admin/hosts", ADMIN, null).json().path("hosts");
    assertEquals(1, hosts.size(), hosts.toString());
    assertEquals("h1", hosts.get(0).path("host").asText());
    assertTrue(hosts.get(0).path("alive").asBoolean());
    assertEquals(2, hosts.get(0).path("sandboxes").size(), hosts.toString());
    Map<String, Boolean> placed = new TreeMap<>();
    hosts
        .get(0)
        .path("sandboxes")
        .forEach(b ->
            placed.put(b.path("app").asText(), b.path("placed_by_scheduler").asBoolean()));
    assertEquals(Map.of("blog", true, "shop", false), placed, "what a rolling upgrade waits for");
  }

  @Test
  void theOperatorUndeploysAnyonesApplication() throws Exception {
    String appId = fe.deployHello(bob, "blog", null);
    var u = fe.call("POST", "/api/v1/admin/apps/blog/undeploy", ADMIN, null);
    assertEquals(202, u.status(), u.body());
    assertEquals("bob", u.json().path("owner").asText());
    assertEquals("undeployed", fe.store.application(appId).orElseThrow().desired());
    assertEquals(
        "undeploy",
        Json.MAPPER
            .readTree(fe.sent("sand.control").get(1).value())
            .path("type")
            .asText());
    assertEquals(
        404, fe.call("POST", "/api/v1/admin/apps/nosuch/undeploy", ADMIN, null).status());
  }

  @Test
  void aDisabledAccountsKeysAreRefusedAndItsApplicationsUndeployedUntilItIsEnabled()
      throws Exception {
    String appId = fe.deployHello(bob, "blog", null);
    var d = fe.call(
        "POST",
        "/api/v1/admin/accounts/bob/disable",
        ADMIN,
        "{\"reason\": \"crash-looping, ticket 42\"}");
    assertEquals(200, d.status(), d.body());
    assertEquals("[\"blog\"]", d.json().path("undeployed").toString());
    assertEquals("undeployed", fe.store.application(appId).orElseThrow().desired());
    var refused = fe.call("GET", "/api/v1/apps", bob, null);
    assertEquals(403, refused.status(), refused.body());
    assertEquals("account_disabled", refused.json().path("error").path("code").asText());
    assertTrue(refused.body().contains("crash-looping, ticket 42"), refused.body());
    assertEquals(
        200,
        fe.call("GET", "/api/v1/apps", alice, null).status(),
        "another account is not touched");
    assertEquals(
        400,
        fe.call("POST", "/api/v1/admin/accounts/bob/disable", ADMIN, "{\"reason\": 3}")
            .status());
    assertEquals(
        404,
        fe.call("POST", "/api/v1/admin/accounts/nobody/disable", ADMIN, null).status());

    assertEquals(
        200, fe.call("POST", "/api/v1/admin/accounts/bob/enable", ADMIN, null).status());
    assertEquals(200, fe.call("GET", "/api/v1/apps", bob, null).status());
  }
}
