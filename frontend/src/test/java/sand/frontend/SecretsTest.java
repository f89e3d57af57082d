package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.SecretBox;
import sand.contracts.AppEnv;

/** /api/v1/apps/{app}/secrets and settings.env: values go in sealed and never come out. */
class SecretsTest {
  private TestFrontend fe;
  private String alice;
  private String bob;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    bob = fe.signUp("bob");
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private TestFrontend.Answer set(String key, String name, String body) throws Exception {
    return fe.call("PUT", "/api/v1/apps/shop/secrets/" + name, key, body);
  }

  private String appId() throws Exception {
    return fe.call("GET", "/api/v1/apps/shop", alice, null).json().path("id").asText();
  }

  @Test
  void aSecretIsStoredSealedAndListedWithoutItsValue() throws Exception {
    var put = set(alice, "API_TOKEN", "{\"value\": \"hunter2\"}");
    assertEquals(200, put.status(), put.body());
    assertFalse(put.body().contains("hunter2"));
    assertTrue(put.json().path("note").asText().contains("next deploy"), put.body());
    var list = fe.call("GET", "/api/v1/apps/shop/secrets", alice, null);
    assertEquals(200, list.status());
    assertEquals("API_TOKEN", list.json().path("secrets").get(0).path("name").asText());
    assertEquals(7, list.json().path("secrets").get(0).path("bytes").asInt());
    assertFalse(list.body().contains("hunter2"));
    var stored = fe.store.secrets(appId()).get(0);
    assertFalse(new String(stored.sealed(), StandardCharsets.ISO_8859_1).contains("hunter2"));
    assertEquals(
        "hunter2",
        new SecretBox(fe.store.clusterSecret()).open(appId(), "API_TOKEN", stored.sealed()));
    assertFalse(fe.call("GET", "/api/v1/apps/shop", alice, null).body().contains("hunter2"));
    var del = fe.call("DELETE", "/api/v1/apps/shop/secrets/API_TOKEN", alice, null);
    assertEquals(200, del.status(), del.body());
    assertEquals(
        404,
        fe.call("DELETE", "/api/v1/apps/shop/secrets/API_TOKEN", alice, null).status());
    assertEquals(0, fe.store.secrets(appId()).size());
  }

  @Test
  void anotherAccountsApplicationIsNotFound() throws Exception {
    set(alice, "API_TOKEN", "{\"value\": \"hunter2\"}");
    assertEquals(404, set(bob, "API_TOKEN", "{\"value\": \"x\"}").status());
    assertEquals(404, fe.call("GET", "/api/v1/apps/shop/secrets", bob, null).status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/shop/secrets/API_TOKEN", bob, null).status());
    assertEquals(1, fe.store.secrets(appId()).size());
  }

  @Test
  void badNamesValuesAndCountsAre400WithTheRule() throws Exception {
    var reserved = set(alice, "SAND_X", "{\"value\": \"v\"}");
    assertEquals(400, reserved.status());
    assertTrue(reserved.body().contains("reserved"), reserved.body());
    assertEquals(400, set(alice, "1BAD", "{\"value\": \"v\"}").status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/shop/secrets/SAND_X", alice, null).status());
    assertEquals(400, set(alice, "OK", "{\"value\": 3}").status());
    String big = "x".repeat(AppEnv.RULES.maxValueBytes() + 1);
    var tooBig = set(alice, "BIG", "{\"value\": \"" + big + "\"}");
    assertEquals(400, tooBig.status());
    assertTrue(tooBig.body().contains("at most " + AppEnv.RULES.maxValueBytes()), tooBig.body());
    for (int i = 0; i < AppEnv.RULES.maxSecrets(); i++) {
      assertEquals(200, set(alice, "S" + i, "{\"value\": \"v\"}").status());
    }
    var tooMany = set(alice, "ONE_MORE", "{\"value\": \"v\"}");
    assertEquals(400, tooMany.status());
    assertTrue(tooMany.body().contains("at most " + AppEnv.RULES.maxSecrets()), tooMany.body());
    assertEquals(200, set(alice, "S0", "{\"value\": \"replaced\"}").status());
  }

  @Test
  void settingsEnvIsStoredAndBadEnvIsRefused() throws Exception {
    String wf = TestFrontend.HELLO.replaceFirst(
        "\\{", "{\"settings\":{\"env\":{\"GREETING\":\"hi\"},\"request_timeout_s\":30},");
    var put = fe.call("PUT", "/api/v1/apps/shop", alice, wf);
    assertEquals(200, put.status(), put.body());
    assertEquals("hi", put.json().path("settings").path("env").path("GREETING").asText());
    var bad = fe.call(
        "PUT",
        "/api/v1/apps/shop",
        alice,
        TestFrontend.HELLO.replaceFirst("\\{", "{\"settings\":{\"env\":{\"SAND_HOME\":\"x\"}},"));
    assertEquals(400, bad.status());
    assertTrue(bad.body().contains("SAND_"), bad.body());
    var unknown = fe.call(
        "PUT",
        "/api/v1/apps/shop",
        alice,
        TestFrontend.HELLO.replaceFirst("\\{", "{\"settings\":{\"memory\":1},"));
    assertEquals(400, unknown.status());
    for (String k : new String[] {"env", "hosts", "request_timeout_s", "timeout_s"}) {
      assertTrue(unknown.body().contains(k), unknown.body());
    }
  }
}
