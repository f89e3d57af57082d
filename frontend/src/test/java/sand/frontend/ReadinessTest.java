package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 31: a frontend results could not reach (Kafka silent for it, no gate connected) said "ok" and took every
 * request nginx gave it, to answer 504 after the caller's timeout. Now it is not ready: GET /readyz says why, and an
 * invocation has its connection closed unanswered (nginx sends it to another frontend), until Kafka answers again.
 */
class ReadinessTest {
  private static final String ADMIN = "admin-key-0123456789";
  private TestFrontend fe;
  private String alice;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend(
        Map.of(FrontendSettings.READY_RESULTS_SILENCE_MS, "1000", "admin.key", ADMIN), true);
    alice = fe.signUp("alice");
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private TestFrontend.Answer readyz() throws Exception {
    return fe.call("GET", "/readyz", null, null);
  }

  private TestFrontend.Answer untilReadyz(int status) throws Exception {
    long deadline = System.nanoTime() + 15_000_000_000L;
    TestFrontend.Answer a = readyz();
    while (a.status() != status && System.nanoTime() < deadline) {
      Thread.sleep(100);
      a = readyz();
    }
    return a;
  }

  @Test
  void aFrontendKafkaDoesNotAnswerDeclinesInvocationsAndComesBackWithoutARestart()
      throws Exception {
    TestFrontend.Answer ready = readyz();
    assertEquals(200, ready.status(), ready.body());
    assertEquals("ready", ready.json().path("status").asText());
    assertEquals(
        404, fe.call("POST", "/app/none", null, "{}").status(), "an invocation is answered");

    fe.consumer.away.set(true);
    TestFrontend.Answer away = untilReadyz(503);
    assertEquals(503, away.status(), away.body());
    assertEquals("not ready", away.json().path("status").asText());
    assertEquals(false, away.json().path("checks").path("response_topic_polled").asBoolean(true));
    assertEquals(0, away.json().path("checks").path("gates_connected").asInt(-1));
    assertThrows(
        IOException.class,
        () -> fe.call("POST", "/app/none", null, "{}"),
        "the connection is closed unanswered: nginx takes the request to another frontend");
    // what needs no results is still served
    assertEquals(200, fe.call("GET", "/healthz", null, null).status());
    assertEquals(200, fe.call("GET", "/api/v1/apps", alice, null).status());
    String metrics = fe.call("GET", "/metrics", ADMIN, null).body();
    assertTrue(metrics.contains("sand_frontend_ready{frontend=\"fe-test\"} 0.0"), metrics);

    fe.consumer.away.set(false);
    TestFrontend.Answer back = untilReadyz(200);
    assertEquals(200, back.status(), back.body());
    assertEquals(404, fe.call("POST", "/app/none", null, "{}").status(), "answered again");
  }
}
