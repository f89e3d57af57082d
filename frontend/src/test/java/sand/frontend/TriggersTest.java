package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables;
import sand.cluster.TriggerTables;
import sand.frontend.internal.Json;

/**
 * Triggers, retries, dead letters and idempotency keys on one frontend with an in-memory cluster store (the
 * end-to-end test, tests/e2e/test_triggers_e2e.py, runs them on the real system).
 */
class TriggersTest {
  private TestFrontend fe;

  @AfterEach
  void stop() throws Exception {
    if (fe != null) {
      fe.close();
    }
  }

  private List<JsonNode> requests(String appId) throws Exception {
    return requests(appId, "greet");
  }

  private List<JsonNode> requests(String appId, String grain) throws Exception {
    List<JsonNode> out = new java.util.ArrayList<>();
    for (ProducerRecord<String, byte[]> r : fe.sent("sand." + appId + "." + grain)) {
      out.add(Json.MAPPER.readTree(r.value()).path("event"));
    }
    return out;
  }

  private List<JsonNode> awaitRequests(String appId, int n) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (System.nanoTime() < deadline) {
      List<JsonNode> r = requests(appId);
      if (r.size() >= n) {
        return r;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("fewer than " + n + " requests reached the entry grain: "
        + requests(appId).size());
  }

  private void answer(JsonNode request, JsonNode value) {
    ObjectNode result = ((ObjectNode) request).deepCopy().put("grain", "end").put("from", "shout");
    result.set("value", value);
    fe.respond(request.path("execution_id").asText(), result);
  }

  private static JsonNode error() {
    return Json.object()
        .set(
            "error",
            Json.object().put("type", "ValueError").put("message", "no").put("grain", "shout"));
  }

  @Test
  void aTimerFiresEachTickOnceAndNamesItselfInTheTimeline() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    var put = fe.call("PUT", "/api/v1/apps/hello/triggers/tick", key, "{\"every\": \"1s\"}");
    assertEquals(201, put.status(), put.body());
    List<JsonNode> reqs = awaitRequests(appId, 2);
    Set<String> ticks = new HashSet<>();
    for (JsonNode r : reqs) {
      assertTrue(ticks.add(r.path("value").path("time").asText()), "a tick fired twice: " + reqs);
      assertEquals("tick", r.path("value").path("trigger").asText());
      assertEquals("trigger", r.path("trace").get(0).get(0).asText());
      assertEquals("timer:tick@fe-test", r.path("trace").get(0).get(1).asText());
    }
    assertEquals(
        200, fe.call("DELETE", "/api/v1/apps/hello/triggers/tick", key, null).status());
    assertEquals(
        404, fe.call("DELETE", "/api/v1/apps/hello/triggers/tick", key, null).status());
  }

