package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.BodyBudget;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Throttle;
import sand.frontend.knix.KnixLogins;
import sand.frontend.knix.KnixManagement;
import sand.frontend.knix.KnixStorage;

/** What a stranger can make a frontend hold or do (issue 26, findings 6, 8, 9, 12): each is bounded. */
class FrontendLimitsTest {

  @Test
  void aBodyThatDoesNotFitTheBudgetAnswers503AtOnceAndTheNextOneFits() throws Exception {
    try (TestFrontend fe = new TestFrontend(Map.of("body.budget.bytes", "2048"), true)) {
      String pad = "x".repeat(3000);
      var r =
          fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"big\",\"pad\":\"" + pad + "\"}");
      assertEquals(503, r.status(), r.body());
      assertEquals("busy", r.json().path("error").path("code").asText());
      assertTrue(r.body().contains("body.budget.bytes"), r.body());
      assertEquals("1", r.raw().headers().firstValue("Retry-After").orElse(""));
      var ok = fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"small\"}");
      assertEquals(201, ok.status(), ok.body()); // the budget was given back, not leaked
      assertEquals(
          201,
          fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"small2\"}").status());
    }
  }

  @Test
  void routesThatTakeAFewFieldsRefuseLargeBodies() throws Exception {
    try (TestFrontend fe = new TestFrontend()) {
      String pad = "x".repeat((int) Frontend.SMALL_BODY_BYTES);
      var r = fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"a\",\"pad\":\"" + pad + "\"}");
      assertEquals(413, r.status(), r.body());
      assertTrue(r.body().contains("limit of " + Frontend.SMALL_BODY_BYTES), r.body());
    }
  }

  @Test
  void budgetCountsAndRefuses() {
    BodyBudget b = new BodyBudget(100);
    assertTrue(b.tryTake(60));
    assertTrue(!b.tryTake(41));
    assertTrue(b.tryTake(40));
    b.give(60);
    assertEquals(40, b.used());
    assertEquals(1, b.refused());
  }

  @Test
  void aThrottleRefillsPerMinuteAndSaysWhenToComeBack() {
    AtomicLong now = new AtomicLong();
    Throttle t = new Throttle("logins", "login.x", 2, now::get);
    t.take("a");
    t.take("a");
    ApiException e = assertThrows(ApiException.class, () -> t.take("a"));
    assertEquals(429, e.status());
    assertEquals("30", e.extra().get(Reply.RETRY_AFTER_S));
    t.take("b"); // another key has its own
    now.addAndGet(30_000_000_000L);
    t.take("a");
    assertEquals(1, t.refused());
  }

  @Test
  void signUpsPerAddressAre429WithRetryAfter() throws Exception {
    try (TestFrontend fe = new TestFrontend(Map.of("signup.per.address.per.minute", "3"), true)) {
      for (int i = 0; i < 3; i++) {
        assertEquals(
            201,
            fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"s" + i + "\"}")
                .status());
      }
      var r = fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"s3\"}");
      assertEquals(429, r.status(), r.body());
      assertTrue(r.raw().headers().firstValue("Retry-After").isPresent());
      assertTrue(r.body().contains("signup.per.address.per.minute"), r.body());
    }
  }

  private static TestFrontend.Answer knix(TestFrontend fe, String action, ObjectNode data)
      throws Exception {
    ObjectNode body = Json.object().put("action", action);
    body.set("data", data);
    return fe.call("POST", "/management", null, Json.text(body));
  }

  private static ObjectNode user(String email, String password) {
    ObjectNode d = Json.object();
    d.putObject("user").put("email", email).put("password", password);
    return d;
  }

  @Test
  void knixLoginsAreLimitedPerEmailAndAnUnknownEmailCostsAHashToo() throws Exception {
    try (TestFrontend fe = new TestFrontend(Map.of("login.per.email.per.minute", "3"), true)) {
      assertEquals(
          "success",
          knix(fe, "signUp", user("a@example.com", "pw")).json().path("status").asText());
      // the first unknown e-mail makes the decoy record; from then on each unknown one costs one
      // derivation
      knix(fe, "logIn", user("nobody0@example.com", "pw"));
      long before = KnixLogins.derivations();
      JsonNode r = knix(fe, "logIn", user("nobody@example.com", "pw")).json();
      assertEquals("failure", r.path("status").asText(), r.toString());
      assertEquals(
          before + 1,
          KnixLogins.derivations(),
          "an unknown e-mail's password is derived like a known one's");
      String wrong = knix(fe, "logIn", user("a@example.com", "wrong"))
          .json()
          .path("data")
          .path("message")
          .asText();
      assertEquals(
          r.path("data").path("message").asText(),
          wrong,
          "unknown e-mail and wrong password: one answer");
      assertEquals(
          "success",
          knix(fe, "logIn", user("a@example.com", "pw")).json().path("status").asText());
      knix(fe, "logIn", user("a@example.com", "wrong"));
      var refused = knix(fe, "logIn", user("a@example.com", "pw"));
      assertEquals(429, refused.status(), refused.body());
      assertTrue(refused.raw().headers().firstValue("Retry-After").isPresent());
      assertTrue(refused.body().contains("login.per.email.per.minute"), refused.body());
    }
  }

  @Test
  void knixStorageStopsAtTheAccountsQuota() throws Exception {
    try (TestFrontend fe =
        new TestFrontend(Map.of("knix.storage.bytes.per.account", "1000"), true)) {
      assertEquals(
          "success",
          knix(fe, "signUp", user("q@example.com", "pw")).json().path("status").asText());
      String token = knix(fe, "logIn", user("q@example.com", "pw"))
          .json()
          .path("data")
          .path("token")
          .asText();
      String v = "v".repeat(500);
      assertEquals("success", put(fe, token, "k1", v).path("status").asText());
      assertEquals(
          "success", put(fe, token, "k1", v).path("status").asText(), "overwriting adds nothing");
      JsonNode over = put(fe, token, "k2", v);
      assertEquals("failure", over.path("status").asText(), over.toString());
      String m = over.path("data").path("message").asText();
      assertTrue(m.startsWith("QUOTA_EXCEEDED") && m.contains("knix.storage.bytes.per.account"), m);
      ObjectNode del =
          storage(token, "kv", Json.object().put("action", "deleteData").put("key", "k1"));
      assertEquals(
          "success", knix(fe, "performStorageAction", del).json().path("status").asText());
      assertEquals(
          "success", put(fe, token, "k2", v).path("status").asText(), "deleting frees the bytes");
      ObjectNode reset = storage(
          token,
          "counter",
          Json.object()
              .put("action", "createCounter")
              .put("countername", KnixStorage.USED_COUNTER)
              .put("countervalue", 0));
      assertEquals(
          "failure",
          knix(fe, "performStorageAction", reset).json().path("status").asText(),
          "the count cannot be reset by its account");
    }
  }

  private static ObjectNode storage(String token, String type, ObjectNode parameters) {
    ObjectNode d = Json.object();
    d.putObject("user").put("token", token);
    d.putObject("storage").put("data_type", type).set("parameters", parameters);
    return d;
  }

  private static JsonNode put(TestFrontend fe, String token, String key, String value)
      throws Exception {
    return knix(
            fe,
            "performStorageAction",
            storage(
                token,
                "kv",
                Json.object().put("action", "putData").put("key", key).put("value", value)))
        .json();
  }

  @Test
  void aKnixZipBombIsRefusedAtTheCap() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      z.putNextEntry(new ZipEntry("bomb.bin"));
      byte[] zeros = new byte[1 << 20];
      for (int i = 0; i < 64; i++) {
        z.write(zeros); // 64 MB of zeros: about 64 KB zipped
      }
      z.closeEntry();
    }
    assertTrue(out.size() < 1 << 20, "small on the wire: " + out.size());
    KnixManagement.Failure f = assertThrows(
        KnixManagement.Failure.class,
        () -> KnixManagement.zip("g", out.toByteArray(), "x".getBytes(), new byte[0], 4 << 20));
    assertTrue(f.getMessage().contains("unpacks to more than"), f.getMessage());
  }

  @Test
  void aPollForAnExecutionThatIsNotThereAnswers404() throws Exception {
    try (TestFrontend fe = new TestFrontend()) {
      String key = fe.signUp("dev");
      fe.deployHello(key, "shop", null);
      var notAnId = fe.call("POST", "/app/shop/knix?executionId=nope", null, "{}");
      assertEquals(404, notAnId.status(), notAnId.body());
      var unknown = fe.call("POST", "/app/shop/knix?executionId=" + "0".repeat(32), null, "{}");
      assertEquals(404, unknown.status(), unknown.body()); // after its grace, not after 60 s
    }
  }

  /** Issue 26, finding 6: an execution's logs were answered whole, however many lines. */
  @Test
  void executionLogsComeAPageAtATime() throws Exception {
    try (TestFrontend fe = new TestFrontend()) {
      String key = fe.signUp("dev");
      String appId = fe.deployHello(key, "shop", null);
      var started = fe.call("POST", "/app/shop?async=1", null, "{}");
      String id = started.json().path("execution_id").asText();
      List<HostAgentTables.LogLine> lines = new ArrayList<>();
      for (int i = 0; i < 25; i++) {
        lines.add(new HostAgentTables.LogLine(
            id, 1_000_000_000L + i / 2, i, "greet", "INFO", "line " + i));
      }
      fe.store.appendLogs(lines, Duration.ofHours(1));
      List<String> seen = new ArrayList<>();
      String after = "";
      for (int page = 0; page < 10; page++) {
        JsonNode r = fe.call(
                "GET",
                "/api/v1/executions/" + id + "/logs?limit=10"
                    + (after.isEmpty() ? "" : "&after=" + after),
                key,
                null)
            .json();
        r.path("logs").forEach(l -> seen.add(l.path("text").asText()));
        assertTrue(r.path("logs").size() <= 10, r.toString());
        if (r.path("next").isNull()) {
          break;
        }
        after = r.path("next").asText();
      }
      assertEquals(25, seen.size(), seen.toString());
      assertEquals("line 0", seen.get(0));
      assertEquals("line 24", seen.get(24));
      assertEquals(appId.isEmpty(), false);
    }
  }

  /**
   * Issue 26, finding 6: a body refused before it was read was left unread and the connection closed under it; nginx,
   * still sending, took the frontend for dead (max_fails) and answered everyone 502. The frontend now reads it to its
   * end (dropping it) before answering: the whole body goes through, then the 404 comes.
   */
  @Test
  void aBodyRefusedBeforeItWasReadIsDrainedNotCutOff() throws Exception {
    try (TestFrontend fe = new TestFrontend();
        Socket socket = new Socket("127.0.0.1", URI.create(fe.url).getPort())) {
      int size = 8 << 20;
      var out = socket.getOutputStream();
      out.write(
          ("POST /app/no-such-app HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                  + size + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = new byte[64 * 1024];
      for (int sent = 0; sent < size; sent += chunk.length) {
        out.write(chunk); // an unread body closed under us fails here (broken pipe / reset)
      }
      out.flush();
      String head = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      assertEquals("HTTP/1.1 404", head);
    }
  }

  /** Issue 26, finding 8: PBKDF2 ran on any number of Jetty threads at once; now a few slots and a few waiters. */
  @Test
  void passwordDerivationsTakeAFewSlotsAndTheRestAreTurnedAwayAtOnce() throws Exception {
    try (TestFrontend fe = new TestFrontend(Map.of("login.hash.slots", "1"), true)) {
      List<CompletableFuture<TestFrontend.Answer>> logins = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        ObjectNode body = Json.object().put("action", "logIn");
        body.set("data", user("who" + i + "@example.com", "pw"));
        logins.add(fe.callAsync("POST", "/management", null, Json.text(body)));
      }
      int busy = 0;
      for (var f : logins) {
        TestFrontend.Answer a = f.get(60, TimeUnit.SECONDS);
        assertTrue(a.status() == 200 || a.status() == 503, a.status() + " " + a.body());
        if (a.status() == 503) {
          assertEquals("busy", a.json().path("error").path("code").asText());
          assertTrue(a.raw().headers().firstValue("Retry-After").isPresent());
          busy++;
        }
      }
      assertTrue(busy >= 20 - 1 - KnixManagement.WAITERS_PER_SLOT - 4, "turned away: " + busy);
    }
  }
}
