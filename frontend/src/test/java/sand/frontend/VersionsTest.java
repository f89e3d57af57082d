package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;

/** Every deploy, update and rollback is a numbered version; a rollback runs an old version's content again. */
class VersionsTest {
  TestFrontend fe;
  String alice;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    fe.store.upsertHost(
        new HostAgentTables.HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    grain("shout", "return 'one'");
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private void grain(String name, String body) throws Exception {
    fe.call(
        "PUT",
        "/api/v1/grains/" + name,
        alice,
        "text/x-python",
        ("def handle(e, c):\n    " + body + "\n").getBytes(StandardCharsets.UTF_8));
  }

  private String shoutCode() {
    String id = fe.store.appName("shop").orElseThrow().appId();
    return new String(fe.store.applicationCode(id).get("shout").code(), StandardCharsets.UTF_8);
  }

  @Test
  void deploysAreVersionsAndARollbackRunsAnOldOneAsANewVersion() throws Exception {
    grain("greet", "return e");
    assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());
    grain("shout", "return 'two'");
    assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());
    assertTrue(shoutCode().contains("two"));

    JsonNode list = fe.call("GET", "/api/v1/apps/shop/versions", alice, null).json();
    assertEquals(2, list.path("running").asInt());
    assertEquals(2, list.path("versions").get(0).path("version").asInt(), "newest first");
    assertEquals("deploy", list.path("versions").get(0).path("description").asText());
    assertTrue(list.path("versions").get(0).path("running").asBoolean());
    assertEquals(
        64,
        list.path("versions")
            .get(1)
            .path("grains")
            .path("shout")
            .path("sha256")
            .asText()
            .length());

    var back =
        fe.call("POST", "/api/v1/apps/shop/rollback", alice, null); // default: the one before
    assertEquals(202, back.status(), back.body());
    assertEquals(3, back.json().path("version").asInt(), "a rollback is a new version");
    assertTrue(shoutCode().contains("one"), "version 1's code runs again");
    JsonNode v3 = fe.call("GET", "/api/v1/apps/shop/versions/3", alice, null).json();
    assertEquals("rollback to version 1", v3.path("description").asText());
    assertEquals("greet", v3.path("workflow").path("entry").asText());

    var forward = fe.call("POST", "/api/v1/apps/shop/rollback", alice, "{\"version\": 2}");
    assertEquals(202, forward.status(), forward.body());
    assertTrue(shoutCode().contains("two"));
  }

  @Test
  void badRollbacksAreClearAndAnotherAccountSeesNothing() throws Exception {
    grain("greet", "return e");
    var none = fe.call("POST", "/api/v1/apps/shop/rollback", alice, null);
    assertEquals(409, none.status(), none.body()); // nothing deployed yet: no version before
    assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());
    var unknown = fe.call("POST", "/api/v1/apps/shop/rollback", alice, "{\"version\": 9}");
    assertEquals(404, unknown.status());
    assertTrue(unknown.body().contains("has no version 9"), unknown.body());
    assertEquals(
        400,
        fe.call("POST", "/api/v1/apps/shop/rollback", alice, "{\"version\": \"x\"}")
            .status());
    assertEquals(
        400, fe.call("GET", "/api/v1/apps/shop/versions/x", alice, null).status());
    String bob = fe.signUp("bob");
    assertEquals(404, fe.call("GET", "/api/v1/apps/shop/versions", bob, null).status());
    assertEquals(404, fe.call("POST", "/api/v1/apps/shop/rollback", bob, null).status());
  }

  @Test
  void onlyTheNewestVersionsAreKeptWithTheCodeTheyRun() throws Exception {
    grain("greet", "return e");
    for (int i = 0; i < Versions.KEPT + 3; i++) {
      grain("shout", "return " + i);
      assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());
    }
    String id = fe.store.appName("shop").orElseThrow().appId();
    JsonNode list = fe.call("GET", "/api/v1/apps/shop/versions", alice, null).json();
    assertEquals(Versions.KEPT, list.path("versions").size());
    assertEquals(4, list.path("versions").get(Versions.KEPT - 1).path("version").asInt());
    // greet's code is shared by every version; shout's by one each
    assertEquals(Versions.KEPT + 1, fe.store.appRecords(id, Versions.CODE).size());
    assertEquals(
        404, fe.call("GET", "/api/v1/apps/shop/versions/3", alice, null).status());
  }
}
