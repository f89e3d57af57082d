package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.contracts.TopicNames;
import sand.frontend.internal.Json;

/**
 * Triggerable buckets' REST API on one frontend with an in-memory cluster store (docs/data-triggers.md; the firing
 * itself is the host agent's, BucketTriggersTest; the real system: tests/e2e/test_data_triggers_e2e.py).
 */
class BucketsTest {
  private TestFrontend fe;
  private String alice;
  private String bob;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
    alice = fe.signUp("alice");
    bob = fe.signUp("bob");
  }

  @AfterEach
  void stop() {
    fe.close();
  }

  private List<String> controlEvents() throws Exception {
    List<String> out = new java.util.ArrayList<>();
    for (ProducerRecord<String, byte[]> r : fe.sent(TopicNames.CONTROL)) {
      if (Json.MAPPER.readTree(r.value()).path("type").asText().equals("buckets")) {
        out.add(r.key());
      }
    }
    return out;
  }

  @Test
  void aBucketIsItsAccountsAndStartsOnlyItsDeployedApplications() throws Exception {
    String appId = fe.deployHello(alice, "hello", null);
    assertEquals(201, fe.call("PUT", "/api/v1/buckets/photos", alice, null).status());
    assertEquals(200, fe.call("PUT", "/api/v1/buckets/photos", alice, null).status());
    var bound = fe.call("PUT", "/api/v1/buckets/photos/targets/hello", alice, null);
    assertEquals(200, bound.status(), bound.body());
    assertEquals("hello", bound.json().path("targets").get(0).path("app").asText());
    assertEquals(appId, bound.json().path("targets").get(0).path("id").asText());
    assertTrue(bound.json().path("targets").get(0).path("deployed").asBoolean());
    var status = fe.call("GET", "/api/v1/apps/hello", alice, null).json();
    assertEquals("[\"photos\"]", status.path("bucket_triggers").toString());
    assertEquals(List.of("alice", "alice"), controlEvents(), "host agents hear of each change");

    // bob has buckets of his own name space: alice's is not there for him, nor her application
    assertEquals(404, fe.call("GET", "/api/v1/buckets/photos", bob, null).status());
    assertEquals(
        404, fe.call("PUT", "/api/v1/buckets/photos/targets/hello", bob, null).status());
    assertEquals(201, fe.call("PUT", "/api/v1/buckets/photos", bob, null).status());
    var other = fe.call("PUT", "/api/v1/buckets/photos/targets/hello", bob, null);
    assertEquals(404, other.status());
    assertTrue(other.body().contains("no application 'hello' in your account"), other.body());
    assertEquals(
        0,
        fe.call("GET", "/api/v1/buckets/photos", bob, null)
            .json()
            .path("targets")
            .size(),
        "bob's bucket of the same name is another bucket");

    assertEquals(
        200,
        fe.call("DELETE", "/api/v1/buckets/photos/targets/hello", alice, null).status());
    var gone = fe.call("DELETE", "/api/v1/buckets/photos/targets/hello", alice, null);
    assertEquals(404, gone.status());
    assertTrue(gone.body().contains("does not start"), gone.body());
    assertEquals(200, fe.call("DELETE", "/api/v1/buckets/photos", alice, null).status());
    assertEquals(404, fe.call("GET", "/api/v1/buckets/photos", alice, null).status());
  }

  @Test
  void badNamesUndeployedTargetsAndTooManyAreRefusedNamingTheFix() throws Exception {
    var bad = fe.call("PUT", "/api/v1/buckets/-dash", alice, null);
    assertEquals(400, bad.status());
    assertTrue(bad.body().contains("must match"), bad.body());
    var missing = fe.call("GET", "/api/v1/buckets/none", alice, null);
    assertEquals(404, missing.status());
    assertTrue(missing.body().contains("PUT /api/v1/buckets/none"), missing.body());
    fe.call("PUT", "/api/v1/buckets/b", alice, null);
    fe.call(
        "PUT",
        "/api/v1/grains/greet",
        alice,
        "text/x-python",
        "def handle(event, context):\n    return event\n".getBytes());
    fe.call(
        "PUT",
        "/api/v1/grains/shout",
        alice,
        "text/x-python",
        "def handle(event, context):\n    return event\n".getBytes());
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/idle", alice, TestFrontend.HELLO).status());
    var undeployed = fe.call("PUT", "/api/v1/buckets/b/targets/idle", alice, null);
    assertEquals(409, undeployed.status());
    assertTrue(undeployed.body().contains("deploy it first"), undeployed.body());
    var later = fe.call("PUT", "/api/v1/buckets/b/targets/idle?when_deployed=1", alice, null);
    assertEquals(200, later.status(), later.body());
    assertTrue(!later.json().path("targets").get(0).path("deployed").asBoolean());
    for (int i = fe.store.buckets().buckets("alice").size(); i < BucketsHandler.MAX_BUCKETS; i++) {
      fe.store
          .buckets()
          .createBucket(new sand.cluster.BucketTables.Bucket(
              "alice", "fill" + i, List.of(), java.time.Instant.now()));
    }
    var full = fe.call("PUT", "/api/v1/buckets/one-more", alice, null);
    assertEquals(409, full.status());
    assertTrue(full.body().contains("delete one"), full.body());
  }
}
