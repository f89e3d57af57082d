package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.ClusterKeysRefresher;
import sand.cluster.ClusterSecrets;
import sand.cluster.SecretBox;
import sand.cluster.SecretTables.StoredSecret;
import sand.frontend.invoke.InvokeAuth;

/**
 * Issue 31: the cluster secret (it tags executions, keys the gates, seals applications' secrets and endpoints'
 * signing secrets) had no rotation. Now: begin, switch, finish, each refused until the one before reached every
 * process, and the sealed values sealed again under the new secret before the old one is dropped.
 */
class ClusterSecretRotationTest {
  private static final String ADMIN = "admin-key-0123456789";
  private TestFrontend fe;
  private String alice;
  private String signingSecret;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend(Map.of("admin.key", ADMIN), true);
    alice = fe.signUp("alice");
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    assertEquals(
        200,
        fe.call("PUT", "/api/v1/apps/shop/secrets/API_TOKEN", alice, "{\"value\": \"hunter2\"}")
            .status());
    var signing = fe.call("POST", "/api/v1/apps/shop/signing-secret", alice, null);
    assertEquals(201, signing.status(), signing.body());
    signingSecret = signing.json().path("secret").asText();
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private TestFrontend.Answer step(String step) throws Exception {
    return fe.call("POST", "/api/v1/admin/cluster-secret/" + step, ADMIN, null);
  }

  private String appId() throws Exception {
    return fe.call("GET", "/api/v1/apps/shop", alice, null).json().path("id").asText();
  }

  /** A box holding only the secret named {@code row} now: what a process that never saw the other would hold. */
  private SecretBox only(String row) {
    return new SecretBox(fe.store.clusterSecrets().rows().get(row).value());
  }

  @Test
  void beginSwitchFinishEachWhenTheLastReachedEveryProcessAndSealedValuesFollow() throws Exception {
    var none = fe.call("GET", "/api/v1/admin/cluster-secret", ADMIN, null);
    assertEquals(200, none.status(), none.body());
    assertEquals("none under way", none.json().path("step").asText());
    String first = none.json().path("current").path("fingerprint").asText();
    assertEquals(12, first.length());
    assertFalse(none.body().contains(java.util.HexFormat.of().formatHex(fe.store.clusterSecret())));
    assertEquals(
        403, fe.call("POST", "/api/v1/admin/cluster-secret/begin", alice, null).status());
    assertEquals(404, step("sideways").status());
    assertEquals(409, step("switch").status(), "nothing begun");
    assertEquals(409, step("finish").status(), "nothing switched");

    var begun = step("begin");
    assertEquals(200, begun.status(), begun.body());
    assertEquals(first, begun.json().path("current").path("fingerprint").asText());
    String second = begun.json().path("next").path("fingerprint").asText();
    assertNotEquals(first, second);
    assertEquals(409, step("begin").status(), "one rotation at a time");
    var early = step("switch");
    assertEquals(409, early.status(), early.body());
    assertTrue(early.body().contains("not yet"), early.body());

    fe.store.ageClusterSecrets(ClusterKeysRefresher.SETTLED);
    var switched = step("switch");
    assertEquals(200, switched.status(), switched.body());
    assertEquals(second, switched.json().path("current").path("fingerprint").asText());
    assertEquals(first, switched.json().path("previous").path("fingerprint").asText());
    assertTrue(switched.json().path("next").isNull());
    String id = appId();
    StoredSecret sealed = fe.store.secrets(id).get(0);
    assertEquals("hunter2", only(ClusterSecrets.PREVIOUS).open(id, "API_TOKEN", sealed.sealed()));
    assertThrows(
        SecretBox.Unsealable.class,
        () -> only(ClusterSecrets.CURRENT).open(id, "API_TOKEN", sealed.sealed()),
        "still sealed under the old secret until finish");
    assertEquals(409, step("finish").status(), "not before every process makes with the new one");

    fe.store.ageClusterSecrets(ClusterKeysRefresher.SETTLED);
    var finished = step("finish");
    assertEquals(200, finished.status(), finished.body());
    assertEquals(1, finished.json().path("resealed").path("secrets").asInt());
    assertEquals(1, finished.json().path("resealed").path("signing_secrets").asInt());
    assertTrue(finished.json().path("previous").isNull());
    assertEquals("none under way", finished.json().path("step").asText());
    assertEquals(1, fe.store.clusterSecrets().rows().size());
    SecretBox fresh = only(ClusterSecrets.CURRENT);
    assertEquals(
        "hunter2", fresh.open(id, "API_TOKEN", fe.store.secrets(id).get(0).sealed()));
    byte[] signing = fe.store.endpoints().endpointAuth(id).orElseThrow().sealedSecret();
    assertEquals(signingSecret, fresh.open(id, InvokeAuth.SECRET_NAME, signing));
  }
}
