package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.HostInfo;

/** An application's own grains: deploying one application never changes another's code. */
class AppGrainsTest {
  private TestFrontend fe;
  private String alice;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    fe.store.upsertHost(new HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private void putOwn(String app, String grain, String says) throws Exception {
    var r = fe.call(
        "PUT",
        "/api/v1/apps/" + app + "/grains/" + grain,
        alice,
        "text/x-python",
        ("def handle(e, c):\n    return '" + says + "'\n").getBytes(StandardCharsets.UTF_8));
    assertEquals(200, r.status(), r.body());
  }

  private String deploy(String app) throws Exception {
    var d = fe.call("POST", "/api/v1/apps/" + app + "/deploy", alice, null);
    assertEquals(202, d.status(), d.body());
    return d.json().path("id").asText();
  }

  private String code(String appId, String grain) {
    return new String(fe.store.applicationCode(appId).get(grain).code(), StandardCharsets.UTF_8);
  }

  @Test
  void twoApplicationsWithTheSameGrainNamesRunTheirOwnCode() throws Exception {
    for (String app : new String[] {"shop", "copy"}) {
      assertEquals(
          200, fe.call("PUT", "/api/v1/apps/" + app, alice, TestFrontend.HELLO).status());
      putOwn(app, "greet", app + " greets");
      putOwn(app, "shout", app + " shouts");
    }
    String shop = deploy("shop");
    putOwn("copy", "greet", "copy greets, version 2"); // the copy changes its greet...
    deploy("copy");
    String shopAgain = deploy("shop"); // ...and the next deploy of shop still runs shop's
    assertEquals(shop, shopAgain);
    assertTrue(code(shop, "greet").contains("shop greets"), code(shop, "greet"));
    JsonNode grains = fe.call("GET", "/api/v1/apps/shop", alice, null).json().path("grains");
    assertEquals(
        "greet application 1 true",
        grains.get(0).path("name").asText() + " " + grains.get(0).path("scope").asText() + " "
            + grains.get(0).path("version") + " " + grains.get(0).path("current"));
    assertEquals(
        2,
        fe.call("GET", "/api/v1/apps/copy/grains", alice, null)
            .json()
            .path("grains")
            .size());
    assertEquals(
        404, fe.call("GET", "/api/v1/apps/shop/grains/nope", alice, null).status());
    var inUse = fe.call("DELETE", "/api/v1/apps/shop/grains/greet", alice, null);
    assertEquals(409, inUse.status(), inUse.body());
    String bob = fe.signUp("bob");
    assertEquals(
        404,
        fe.call("GET", "/api/v1/apps/shop/grains", bob, null).status(),
        "another account's: 404");
  }

  @Test
  void anApplicationsRecentExecutionsComeWithTheirLogsOldestFirst() throws Exception {
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    String id = fe.store.appName("shop").orElseThrow().appId();
    Instant now = Instant.now();
    for (int i = 0; i < 3; i++) {
      String exec = "e" + i;
      fe.store.startExecution(
          new FrontendTables.ExecutionRecord(
              exec, id, "alice", "running", null, null, now.minusSeconds(30 - i), null, "fe", null),
          Duration.ofHours(1));
      fe.store.appendLogs(
          List.of(new HostAgentTables.LogLine(
              exec, now.toEpochMilli() * 1_000_000L, 0, "greet", "INFO", "line of " + exec)),
          Duration.ofHours(1));
    }
    JsonNode all = fe.call("GET", "/api/v1/apps/shop/logs", alice, null).json().path("executions");
    assertEquals(
        "e0 e1 e2",
        all.get(0).path("execution_id").asText() + " "
            + all.get(1).path("execution_id").asText() + " "
            + all.get(2).path("execution_id").asText());
    assertEquals("line of e2", all.get(2).path("logs").get(0).path("text").asText());
    JsonNode newest =
        fe.call("GET", "/api/v1/apps/shop/logs?limit=1", alice, null).json().path("executions");
    assertEquals(1, newest.size());
    assertEquals("e2", newest.get(0).path("execution_id").asText());
    long since = now.minusSeconds(29).toEpochMilli();
    assertEquals(
        2,
        fe.call("GET", "/api/v1/apps/shop/logs?since=" + since, alice, null)
            .json()
            .path("executions")
            .size());
    assertEquals(
        400, fe.call("GET", "/api/v1/apps/shop/logs?limit=0", alice, null).status());
    assertEquals(
        400,
        fe.call("GET", "/api/v1/apps/shop/logs?since=yesterday", alice, null).status());
    assertEquals(
        404, fe.call("GET", "/api/v1/apps/shop/logs", fe.signUp("bob"), null).status());
  }

  @Test
  void newApplicationsAndGrainsBeyondTheOperatorsQuotasAre403() throws Exception {
    try (TestFrontend small =
        new TestFrontend(Map.of("quota.apps.per.account", "1", "quota.grains", "1"), true)) {
      String key = small.signUp("carol");
      assertEquals(
          200, small.call("PUT", "/api/v1/apps/one", key, TestFrontend.HELLO).status());
      assertEquals(
          200,
          small.call("PUT", "/api/v1/apps/one", key, TestFrontend.HELLO).status(),
          "an update is fine");
      var two = small.call("PUT", "/api/v1/apps/two", key, TestFrontend.HELLO);
      assertEquals(403, two.status(), two.body());
      assertEquals("quota_exceeded", two.json().path("error").path("code").asText());
      assertTrue(
          two.body().contains("has 1 applications (quota 1, set by the operator)"), two.body());
      byte[] py = "def handle(e, c):\n    return 1\n".getBytes();
      assertEquals(
          200,
          small
              .call("PUT", "/api/v1/apps/one/grains/greet", key, "text/x-python", py)
              .status());
      assertEquals(
          200,
          small
              .call("PUT", "/api/v1/apps/one/grains/greet", key, "text/x-python", py)
              .status(),
          "a new version is fine");
      assertEquals(
          403,
          small
              .call("PUT", "/api/v1/apps/one/grains/shout", key, "text/x-python", py)
              .status());
      assertEquals(
          200,
          small.call("PUT", "/api/v1/grains/shared", key, "text/x-python", py).status(),
          "the account's shared grains are a scope of their own");
    }
  }

  @Test
  void anAccountIsDeletedByItsOwnKeyWithItsApplicationsAndGrainsOnceNoneRuns() throws Exception {
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    putOwn("shop", "greet", "hi");
    putOwn("shop", "shout", "HI");
    fe.call(
        "PUT",
        "/api/v1/grains/shared",
        alice,
        "text/x-python",
        "def handle(e, c):\n    return 1\n".getBytes());
    String id = deploy("shop");
    String bob = fe.signUp("bob");
    assertEquals(
        403, fe.call("DELETE", "/api/v1/accounts/alice", bob, null).status(), "only itself");
    assertEquals(401, fe.call("DELETE", "/api/v1/accounts/alice", null, null).status());
    var running = fe.call("DELETE", "/api/v1/accounts/alice", alice, null);
    assertEquals(409, running.status(), running.body());
    assertTrue(running.body().contains("still runs shop"), running.body());
    fe.call("POST", "/api/v1/apps/shop/undeploy", alice, null);
    fe.store.setAppHostState(id, "h1", "undeployed", null, Instant.now());
    var gone = fe.call("DELETE", "/api/v1/accounts/alice", alice, null);
    assertEquals(200, gone.status(), gone.body());
    assertEquals("[\"shop\"]", gone.json().path("applications").toString());
    assertTrue(fe.store.account("alice").isEmpty() && fe.store.appName("shop").isEmpty());
    assertTrue(fe.store.grains("alice").isEmpty()
        && fe.store.grains(GrainsHandler.appScope(id)).isEmpty());
    assertEquals(
        401,
        fe.call("GET", "/api/v1/apps", alice, null).status(),
        "its key is unknown here at once");
    var held = fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"alice\"}");
    assertEquals(
        409, held.status(), "held while another frontend may remember the key: " + held.body());
    fe.store.ageAccountNameHolds(AuthHandler.DELETED_NAME_HELD);
    String again = fe.signUp("alice");
    assertEquals(
        200, fe.call("GET", "/api/v1/apps", again, null).status(), "the name is free again");
  }

