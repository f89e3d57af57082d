package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.frontend.invoke.Alias;

/** Aliases through the API, and invocations that name an alias or a version. */
class AliasesTest {
  TestFrontend fe;
  String alice;
  String appId;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    appId = fe.deployHello(alice, "shop", null); // version 1
    assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status()); // 2
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private TestFrontend.Answer put(String alias, String body) throws Exception {
    return fe.call("PUT", "/api/v1/apps/shop/aliases/" + alias, alice, body);
  }

  /** Whether an invocation got past the qualifier: its request reached the entry grain's topic. */
  private boolean reachesKafka(String path) throws Exception {
    int before = fe.sent("sand." + appId + ".greet").size();
    var call = fe.callAsync("POST", path + "?async=1", null, "{}");
    TestFrontend.Answer a = call.get();
    if (a.status() != 202) {
      return false;
    }
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (fe.sent("sand." + appId + ".greet").size() == before && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    return fe.sent("sand." + appId + ".greet").size() > before;
  }

  @Test
  void anAliasOnTheRunningVersionIsInvokedByName() throws Exception {
    var p = put("prod", "{\"version\": 2}");
    assertEquals(200, p.status(), p.body());
    assertTrue(p.json().path("serves").asBoolean());
    assertEquals("/app/shop@prod", p.json().path("invoke").asText());
    var control = fe.sent(sand.contracts.TopicNames.CONTROL);
    JsonNode event = sand.frontend.internal.Json.MAPPER.readTree(
        control.get(control.size() - 1).value());
    assertEquals("alias", event.path("type").asText(), "the other frontends forget it at once");
    assertEquals(appId, event.path("app").asText());
    assertTrue(reachesKafka("/app/shop@prod"));
    assertTrue(reachesKafka("/app/shop@2"));
    assertTrue(reachesKafka("/app/shop%40prod"), "as sand invoke sends it (quoted)");
    String id = fe.callAsync("POST", "/app/shop@prod?async=1", null, "{}")
        .get()
        .json()
        .path("execution_id")
        .asText();
    var running = fe.call("GET", "/app/shop@prod/executions/" + id, null, null);
    assertEquals(202, running.status(), "the result route takes the same form: " + running.body());
    assertTrue(reachesKafka("/app/shop"));

    JsonNode list = fe.call("GET", "/api/v1/apps/shop/aliases", alice, null).json();
    assertEquals(2, list.path("running_version").asInt());
    assertEquals("prod", list.path("aliases").get(0).path("name").asText());
    assertEquals(2, list.path("aliases").get(0).path("version").asInt());

    // a deploy makes version 3: prod still names 2, which no longer runs
    assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());
    var stale = fe.call("POST", "/app/shop@prod", null, "{}");
    assertEquals(409, stale.status(), stale.body());
    assertTrue(stale.body().contains("runs version 3"), stale.body());
    assertEquals(409, fe.call("POST", "/app/shop@2", null, "{}").status());

    assertEquals(200, put("prod", "{\"version\": 3}").status());
    assertTrue(reachesKafka("/app/shop@prod"), "this frontend sees the change at once");

    assertEquals(
        200, fe.call("DELETE", "/api/v1/apps/shop/aliases/prod", alice, null).status());
    assertEquals(404, fe.call("POST", "/app/shop@prod", null, "{}").status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/shop/aliases/prod", alice, null).status());
  }

  @Test
  void aSplitIsStoredButAnswers409UntilTwoVersionsRun() throws Exception {
    var p = put("canary", "{\"version\": 2, \"weights\": {\"1\": 0.5}}");
    assertEquals(200, p.status(), p.body());
    assertFalse(p.json().path("serves").asBoolean());
    assertEquals(0.5, p.json().path("weights").path("1").asDouble());
    var a = fe.call("POST", "/app/shop@canary", null, "{}");
    assertEquals(409, a.status(), a.body());
    assertTrue(a.body().contains("not built yet"), a.body());
  }

  @Test
  void badAliasesAndOtherAccountsAreClear() throws Exception {
    assertEquals(400, put("Prod", "{\"version\": 2}").status());
    assertEquals(400, put("x".repeat(33), "{\"version\": 2}").status());
    assertEquals(400, put("prod", "{\"version\": \"2\"}").status());
    assertEquals(400, put("prod", "not json").status());
    var unknown = put("prod", "{\"version\": 9}");
    assertEquals(400, unknown.status());
    assertTrue(unknown.body().contains("has no version 9"), unknown.body());
    assertEquals(400, put("prod", "{\"version\": 2, \"weights\": {\"9\": 0.1}}").status());
    assertEquals(400, put("prod", "{\"version\": 2, \"weights\": {\"1\": 2}}").status());
    assertEquals(400, fe.call("POST", "/app/shop@Bad!", null, "{}").status());
    assertEquals(404, fe.call("POST", "/app/shop@nope", null, "{}").status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/shop/aliases/Bad!", alice, null).status());

    for (int i = 0; i < Alias.MAX_PER_APP; i++) {
      assertEquals(200, put("a" + i, "{\"version\": 1}").status());
    }
    var full = put("one-more", "{\"version\": 1}");
    assertEquals(400, full.status());
    assertTrue(full.body().contains("at most " + Alias.MAX_PER_APP), full.body());
    assertEquals(200, put("a0", "{\"version\": 2}").status(), "replacing one is fine");

    String bob = fe.signUp("bob");
    assertEquals(
        404,
        fe.call("PUT", "/api/v1/apps/shop/aliases/mine", bob, "{\"version\": 1}")
            .status());
    assertEquals(404, fe.call("GET", "/api/v1/apps/shop/aliases", bob, null).status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/shop/aliases/a0", bob, null).status());

    fe.call("POST", "/api/v1/apps/shop/undeploy", alice, null);
    fe.store.setAppHostState(appId, "h1", "undeployed", null, java.time.Instant.now());
    var deleted = fe.call("DELETE", "/api/v1/apps/shop", alice, null);
    assertEquals(200, deleted.status(), deleted.body());
    assertTrue(fe.store.appRecords(appId, Alias.KIND).isEmpty(), "deleted with the application");
  }
}