  /** Issue 31: a claim whose result was unknown (a Cassandra replica just died) left its tick unfired. */
  @Test
  void aTickWhoseClaimHadNoAnswerIsClaimedAgainAndFiredOnce() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    fe.tickClaimsUnknown.set(2);
    long created = System.currentTimeMillis();
    var put = fe.call("PUT", "/api/v1/apps/hello/triggers/tick", key, "{\"every\": \"1s\"}");
    assertEquals(201, put.status(), put.body());
    List<JsonNode> reqs = awaitRequests(appId, 3);
    assertEquals(0, fe.tickClaimsUnknown.get(), "both unknown claims were tried again");
    List<Long> times = new java.util.ArrayList<>();
    for (JsonNode r : reqs) {
      times.add(Instant.parse(r.path("value").path("time").asText()).toEpochMilli());
    }
    assertEquals(times.size(), new HashSet<>(times).size(), "a tick fired twice: " + times);
    java.util.Collections.sort(times);
    assertTrue(
        times.get(0) - created < 2000,
        "the first tick after the trigger was made fired (not lost): " + (times.get(0) - created)
            + " ms");
  }

  /** Issue 31: a pass held up for seconds (Cassandra stalling as a replica died) fired only the newest tick. */
  @Test
  void theTicksAHeldUpPassSleptThroughFireLateNotNever() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    var put = fe.call("PUT", "/api/v1/apps/hello/triggers/tick", key, "{\"every\": \"1s\"}");
    assertEquals(201, put.status(), put.body());
    awaitRequests(appId, 1);
    fe.tickClaimStallMs.set(3500);
    List<JsonNode> reqs = awaitRequests(appId, 7);
    List<Long> times = new java.util.ArrayList<>();
    for (JsonNode r : reqs) {
      times.add(Instant.parse(r.path("value").path("time").asText()).toEpochMilli());
    }
    java.util.Collections.sort(times);
    for (int i = 1; i < times.size(); i++) {
      assertEquals(1000, times.get(i) - times.get(i - 1), "every tick, once: " + times);
    }
  }

  @Test
  void aTimerMayStartTheWorkflowAtAnotherGrain() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    var put = fe.call(
        "PUT",
        "/api/v1/apps/hello/triggers/tock",
        key,
        "{\"every\": \"1s\", \"grain\": \"shout\"}");
    assertEquals(201, put.status(), put.body());
    assertTrue(put.body().contains("\"grain\":\"shout\""), put.body());
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (requests(appId, "shout").isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    List<JsonNode> ticks = requests(appId, "shout");
    assertFalse(ticks.isEmpty(), "no tick reached grain shout");
    assertEquals("shout", ticks.get(0).path("grain").asText(), ticks.toString());
    assertTrue(requests(appId).isEmpty(), "a tick went to the entry grain");
  }

  @Test
  void anAsyncEventThatAlwaysFailsIsDeadLetteredAfterItsAttempts() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId =
        fe.deployHello(key, "hello", "{\"retry\": {\"attempts\": 3, \"backoff_s\": 0.05}}");
    var r = fe.call("POST", "/app/hello?async=1", null, "{\"n\": 7}");
    assertEquals(202, r.status(), r.body());
    String first = r.json().path("execution_id").asText();
    for (int n = 1; n <= 3; n++) {
      answer(awaitRequests(appId, n).get(n - 1), error());
    }
    JsonNode letters = null;
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      letters =
          fe.call("GET", "/api/v1/apps/hello/dead-letters", key, null).json().path("dead_letters");
      if (letters.size() > 0) {
        break;
      }
      Thread.sleep(20);
    }
    assertEquals(1, letters.size(), String.valueOf(letters));
    JsonNode d = letters.get(0);
    assertEquals(3, d.path("attempts").asInt());
    assertEquals(first, d.path("executions").get(0).asText());
    assertEquals(7, d.path("event").path("n").asInt());
    assertEquals("ValueError", d.path("error").path("type").asText());
    Thread.sleep(300);
    assertEquals(3, requests(appId).size(), "no fourth attempt");
    assertEquals(
        404,
        fe.call("GET", "/api/v1/apps/hello/dead-letters", fe.signUp("bob"), null)
            .status());
  }

  @Test
  void aRetriedEventThatSucceedsIsNotDeadLettered() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId =
        fe.deployHello(key, "hello", "{\"retry\": {\"attempts\": 3, \"backoff_s\": 0.05}}");
    assertEquals(202, fe.call("POST", "/app/hello?async=1", null, "{}").status());
    answer(awaitRequests(appId, 1).get(0), error());
    answer(awaitRequests(appId, 2).get(1), Json.object().put("ok", true));
    Thread.sleep(300);
    assertEquals(2, requests(appId).size());
    assertEquals(
        0,
        fe.call("GET", "/api/v1/apps/hello/dead-letters", key, null)
            .json()
            .path("dead_letters")
            .size());
  }

  @Test
  void aRepeatedIdempotencyKeyRunsNothing() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    var first = fe.http.sendAsync(
        java.net.http.HttpRequest.newBuilder(fe.uri("/app/hello"))
            .header("Idempotency-Key", "order-17")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"n\": 1}"))
            .build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    answer(awaitRequests(appId, 1).get(0), Json.object().put("done", 1));
    assertEquals(200, first.get().statusCode(), first.get().body());
    var again = fe.http.send(
        java.net.http.HttpRequest.newBuilder(fe.uri("/app/hello"))
            .header("Idempotency-Key", "order-17")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"n\": 1}"))
            .build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, again.statusCode(), again.body());
    assertEquals("true", again.headers().firstValue("Idempotent-Replayed").orElse(""));
    assertEquals(
        first.get().headers().firstValue("X-Sand-Execution-Id"),
        again.headers().firstValue("X-Sand-Execution-Id"));
    assertEquals(1, requests(appId).size(), "the repeat ran nothing");
    var other = fe.http.send(
        java.net.http.HttpRequest.newBuilder(fe.uri("/app/hello"))
            .header("Idempotency-Key", "order-17")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"n\": 2}"))
            .build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(422, other.statusCode(), other.body());
  }

  /**
   * A record whose event could not be sent (its host went away as it was sent: the cluster run's lost record) ran
   * nothing: its offset is not committed, and read again it runs, its key not taken for a duplicate.
   */
  @Test
  void aQueueRecordWhoseEventCouldNotBeSentIsReadAgainAndRun() throws Exception {
    fe = new TestFrontend(Map.of(), false, Map.of(), true);
    String key = fe.signUp("alice");
    String appId = fe.deployHelloCompletingSends(key, "hello");
    MockConsumer<String, byte[]> records = oneRecord(key);
    awaitRequests(appId, 1);
    assertTrue(fe.producer.errorNext(new TimeoutException("the host went away")));
    JsonNode again = awaitRequests(appId, 2).get(1);
    JsonNode event = again.path("value");
    assertEquals(15, event.path("value").path("order").asInt(), again.toString());
    assertEquals("kafka:orders:0:0", event.path("idempotency_key").asText());
    assertEquals(
        "queue:in@fe-test", again.path("trace").get(0).get(1).asText(), "read again, not retried");
    assertTrue(fe.producer.completeNext());
    answer(again, Json.object().put("done", 15));
    OffsetAndMetadata committed = awaitCommitted(records);
    assertEquals(1, committed == null ? -1 : committed.offset(), "committed once it had run");
    assertEquals(2, requests(appId).size(), "sent twice, run once");
  }

  /**
   * Another frontend ran a record's first attempt, which failed, and died before its retry: the record read again
   * here is not taken for a duplicate of the failure; after the backoff and a grace, the next attempt runs here.
   */
  @Test
  void aRecordWhoseFrontendDiedBetweenAttemptsGoesOnHere() throws Exception {
    fe = new TestFrontend(Map.of(), true, Map.of(), true);
    String key = fe.signUp("alice");
    String appId =
        fe.deployHello(key, "hello", "{\"retry\": {\"attempts\": 3, \"backoff_s\": 0.05}}");
    String k = "kafka:orders:0:0";
    Instant t = Instant.now();
    fe.store.startExecution(
        new FrontendTables.ExecutionRecord(
            "e-dead-1", appId, "alice", "running", null, null, t, null, "fe-dead", null),
        Duration.ofHours(1));
    fe.store.endExecution(
        "e-dead-1", "failed", null, "{\"type\":\"ValueError\"}", t, null, 5, Duration.ofHours(1));
    assertTrue(fe.store
        .triggers()
        .claimKey(appId, k, new TriggerTables.KeyClaim("e-dead-1", "sha", 1), Duration.ofHours(1))
        .isEmpty());
    MockConsumer<String, byte[]> records = oneRecord(key);
    JsonNode second = awaitRequests(appId, 1).get(0);
    assertEquals("queue:in#2@fe-test", second.path("trace").get(0).get(1).asText());
    var claim = fe.store.triggers().readKey(appId, k).orElseThrow();
    assertEquals(2, claim.attempt());
    assertEquals(second.path("execution_id").asText(), claim.executionId());
    answer(second, Json.object().put("done", 15));
    OffsetAndMetadata committed = awaitCommitted(records);
    assertEquals(1, committed == null ? -1 : committed.offset());
    assertEquals(1, requests(appId).size());
  }

  private static final TopicPartition ORDERS = new TopicPartition("orders", 0);

  /** A queue trigger on "orders", its consumer given the one partition holding one record, {"order": 15}. */
  private MockConsumer<String, byte[]> oneRecord(String key) throws Exception {
    var put = fe.call(
        "PUT",
        "/api/v1/apps/hello/triggers/in",
        key,
        "{\"topic\": \"orders\", \"start\": \"earliest\"}");
    assertEquals(201, put.status(), put.body());
    MockConsumer<String, byte[]> records = fe.triggerTopics.await();
    records.schedulePollTask(() -> {
      records.rebalance(List.of(ORDERS));
      records.updateBeginningOffsets(Map.of(ORDERS, 0L));
      records.addRecord(new ConsumerRecord<>("orders", 0, 0L, "k", "{\"order\": 15}".getBytes()));
    });
    return records;
  }

  /** The offset committed for the topic's partition (up to 10 s), or null. */
  private static OffsetAndMetadata awaitCommitted(MockConsumer<String, byte[]> records)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    OffsetAndMetadata committed = null;
    while (committed == null && System.nanoTime() < deadline) {
      committed = records.committed(Set.of(ORDERS)).get(ORDERS);
      Thread.sleep(20);
    }
    return committed;
  }

  @Test
  void badTriggersAreRefusedWithTheRule() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    fe.deployHello(key, "hello", null);
    String[][] cases = {
      {"{\"cron\": \"* * *\"}", "400", "5 fields"},
      {"{\"every\": \"100ms\"}", "400", "between 1s and 7d"},
      {"{\"topic\": \"__consumer_offsets\"}", "400", "SAND's or Kafka's own"},
      {"{\"topic\": \"events.x\"}", "503", "no Kafka"}, // this frontend was given none
      {"[]", "400", "JSON object"},
      {
        "{\"every\": \"1m\", \"grain\": \"nope\"}",
        "400",
        "no grain 'nope'; its grains: [greet, shout]"
      },
      {"{\"every\": \"1m\", \"grain\": \"no spaces\"}", "400", "not a grain's name"},
    };
    for (String[] c : cases) {
      var r = fe.call("PUT", "/api/v1/apps/hello/triggers/t", key, c[0]);
      assertEquals(Integer.parseInt(c[1]), r.status(), c[0] + ": " + r.body());
      assertTrue(r.body().contains(c[2]), c[0] + ": " + r.body());
    }
    var bad = fe.call("PUT", "/api/v1/apps/hello/triggers/no%20spaces", key, "{\"every\": \"1m\"}");
    assertEquals(400, bad.status(), bad.body());
    for (int i = 0; i < 16; i++) {
      assertEquals(
          201,
          fe.call("PUT", "/api/v1/apps/hello/triggers/t" + i, key, "{\"cron\": \"0 0 1 1 *\"}")
              .status());
    }
    var over = fe.call("PUT", "/api/v1/apps/hello/triggers/t16", key, "{\"cron\": \"0 0 1 1 *\"}");
    assertEquals(400, over.status());
    assertTrue(over.body().contains("at most 16"), over.body());
  }
}
