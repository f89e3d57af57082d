package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.frontend.AuthHandler;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Reply;
import sand.frontend.invoke.InvokeAuth.Mode;
import sand.frontend.invoke.InvokeAuth.Rule;

/** The endpoint check itself: each mode, each way a request is refused, and the 401's shape. */
class InvokeAuthTest {
  private static final long NOW = 1_800_000_000L;
  private static final byte[] SECRET = "sss_test".getBytes(StandardCharsets.UTF_8);
  private static final byte[] BODY = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);

  private static Rule keys(String... keys) {
    return new Rule(Mode.KEY, List.of(keys).stream().map(AuthHandler::sha256).toList(), null);
  }

  private static String reason(Runnable r) {
    ApiException e = assertThrows(ApiException.class, r::run);
    assertEquals(401, e.status());
    return e.extra().get("reason");
  }

  private static String sig(byte[] secret, long ts, byte[] body) {
    return "sha256=" + InvokeAuth.hmacHex(secret, Long.toString(ts), body);
  }

  @Test
  void publicLetsEveryoneIn() {
    assertDoesNotThrow(() -> InvokeAuth.verify(Rule.PUBLIC, null, null, null, BODY, NOW));
  }

  @Test
  void keyModeWantsOneOfTheKeys() {
    Rule r = keys("sik_one", "sik_two");
    assertEquals("missing_key", reason(() -> InvokeAuth.verify(r, null, null, null, null, NOW)));
    assertEquals("missing_key", reason(() -> InvokeAuth.verify(r, " ", null, null, null, NOW)));
    assertEquals("bad_key", reason(() -> InvokeAuth.verify(r, "sik_three", null, null, null, NOW)));
    assertDoesNotThrow(() -> InvokeAuth.verify(r, "sik_two", null, null, null, NOW));
    // a signature is no key
    assertEquals(
        "missing_key",
        reason(() ->
            InvokeAuth.verify(r, null, Long.toString(NOW), sig(SECRET, NOW, BODY), BODY, NOW)));
  }

  @Test
  void aRevokedKeyIsRefused() {
    // revoking removes the key's hash from the rule the directory reads again
    assertEquals(
        "bad_key",
        reason(() -> InvokeAuth.verify(keys("sik_two"), "sik_one", null, null, null, NOW)));
    assertEquals(
        "bad_key", reason(() -> InvokeAuth.verify(keys(), "sik_one", null, null, null, NOW)));
  }

  @Test
  void hmacModeWantsAFreshSignatureOfTheBody() {
    Rule r = new Rule(Mode.HMAC, List.of(), SECRET);
    String ts = Long.toString(NOW);
    assertDoesNotThrow(() -> InvokeAuth.verify(r, null, ts, sig(SECRET, NOW, BODY), BODY, NOW));
    assertDoesNotThrow(() -> InvokeAuth.verify(
        r,
        null,
        ts,
        sig(SECRET, NOW, BODY).toUpperCase().replace("SHA256=", "sha256="),
        BODY,
        NOW));
    assertEquals(
        "missing_signature", reason(() -> InvokeAuth.verify(r, null, null, null, BODY, NOW)));
    assertEquals(
        "bad_signature",
        reason(() ->
            InvokeAuth.verify(r, null, ts, sig(SECRET, NOW, "{\"n\":2}".getBytes()), BODY, NOW)));
    assertEquals(
        "bad_signature",
        reason(
            () -> InvokeAuth.verify(r, null, ts, sig("other".getBytes(), NOW, BODY), BODY, NOW)));
    assertEquals(
        "bad_signature",
        reason(() -> InvokeAuth.verify(r, null, ts, sig(SECRET, NOW - 1, BODY), BODY, NOW)));
    assertEquals(
        "bad_timestamp", reason(() -> InvokeAuth.verify(r, null, "1e9", "sha256=00", BODY, NOW)));
    long old = NOW - InvokeAuth.WINDOW_S - 1;
    assertEquals(
        "stale_timestamp",
        reason(() ->
            InvokeAuth.verify(r, null, Long.toString(old), sig(SECRET, old, BODY), BODY, NOW)));
    long ahead = NOW + InvokeAuth.WINDOW_S + 1;
    assertEquals(
        "stale_timestamp",
        reason(() ->
            InvokeAuth.verify(r, null, Long.toString(ahead), sig(SECRET, ahead, BODY), BODY, NOW)));
    long edge = NOW - InvokeAuth.WINDOW_S;
    assertDoesNotThrow(
        () -> InvokeAuth.verify(r, null, Long.toString(edge), sig(SECRET, edge, BODY), BODY, NOW));
  }

  @Test
  void hmacWithoutASecretRefusesEverything() {
    Rule r = new Rule(Mode.HMAC, List.of(), null);
    String ts = Long.toString(NOW);
    assertEquals(
        "bad_signature",
        reason(() -> InvokeAuth.verify(r, null, ts, sig(null, NOW, BODY), BODY, NOW)));
  }

  @Test
  void refusalsSayWhatTheyWantInWwwAuthenticate() {
    ApiException e = assertThrows(
        ApiException.class, () -> InvokeAuth.verify(keys("k"), null, null, null, null, NOW));
    Reply reply = Reply.error(e);
    assertEquals(401, reply.status());
    assertTrue(reply.headers().get("WWW-Authenticate").contains(InvokeAuth.KEY_HEADER));
    assertTrue(new String(reply.body(), StandardCharsets.UTF_8).contains("\"unauthorized\""));
  }

  @Test
  void keysAreComparedAgainstEveryHash() {
    String h = AuthHandler.sha256("k");
    assertTrue(InvokeAuth.anyEqual(h, List.of("x", h, "y")));
    assertTrue(InvokeAuth.anyEqual(h, List.of(h, "x")));
    assertFalse(InvokeAuth.anyEqual(h, List.of("x", "y")));
    assertFalse(InvokeAuth.anyEqual(h, List.of()));
  }

  @Test
  void modesAreParsedOrRefusedWithTheList() {
    assertEquals(Mode.HMAC, Mode.parse("hmac"));
    ApiException e = assertThrows(ApiException.class, () -> Mode.parse("token"));
    assertEquals(400, e.status());
    assertTrue(e.getMessage().contains("public, key, hmac"));
  }
}
