package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.BucketTables.FiredEvent;
import sand.contracts.Event;
import sand.contracts.ExecutionTag;
import sand.contracts.Trace;
import sand.frontend.internal.Json;

/**
 * Retries and dead letters of data-triggered executions on one frontend (in-memory cluster store, MockProducer): a
 * host agent's failed first execution ends here unawaited and is run again per settings.retry, then dead-lettered
 * with source bucket:&lt;bucket&gt; (tests/e2e/test_data_triggers_e2e.py runs it on the real system).
 */
class BucketRetriesTest {
  private static final String INPUT =
      "{\"trigger_type\":\"storage\",\"key\":\"cat.jpg\",\"value\":\"{}\",\"source\":\"photos\"}";
  private TestFrontend fe;

  @AfterEach
  void stop() throws Exception {
    if (fe != null) {
      fe.close();
    }
  }

  /** The end of a first execution that the host agent h1 started for a write to bucket photos. */
  private void hostAgentEnd(String appId, String executionId, JsonNode value) {
    String tag = new ExecutionTag(fe.store.clusterSecret()).of(appId, executionId, "fe-test");
    Event e = Event.request(
            "ev-" + executionId, executionId, appId, "end", "fe-test", value, 1, tag)
        .trace(Trace.TRIGGER, "bucket:photos@h1", 1);
    e.json().put("from", "shout");
    fe.respond(executionId, e.json());
  }

