package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.frontend.invoke.InvokeAuth;

/** An application's endpoint protected by invoke keys or signatures, through the frontend's HTTP API. */
class ProtectedEndpointTest {
  private TestFrontend fe;
  private String alice;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    fe.deployHello(alice, "hello", null);
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  /** An end user's async call with extra headers: 202 when let in. */
  private HttpResponse<String> invoke(String path, String body, Map<String, String> headers)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(fe.uri(path))
        .header("Content-Type", "application/json")
        .method(
            path.contains("/executions/") ? "GET" : "POST",
            path.contains("/executions/")
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return fe.http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private TestFrontend.Answer mode(String key, String mode) throws Exception {
    return fe.call("PUT", "/api/v1/apps/hello/endpoint", key, "{\"auth\": \"" + mode + "\"}");
  }

  private static Map<String, String> signed(String secret, long ts, String body) {
    return Map.of(
        InvokeAuth.TIMESTAMP_HEADER,
        Long.toString(ts),
        InvokeAuth.SIGNATURE_HEADER,
        "sha256="
            + InvokeAuth.hmacHex(
                secret.getBytes(StandardCharsets.UTF_8), Long.toString(ts), body.getBytes()));
  }

  @Test
  void aPublicEndpointIsOpenAsBefore() throws Exception {
    assertEquals(
        "public",
        fe.call("GET", "/api/v1/apps/hello/endpoint", alice, null)
            .json()
            .path("auth")
            .asText());
    assertEquals(202, invoke("/app/hello?async=1", "{}", Map.of()).statusCode());
  }

  @Test
  void aKeyEndpointWantsALiveKeyOnEveryDoor() throws Exception {
    var m = mode(alice, "key");
    assertEquals(200, m.status(), m.body());
    assertTrue(m.json().path("note").asText().contains("no invoke key"), m.body());
    var none = invoke("/app/hello?async=1", "{}", Map.of());
    assertEquals(401, none.statusCode(), none.body());
    assertTrue(none.headers().firstValue("WWW-Authenticate").orElse("").contains("X-Sand-Key"));
    assertTrue(none.body().contains("missing_key"), none.body());
    var created = fe.call("POST", "/api/v1/apps/hello/keys", alice, "{\"name\": \"ci\"}");
    assertEquals(201, created.status(), created.body());
    String key = created.json().path("key").asText();
    String id = created.json().path("id").asText();
    assertTrue(key.startsWith("sik_"), key);
    var list = fe.call("GET", "/api/v1/apps/hello/keys", alice, null);
    assertFalse(list.body().contains(key), "a key is answered only once");
    assertEquals("ci", list.json().path("keys").get(0).path("name").asText());
    assertTrue(key.startsWith(list.json().path("keys").get(0).path("prefix").asText()));
    assertEquals(
        401,
        invoke("/app/hello?async=1", "{}", Map.of("X-Sand-Key", "sik_wrong")).statusCode());
    var ok = invoke("/app/hello?async=1", "{}", Map.of("X-Sand-Key", key));
    assertEquals(202, ok.statusCode(), ok.body());
    String exec = sand.frontend.internal.Json.MAPPER
        .readTree(ok.body())
        .path("execution_id")
        .asText();
    // the async result and the KNIX door follow the same rule
    assertEquals(401, invoke("/app/hello/executions/" + exec, "", Map.of()).statusCode());
    assertEquals(
        202,
        invoke("/app/hello/executions/" + exec, "", Map.of("X-Sand-Key", key)).statusCode());
    assertEquals(401, invoke("/app/hello/knix?async=1", "{}", Map.of()).statusCode());
    assertEquals(
        401, invoke("/app/hello/knix?executionId=" + exec, "", Map.of()).statusCode());
    assertEquals(
        200, invoke("/app/hello/knix?async=1", "{}", Map.of("X-Sand-Key", key)).statusCode());
    // revoked: refused at once by the frontend that revoked it
    assertEquals(
        200, fe.call("DELETE", "/api/v1/apps/hello/keys/" + id, alice, null).status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/hello/keys/" + id, alice, null).status());
    assertEquals(
        401, invoke("/app/hello?async=1", "{}", Map.of("X-Sand-Key", key)).statusCode());
  }

  @Test
  void anHmacEndpointWantsAFreshSignatureOfTheBody() throws Exception {
    assertEquals(200, mode(alice, "hmac").status());
    var s = fe.call("POST", "/api/v1/apps/hello/signing-secret", alice, null);
    assertEquals(201, s.status(), s.body());
    String secret = s.json().path("secret").asText();
    assertFalse(
        fe.call("GET", "/api/v1/apps/hello/endpoint", alice, null).body().contains(secret));
    long now = System.currentTimeMillis() / 1000;
    String body = "{\"name\":\"sand\"}";
    assertEquals(
        202, invoke("/app/hello?async=1", body, signed(secret, now, body)).statusCode());
    assertEquals(
        401, invoke("/app/hello?async=1", "{}", signed(secret, now, body)).statusCode());
    assertEquals(401, invoke("/app/hello?async=1", body, Map.of()).statusCode());
    var stale = invoke("/app/hello?async=1", body, signed(secret, now - 600, body));
    assertEquals(401, stale.statusCode());
    assertTrue(stale.body().contains("stale_timestamp"), stale.body());
    // a rotated secret replaces the old one
    fe.call("POST", "/api/v1/apps/hello/signing-secret", alice, null);
    assertEquals(
        401, invoke("/app/hello?async=1", body, signed(secret, now, body)).statusCode());
  }

  @Test
  void anotherAccountCannotSeeOrChangeTheProtection() throws Exception {
    String bob = fe.signUp("bob");
    mode(alice, "key");
    String id = fe.call("POST", "/api/v1/apps/hello/keys", alice, null)
        .json()
        .path("id")
        .asText();
    assertEquals(404, fe.call("GET", "/api/v1/apps/hello/keys", bob, null).status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/hello/keys/" + id, bob, null).status());
    assertEquals(404, fe.call("POST", "/api/v1/apps/hello/keys", bob, null).status());
    assertEquals(404, mode(bob, "public").status());
    assertEquals(
        404, fe.call("POST", "/api/v1/apps/hello/signing-secret", bob, null).status());
    assertEquals(401, invoke("/app/hello?async=1", "{}", Map.of()).statusCode());
  }

  @Test
  void badInputIs400AndKeysAreCapped() throws Exception {
    var bad = mode(alice, "token");
    assertEquals(400, bad.status());
    assertTrue(bad.body().contains("public, key, hmac"), bad.body());
    assertEquals(
        400,
        fe.call("POST", "/api/v1/apps/hello/keys", alice, "{\"name\": \"a b\"}").status());
    for (int i = 0; i < EndpointHandler.MAX_KEYS; i++) {
      assertEquals(201, fe.call("POST", "/api/v1/apps/hello/keys", alice, null).status());
    }
    var over = fe.call("POST", "/api/v1/apps/hello/keys", alice, null);
    assertEquals(409, over.status());
    assertTrue(over.body().contains("at most " + EndpointHandler.MAX_KEYS), over.body());
  }
}