  @Test
  void anApplicationWithoutItsOwnGrainRunsTheAccountsSharedOneAndTheUploadSaysWho()
      throws Exception {
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shared", alice, TestFrontend.HELLO).status());
    for (String g : new String[] {"greet", "shout"}) {
      fe.call(
          "PUT",
          "/api/v1/grains/" + g,
          alice,
          "text/x-python",
          "def handle(e, c):\n    return 1\n".getBytes());
    }
    String id = deploy("shared");
    var again = fe.call(
        "PUT",
        "/api/v1/grains/greet",
        alice,
        "text/x-python",
        "def handle(e, c):\n    return 2\n".getBytes());
    assertEquals("[\"shared\"]", again.json().path("used_by").toString(), again.body());
    JsonNode greet =
        fe.call("GET", "/api/v1/apps/shared", alice, null).json().path("grains").get(0);
    assertEquals("account", greet.path("scope").asText());
    assertEquals(
        false,
        greet.path("current").asBoolean(),
        "a newer shared version waits for the next deploy");
    assertTrue(code(id, "greet").contains("return 1"));

    fe.call("POST", "/api/v1/apps/shared/undeploy", alice, null);
    fe.store.setAppHostState(
        id, "h1", "undeployed", null, Instant.now()); // as the host agent would
    putOwn("shared", "greet", "own");
    assertEquals(200, fe.call("DELETE", "/api/v1/apps/shared", alice, null).status());
    assertTrue(
        fe.store.grains(GrainsHandler.appScope(id)).isEmpty(),
        "its own grains go with the application");
  }
}