  private List<JsonNode> requests(String appId) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (ProducerRecord<String, byte[]> r : fe.sent("sand." + appId + ".greet")) {
      out.add(Json.MAPPER.readTree(r.value()).path("event"));
    }
    return out;
  }

  private JsonNode awaitRequest(String appId, int n) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (System.nanoTime() < deadline) {
      List<JsonNode> r = requests(appId);
      if (r.size() >= n) {
        return r.get(n - 1);
      }
      Thread.sleep(5);
    }
    throw new AssertionError("fewer than " + n + " retries: " + requests(appId).size());
  }

  private void answer(JsonNode request, JsonNode value) {
    ObjectNode result = ((ObjectNode) request).deepCopy().put("grain", "end").put("from", "shout");
    result.set("value", value);
    fe.respond(request.path("execution_id").asText(), result);
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static JsonNode error() {
    return Json.object()
        .set(
            "error",
            Json.object().put("type", "ValueError").put("message", "no").put("grain", "shout"));
  }

  private JsonNode awaitDeadLetters(String key, int n) throws Exception {
    JsonNode letters = null;
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (System.nanoTime() < deadline) {
      letters =
          fe.call("GET", "/api/v1/apps/hello/dead-letters", key, null).json().path("dead_letters");
      if (letters.size() >= n) {
        break;
      }
      Thread.sleep(20);
    }
    return letters;
  }

  private String deployWithFiredEvent(String key, String retry, String first) throws Exception {
    String appId = fe.deployHello(key, "hello", retry);
    fe.store
        .buckets()
        .putFiredEvent(new FiredEvent(first, appId, "hello", "photos", INPUT), Duration.ofDays(1));
    return appId;
  }

  @Test
  void aFailingTriggeredExecutionRunsItsAttemptsWithBackoffThenIsDeadLettered() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = deployWithFiredEvent(
        key, "{\"retry\": {\"attempts\": 3, \"backoff_s\": 0.2, \"max_backoff_s\": 0.3}}", "e1");
    long t0 = System.nanoTime();
    hostAgentEnd(appId, "e1", error());
    JsonNode second = awaitRequest(appId, 1);
    long t1 = System.nanoTime();
    assertTrue(t1 - t0 >= 200_000_000L, "attempt 2 came before backoff_s: " + (t1 - t0));
    assertEquals(INPUT, second.path("value").toString());
    assertEquals("bucket:photos#2@fe-test", second.path("trace").get(0).get(1).asText());
    answer(second, error());
    JsonNode third = awaitRequest(appId, 2);
    long t2 = System.nanoTime();
    // backoff_s * 2 = 0.4 s, bounded by max_backoff_s 0.3 s
    assertTrue(t2 - t1 >= 300_000_000L, "attempt 3 came before max_backoff_s: " + (t2 - t1));
    answer(third, error());
    JsonNode letters = awaitDeadLetters(key, 1);
    assertEquals(1, letters.size(), String.valueOf(letters));
    JsonNode d = letters.get(0);
    assertEquals("bucket:photos", d.path("source").asText());
    assertEquals(3, d.path("attempts").asInt());
    assertEquals(
        List.of(
            "e1",
            second.path("execution_id").asText(),
            third.path("execution_id").asText()),
        texts(d.path("executions")));
    assertEquals(INPUT, d.path("event").toString());
    assertEquals("ValueError", d.path("error").path("type").asText());
    Thread.sleep(500);
    assertEquals(2, requests(appId).size(), "no fourth attempt");
  }

  @Test
  void aTriggeredExecutionThatSucceedsOnARetryIsNotDeadLettered() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId =
        deployWithFiredEvent(key, "{\"retry\": {\"attempts\": 3, \"backoff_s\": 0.05}}", "e2");
    hostAgentEnd(appId, "e2", error());
    answer(awaitRequest(appId, 1), Json.object().put("ok", true));
    Thread.sleep(500);
    assertEquals(1, requests(appId).size());
    assertEquals(0, awaitDeadLetters(key, 0).size());
  }

  @Test
  void aSucceededOrRetriedEndStartsNothing() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId =
        deployWithFiredEvent(key, "{\"retry\": {\"attempts\": 3, \"backoff_s\": 0.05}}", "e3");
    hostAgentEnd(appId, "e3", Json.object().put("ok", true));
    hostAgentEnd(
        appId, "e3", error()); // the same execution again (a duplicate): its first end counts
    Thread.sleep(500);
    assertEquals(0, requests(appId).size());
    assertEquals(0, awaitDeadLetters(key, 0).size());
  }

  @Test
  void oneAttemptIsDeadLetteredAtOnce() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = deployWithFiredEvent(key, "{\"retry\": {\"attempts\": 1}}", "e4");
    hostAgentEnd(appId, "e4", error());
    JsonNode letters = awaitDeadLetters(key, 1);
    assertEquals(1, letters.size(), String.valueOf(letters));
    assertEquals(1, letters.get(0).path("attempts").asInt());
    assertEquals("e4", letters.get(0).path("executions").get(0).asText());
    assertEquals(0, requests(appId).size());
  }

  @Test
  void aPoisonEndIsDeadLetteredAtOnceNeverRunAgain() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = deployWithFiredEvent(key, "{\"retry\": {\"attempts\": 3}}", "e6");
    hostAgentEnd(
        appId,
        "e6",
        Json.object()
            .set(
                "error",
                Json.object()
                    .put("type", Event.ERROR_POISON)
                    .put("message", "poison event: not run again")
                    .put("grain", "greet")));
    JsonNode letters = awaitDeadLetters(key, 1);
    assertEquals(1, letters.size(), String.valueOf(letters));
    assertEquals(1, letters.get(0).path("attempts").asInt());
    assertEquals(INPUT, letters.get(0).path("event").toString());
    Thread.sleep(300);
    assertEquals(0, requests(appId).size(), "a poison event is not run again");
  }

  @Test
  void aFailureWhoseEventIsGoneIsDeadLetteredWithoutIt() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", "{\"retry\": {\"attempts\": 3}}");
    hostAgentEnd(appId, "e5", error()); // no FiredEvent: it was never written, or expired
    JsonNode letters = awaitDeadLetters(key, 1);
    assertEquals(1, letters.size(), String.valueOf(letters));
    assertEquals("bucket:photos", letters.get(0).path("source").asText());
    assertTrue(letters.get(0).path("event").isNull(), String.valueOf(letters));
    assertEquals(0, requests(appId).size());
  }
}
