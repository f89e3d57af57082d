package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import sand.cluster.HostAgentTables.LogLine;
import sand.common.log.LogIdentity;
import sand.frontend.internal.Json;
import sand.frontend.invoke.InvokeHandler;

/** End users' requests: the record put into Kafka, the answer from the response topic, and the errors. */
class InvokeTest {
  private TestFrontend fe;

  @AfterEach
  void stop() throws Exception {
    if (fe != null) {
      fe.close();
    }
  }

  private String topic(String appId) {
    return "sand." + appId + ".greet";
  }

  /** Wait for the n-th request on the entry grain's topic and return its event envelope. */
  private JsonNode awaitRequest(String appId, int n) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      List<ProducerRecord<String, byte[]>> sent = fe.sent(topic(appId));
      if (sent.size() >= n) {
        ProducerRecord<String, byte[]> r = sent.get(n - 1);
        JsonNode v = Json.MAPPER.readTree(r.value());
        assertEquals("new", v.path("flag").asText());
        assertEquals(r.key(), v.path("event").path("id").asText(), "key = event id");
        return v.path("event");
      }
      Thread.sleep(10);
    }
    throw new AssertionError("no request reached " + topic(appId));
  }

  private void answer(JsonNode request, JsonNode value) {
    ObjectNode result = ((ObjectNode) request).deepCopy().put("grain", "end").put("from", "shout");
    result.set("value", value);
    fe.respond(request.path("execution_id").asText(), result);
  }

  @Test
  void syncRequestGetsTheWorkflowOutput() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    CompletableFuture<TestFrontend.Answer> call =
        fe.callAsync("POST", "/app/hello", null, "{\"name\":\"sand\"}");
    JsonNode req = awaitRequest(appId, 1);
    assertEquals(appId, req.path("app").asText());
    assertEquals("greet", req.path("grain").asText());
    assertEquals("", req.path("from").asText());
    assertEquals("fe-test", req.path("frontend").asText());
    assertEquals("sand", req.path("value").path("name").asText());
    assertEquals(32, req.path("tag").asText().length(), "the request carries its execution tag");
    // Results that do not prove they belong to this execution of this application are dropped:
    ObjectNode otherApp = ((ObjectNode) req).deepCopy().put("app", "a000000000000");
    ObjectNode untagged = ((ObjectNode) req).deepCopy();
    untagged.remove("tag");
    for (ObjectNode forged : List.of(otherApp, untagged)) {
      forged.put("grain", "end").set("value", Json.object().put("greeting", "forged"));
      fe.respond(req.path("execution_id").asText(), forged);
    }
    answer(req, Json.object().put("greeting", "HELLO, SAND!"));
    answer(req, Json.object().put("greeting", "a later duplicate is ignored"));
    TestFrontend.Answer a = call.get();
    assertEquals(200, a.status(), a.body());
    assertEquals("HELLO, SAND!", a.json().path("greeting").asText());
    String executionId =
        a.raw().headers().firstValue(InvokeHandler.EXECUTION_HEADER).orElseThrow();
    assertEquals(req.path("execution_id").asText(), executionId);

    // The execution is recorded asynchronously: wait (bounded) until it is, then give the duplicate
    // time to arrive; it must not replace the first result.
    JsonNode e = fe.call("GET", "/api/v1/executions/" + executionId, key, null).json();
    for (long end = System.nanoTime() + 10_000_000_000L;
        !e.path("status").asText().equals("succeeded") && System.nanoTime() < end; ) {
      Thread.sleep(20);
      e = fe.call("GET", "/api/v1/executions/" + executionId, key, null).json();
    }
    Thread.sleep(200);
    e = fe.call("GET", "/api/v1/executions/" + executionId, key, null).json();
    assertEquals("succeeded", e.path("status").asText());
    assertEquals("HELLO, SAND!", e.path("result").path("greeting").asText());
    assertTrue(e.path("timings").has("duration_ms"));
    JsonNode hops = e.path("timings").path("hops");
    assertEquals("frontend: request received", hops.get(0).path("step").asText(), hops.toString());
    assertEquals(
        "frontend: result received", hops.get(hops.size() - 2).path("step").asText());
    assertEquals("frontend: reply sent", hops.get(hops.size() - 1).path("step").asText());
    assertTrue(
        hops.get(hops.size() - 1).path("at_ms").asDouble() > 0, "times from the request's receipt");
    assertTrue(e.path("instances").isArray(), "a row per grain instance (Trace.instances)");

    fe.store.appendLogs(
        List.of(new LogLine(executionId, 5, 0, "greet", "INFO", "greeting sand")),
        Duration.ofDays(1));
    JsonNode logs =
        fe.call("GET", "/api/v1/executions/" + executionId + "/logs", key, null).json();
    assertEquals("greeting sand", logs.path("logs").get(0).path("text").asText());
    String bob = fe.signUp("bob");
    assertEquals(
        404, fe.call("GET", "/api/v1/executions/" + executionId, bob, null).status());
    assertEquals(
        404,
        fe.call("GET", "/api/v1/executions/" + executionId + "/logs", bob, null).status());
    assertEquals(404, fe.call("GET", "/api/v1/executions/nope", key, null).status());
  }

  @Test
  void theRequestThreadsLogLinesCarryTheApplicationAndExecution() throws Exception {
    // docs/operations.md "Logs": what the request thread logs is tagged (MDC app, exec) for
    // SandLayout.
    Logger logger = (Logger) LoggerFactory.getLogger(InvokeHandler.class);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    Level before = logger.getLevel();
    logger.setLevel(Level.DEBUG);
    logger.addAppender(seen);
    try {
      fe = new TestFrontend();
      String key = fe.signUp("alice");
      String appId = fe.deployHello(key, "hello", null);
      CompletableFuture<TestFrontend.Answer> call =
          fe.callAsync("POST", "/app/hello", null, "{\"name\":\"sand\"}");
      JsonNode req = awaitRequest(appId, 1);
      answer(req, Json.object().put("greeting", "HELLO, SAND!"));
      assertEquals(200, call.get().status());
      ILoggingEvent sent = seen.list.stream()
          .filter(e -> e.getFormattedMessage().contains("sent to greet"))
          .findFirst()
          .orElseThrow(() -> new AssertionError("no 'sent to' line: " + seen.list));
      assertEquals(appId, sent.getMDCPropertyMap().get(LogIdentity.APP));
      assertEquals(
          req.path("execution_id").asText(), sent.getMDCPropertyMap().get(LogIdentity.EXEC));
    } finally {
      logger.detachAppender(seen);
      logger.setLevel(before);
    }
    assertEquals(null, MDC.get(LogIdentity.APP), "the test thread is not tagged");
  }

  @Test
  void aGrainErrorIs500WithTheErrorEvent() throws Exception {
    fe = new TestFrontend();
    String appId = fe.deployHello(fe.signUp("alice"), "hello", null);
    CompletableFuture<TestFrontend.Answer> call = fe.callAsync("POST", "/app/hello", null, "{}");
    JsonNode req = awaitRequest(appId, 1);
    ObjectNode err = Json.object();
    err.putObject("error")
        .put("type", "KeyError")
        .put("message", "'greeting'")
        .put("grain", "shout");
    answer(req, err);
    TestFrontend.Answer a = call.get();
    assertEquals(500, a.status(), a.body());
    assertEquals("KeyError", a.json().path("error").path("type").asText());
    assertTrue(a.raw().headers().firstValue(InvokeHandler.EXECUTION_HEADER).isPresent());
  }

  @Test
  void asyncAnswers202AndTheResultIsStored() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    TestFrontend.Answer a = fe.call("POST", "/app/hello?async=1", null, "{\"name\":\"x\"}");
    assertEquals(202, a.status(), a.body());
    String id = a.json().path("execution_id").asText();
    assertEquals(
        "running",
        fe.call("GET", "/api/v1/executions/" + id, key, null)
            .json()
            .path("status")
            .asText());
    answer(awaitRequest(appId, 1), Json.object().put("ok", true));
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    JsonNode e;
    do {
      Thread.sleep(20);
      e = fe.call("GET", "/api/v1/executions/" + id, key, null).json();
    } while (!e.path("status").asText().equals("succeeded") && System.nanoTime() < deadline);
    assertEquals("succeeded", e.path("status").asText());
    assertTrue(e.path("result").path("ok").asBoolean());
  }

  @Test
  void anAsyncExecutionIsFoundRightAfterIts202EvenWhenItsStartIsSlowToWrite() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    fe.deployHello(key, "hello", null);
    fe.startWriteMs.set(300); // without waiting for the write, the GET below is a 404
    String id = fe.call("POST", "/app/hello?async=1", null, "{}")
        .json()
        .path("execution_id")
        .asText();
    TestFrontend.Answer mine = fe.call("GET", "/api/v1/executions/" + id, key, null);
    assertEquals(200, mine.status(), mine.body());
    assertEquals("running", mine.json().path("status").asText());
    assertEquals(202, fe.call("GET", "/app/hello/executions/" + id, null, null).status());
  }

  /** GET {@code path} (no key) until its status is not 202, bounded. */
  private TestFrontend.Answer awaitEnd(String path) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    TestFrontend.Answer a;
    do {
      Thread.sleep(20);
      a = fe.call("GET", path, null, null);
    } while (a.status() == 202 && System.nanoTime() < deadline);
    return a;
  }

  @Test
  void anEndUserFetchesAnAsyncResultWithNoKeyByItsExecutionId() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    String appId = fe.deployHello(key, "hello", null);
    fe.deployHello(key, "other", null);
    String id = fe.call("POST", "/app/hello?async=1", null, "{\"name\":\"x\"}")
        .json()
        .path("execution_id")
        .asText();
    TestFrontend.Answer running = fe.call("GET", "/app/hello/executions/" + id, null, null);
    assertEquals(202, running.status(), running.body());
    assertEquals("running", running.json().path("status").asText());
    answer(awaitRequest(appId, 1), Json.object().put("ok", true));
    TestFrontend.Answer done = awaitEnd("/app/hello/executions/" + id);
    assertEquals(200, done.status(), done.body());
    assertEquals(
        Json.object().put("ok", true), done.json(), "the body the synchronous call answers");
    assertEquals(
        id, done.raw().headers().firstValue(InvokeHandler.EXECUTION_HEADER).orElse(""));
    // The id is a capability for its application only; an unknown id or application is a 404 in the
    // API's JSON.
    for (String path : List.of(
        "/app/other/executions/" + id,
        "/app/hello/executions/" + "0".repeat(32),
        "/app/nope/executions/" + id)) {
      TestFrontend.Answer a = fe.call("GET", path, null, null);
      assertEquals(404, a.status(), path + ": " + a.body());
      assertEquals("not_found", a.json().path("error").path("code").asText(), a.body());
    }
  }

  @Test
  void anEndUserFetchingAFailedAsyncExecutionGetsTheErrorEventAs500() throws Exception {
    fe = new TestFrontend();
    String appId = fe.deployHello(fe.signUp("alice"), "hello", null);
    String id = fe.call("POST", "/app/hello?async=1", null, "{}")
        .json()
        .path("execution_id")
        .asText();
    ObjectNode err = Json.object();
    err.putObject("error")
        .put("type", "KeyError")
        .put("message", "'greeting'")
        .put("grain", "shout");
    answer(awaitRequest(appId, 1), err);
    TestFrontend.Answer a = awaitEnd("/app/hello/executions/" + id);
    assertEquals(500, a.status(), a.body());
    assertEquals(err, a.json());
  }

  @Test
  void noResultInTimeIs504WithTheExecutionId() throws Exception {
    fe = new TestFrontend();
    String key = fe.signUp("alice");
    fe.deployHello(key, "hello", "{\"request_timeout_s\":1}");
    TestFrontend.Answer a = fe.call("POST", "/app/hello", null, "{}");
    assertEquals(504, a.status(), a.body());
    assertEquals("timeout", a.json().path("error").path("code").asText());
    String id = a.json().path("error").path("execution_id").asText();
    assertEquals(
        "timeout",
        fe.call("GET", "/api/v1/executions/" + id, key, null)
            .json()
            .path("status")
            .asText());
  }

  @Test
  void kafkaRefusingTheRequestIs502() throws Exception {
    fe = new TestFrontend(Map.of(), false);
    String key = fe.signUp("alice");
    fe.deployHelloCompletingSends(key, "hello");
    CompletableFuture<TestFrontend.Answer> call = fe.callAsync("POST", "/app/hello", null, "{}");
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!fe.producer.errorNext(new TimeoutException("broker away"))) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no request was sent");
      }
      Thread.sleep(10);
    }
    TestFrontend.Answer a = call.get();
    assertEquals(502, a.status(), a.body());
    assertEquals("unavailable", a.json().path("error").path("code").asText());
  }

  @Test
  void concurrencyAboveTheAccountLimitIs429() throws Exception {
    fe = new TestFrontend(Map.of("max.concurrent.per.account", "1"), true);
    String appId = fe.deployHello(fe.signUp("alice"), "hello", null);
    CompletableFuture<TestFrontend.Answer> first = fe.callAsync("POST", "/app/hello", null, "{}");
    JsonNode req = awaitRequest(appId, 1);
    TestFrontend.Answer second = fe.call("POST", "/app/hello", null, "{}");
    assertEquals(429, second.status(), second.body());
    answer(req, Json.object());
    assertEquals(200, first.get().status());
    CompletableFuture<TestFrontend.Answer> third = fe.callAsync("POST", "/app/hello", null, "{}");
    answer(awaitRequest(appId, 2), Json.object());
    assertEquals(200, third.get().status(), "the slot is free again");
  }

  @Test
  void requestsAboveTheAccountsRateQuotaAre429() throws Exception {
    fe = new TestFrontend(Map.of("quota.requests.per.second", "1"), true);
    fe.deployHello(fe.signUp("alice"), "hello", null);
    fe.call("POST", "/app/hello?async=1", null, "{}"); // the second's one request
    TestFrontend.Answer second = fe.call("POST", "/app/hello?async=1", null, "{}");
    assertEquals(429, second.status(), second.body());
    assertTrue(second.body().contains("above its rate of 1 requests per second"), second.body());
  }

  @Test
  void theAccountLimitIsTheClustersEachLiveFrontendAdmittingItsShare() {
    assertEquals(64, InvokeHandler.share(64, 1));
    assertEquals(32, InvokeHandler.share(64, 2));
    assertEquals(
        22,
        InvokeHandler.share(64, 3),
        "rounded up: the cluster admits at most 2 more than the limit");
    assertEquals(1, InvokeHandler.share(1, 5), "never 0");
    assertEquals(64, InvokeHandler.share(64, 0), "no heartbeat read yet: this frontend alone");
  }

  @Test
  void requestErrors() throws Exception {
    fe = new TestFrontend(Map.of("max.body.bytes", "1024"), true);
    String key = fe.signUp("alice");
    assertEquals(404, fe.call("POST", "/app/nope", null, "{}").status());
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/idle", key, TestFrontend.HELLO).status());
    assertEquals(409, fe.call("POST", "/app/idle", null, "{}").status());
    fe.deployHello(key, "hello", null);
    assertEquals(400, fe.call("POST", "/app/hello", null, "{broken").status());
    assertEquals(
        413, fe.call("POST", "/app/hello", null, "[" + "1,".repeat(1000) + "1]").status());
  }
}
