package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables;

/** GET /api/v1/apps/{app}/executions: newest first, filtered, a page at a time, the owner's only. */
class AppExecutionsTest {
  TestFrontend fe;
  String alice;
  String id;
  final Instant now = Instant.now();

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    id = fe.store.appName("shop").orElseThrow().appId();
    for (int i = 0; i < 7; i++) {
      // e0..e6 one second apart, except that e4 started in the same millisecond as e3 (a tie to get
      // past)
      Instant started = now.minusSeconds(60 - (i == 4 ? 3 : i));
      fe.store.startExecution(
          new FrontendTables.ExecutionRecord(
              "e" + i, id, "alice", "running", null, null, started, null, "fe", null),
          Duration.ofHours(1));
      if (i % 2 == 1) {
        fe.store.endExecution(
            "e" + i,
            "failed",
            null,
            "{\"type\":\"ValueError\"}",
            started.plusMillis(250),
            null,
            FrontendTables.RANK_FAILED,
            Duration.ofHours(1));
      }
    }
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private List<String> ids(JsonNode page) {
    List<String> out = new ArrayList<>();
    page.path("executions").forEach(e -> out.add(e.path("execution_id").asText()));
    return out;
  }

  @Test
  void pagesGoNewestFirstThroughTiesToTheEnd() throws Exception {
    List<String> all = new ArrayList<>();
    String cursor = null;
    for (int page = 0; page < 10; page++) {
      JsonNode p = fe.call(
              "GET",
              "/api/v1/apps/shop/executions?limit=2" + (cursor == null ? "" : "&cursor=" + cursor),
              alice,
              null)
          .json();
      all.addAll(ids(p));
      cursor = p.path("next").isNull() ? null : p.path("next").asText();
      if (cursor == null) {
        break;
      }
    }
    assertEquals(List.of("e6", "e5", "e3", "e4", "e2", "e1", "e0"), all);
  }

  @Test
  void statusAndTimeFilter() throws Exception {
    JsonNode failed = fe.call("GET", "/api/v1/apps/shop/executions?status=failed", alice, null)
        .json();
    assertEquals(List.of("e5", "e3", "e1"), ids(failed));
    JsonNode first = failed.path("executions").get(0);
    assertEquals(250.0, first.path("duration_ms").asDouble());
    assertTrue(first.path("error").asText().contains("ValueError"), first.toString());
    long since = now.minusSeconds(55).toEpochMilli();
    assertEquals(
        List.of("e6", "e5"),
        ids(fe.call("GET", "/api/v1/apps/shop/executions?since=" + since, alice, null)
            .json()));
    long until = now.minusSeconds(58).toEpochMilli();
    assertEquals(
        List.of("e2", "e1", "e0"),
        ids(fe.call("GET", "/api/v1/apps/shop/executions?until=" + until, alice, null)
            .json()));
  }

  @Test
  void badQueriesAre400AndAnotherAccountGets404() throws Exception {
    for (String q : List.of(
        "status=done", "limit=0", "limit=101", "since=yesterday", "cursor=xyz", "cursor=OjE")) {
      var r = fe.call("GET", "/api/v1/apps/shop/executions?" + q, alice, null);
      assertEquals(400, r.status(), q + ": " + r.body());
    }
    assertEquals(
        404,
        fe.call("GET", "/api/v1/apps/shop/executions", fe.signUp("bob"), null).status());
  }
}
