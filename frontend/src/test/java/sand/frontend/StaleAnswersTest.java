package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 31: with every Cassandra node down, the developer API answered 502 to everything; now a GET answers the
 * caller's last answer, marked stale, and only what it cannot answer fails.
 */
class StaleAnswersTest {
  private TestFrontend fe;
  private String alice;
  private String bob;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend(Map.of(), true);
    alice = fe.signUp("alice");
    bob = fe.signUp("bob");
    fe.deployHello(alice, "shop", null);
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  @Test
  void aGetTheClusterStateCannotAnswerGetsTheCallersLastAnswerMarkedStale() throws Exception {
    var fresh = fe.call("GET", "/api/v1/apps/shop", alice, null);
    assertEquals(200, fresh.status(), fresh.body());
    assertTrue(fresh.raw().headers().firstValue("Warning").isEmpty());
    var list = fe.call("GET", "/api/v1/apps", alice, null);
    assertEquals(200, list.status(), list.body());

    fe.appsAway.set(true);
    var stale = fe.call("GET", "/api/v1/apps/shop", alice, null);
    assertEquals(200, stale.status(), stale.body());
    assertEquals(fresh.json(), stale.json(), "what it answered before");
    assertEquals(
        "110 sand \"Response is Stale\"",
        stale.raw().headers().firstValue("Warning").orElse(""));
    assertTrue(stale.raw().headers().firstValue("Age").isPresent());
    assertTrue(
        stale.raw().headers().firstValue("X-Sand-Stale").orElse("").contains("did not answer"),
        stale.raw().headers().toString());
    assertEquals(200, fe.call("GET", "/api/v1/apps", alice, null).status(), "the list too");

    // nobody is shown another's answer, a GET never answered before fails, and so does a change
    var other = fe.call("GET", "/api/v1/apps/shop", bob, null);
    assertEquals(502, other.status(), other.body());
    assertEquals(502, fe.call("GET", "/api/v1/apps/blog", alice, null).status());
    assertEquals(502, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());

    fe.appsAway.set(false);
    var back = fe.call("GET", "/api/v1/apps/shop", alice, null);
    assertEquals(200, back.status());
    assertNull(back.raw().headers().firstValue("Warning").orElse(null), "fresh again");
  }
}
