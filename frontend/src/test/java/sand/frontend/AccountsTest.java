package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.frontend.internal.Json;

/**
 * Deleting an account with two frontends over one cluster state (as behind nginx): frontend B remembers the key
 * it read (AuthHandler, up to 30 s), frontend A deletes the account. Its name must not be taken again while B may
 * still serve the old key, or that key would act for the newcomer (its grains, applications, secrets).
 */
class AccountsTest {
  private static final String GRAIN = "def handle(event, context):\n    return 'newcomer'\n";

  private TestFrontend a;
  private TestFrontend b;

  @BeforeEach
  void start() throws Exception {
    a = new TestFrontend();
    b = new TestFrontend(a);
  }

  @AfterEach
  void stop() {
    b.close();
    a.close();
  }

  @Test
  void anOldKeyRememberedByAnotherFrontendNeverActsForANewAccountOfTheSameName() throws Exception {
    String old = a.signUp("alice");
    assertEquals(200, b.call("GET", "/api/v1/grains", old, null).status(), "B reads the key");
    var gone = a.call("DELETE", "/api/v1/accounts/alice", old, null);
    assertEquals(200, gone.status(), gone.body());
    assertEquals(
        401,
        a.call("GET", "/api/v1/grains", old, null).status(),
        "the deleting frontend refuses the key at once");

    var again = a.call("POST", "/api/v1/accounts", null, "{\"name\":\"alice\"}");
    if (again.status() == 201) { // the name was free at once: someone else is 'alice' now
      newcomersGrain(again.json().path("api_key").asText());
    }
    assertNoNewcomerBehind(old);
    assertEquals(409, again.status(), again.body());
    assertEquals("conflict", again.json().path("error").path("code").asText());
    String message = again.json().path("error").path("message").asText();
    assertTrue(message.contains("free again at"), message);
    long wait = again.json().path("error").path("retry_after_s").asLong();
    assertTrue(
        wait >= AuthHandler.DELETED_NAME_HELD.toSeconds() - 5
            && wait <= AuthHandler.DELETED_NAME_HELD.toSeconds() + 1,
        again.body());
    assertEquals(
        Long.toString(wait), again.raw().headers().firstValue("Retry-After").orElse(""));
    assertEquals(
        409,
        b.call("POST", "/api/v1/accounts", null, "{\"name\":\"alice\"}").status(),
        "held on every frontend");
    assertTrue(a.store.account("alice").isEmpty());

    // another name is free as ever
    assertEquals(
        201, a.call("POST", "/api/v1/accounts", null, "{\"name\":\"alicia\"}").status());
  }

  @Test
  void theKnixDoorsSignUpDoesNotTakeADeletedAccountsNameEither() throws Exception {
    JsonNode first = knix("signUp", null, user("alice@example.com"));
    String name = first.path("data").path("account").asText();
    assertEquals("alice-example-com", name, first.toString());
    String old = knix("logIn", null, user("alice@example.com"))
        .path("data")
        .path("token")
        .asText();
    assertEquals(200, b.call("GET", "/api/v1/grains", old, null).status(), "B reads the key");
    JsonNode deleted = knix("deleteAccount", old, Json.object());
    assertEquals("success", deleted.path("status").asText(), deleted.toString());

    // the same e-mail signs up again (as anyone may, once the account is gone): its name derives
    // from the e-mail
    JsonNode second = knix("signUp", null, user("alice@example.com"));
    assertEquals("success", second.path("status").asText(), second.toString());
    String fresh = knix("logIn", null, user("alice@example.com"))
        .path("data")
        .path("token")
        .asText();
    newcomersGrain(fresh);
    assertNoNewcomerBehind(old);
    String account = second.path("data").path("account").asText();
    assertNotEquals(name, account, "the held name is not given to the newcomer");
    assertTrue(account.startsWith(name + "-"), account);
  }

  /** The newcomer keeps something of its own (as it would keep applications and secrets). */
  private void newcomersGrain(String key) throws Exception {
    var put = a.call("PUT", "/api/v1/grains/private-notes", key, "text/x-python", GRAIN.getBytes());
    assertEquals(200, put.status(), put.body());
  }

  /** On B, which may still remember the deleted account's key, that key reaches nothing of a newcomer. */
  private void assertNoNewcomerBehind(String old) throws Exception {
    var seen = b.call("GET", "/api/v1/grains", old, null);
    assertFalse(
        seen.status() == 200 && seen.body().contains("private-notes"),
        "the deleted account's key, still remembered by frontend B, acted for the new account of the same"
            + " name: " + seen.body());
    var grain = b.call("GET", "/api/v1/grains/private-notes", old, null);
    assertNotEquals(200, grain.status(), grain.body());
  }

  private static ObjectNode user(String email) {
    ObjectNode d = Json.object();
    d.putObject("user").put("email", email).put("password", "pw-" + email);
    return d;
  }

  private JsonNode knix(String action, String token, ObjectNode data) throws Exception {
    ObjectNode body = Json.object().put("action", action);
    ObjectNode d = body.putObject("data");
    d.setAll(data);
    if (token != null) {
      d.putObject("user").put("token", token);
    }
    var r = a.call("POST", "/management", null, Json.text(body));
    assertEquals(200, r.status(), r.body());
    return r.json();
  }
}
