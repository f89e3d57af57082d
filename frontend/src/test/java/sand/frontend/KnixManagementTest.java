package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.FrontendTables;
import sand.cluster.HostAgentTables;
import sand.frontend.internal.Json;

/** The KNIX door over HTTP: POST /management as mfn-sdk 0.8.9 calls it, and a workflow's /knix endpoint. */
class KnixManagementTest {
  private static final Base64.Encoder B64 = Base64.getEncoder();
  private TestFrontend fe;

  @BeforeEach
  void start() throws Exception {
    fe = new TestFrontend();
  }

  @AfterEach
  void stop() throws Exception {
    fe.close();
  }

  private JsonNode action(String action, String token, ObjectNode data) throws Exception {
    ObjectNode body = Json.object().put("action", action);
    ObjectNode d = body.putObject("data");
    if (data != null) {
      d.setAll(data);
    }
    if (token != null) {
      d.putObject("user").put("token", token);
    }
    TestFrontend.Answer a = fe.call("POST", "/management", null, Json.text(body));
    assertEquals(200, a.status(), a.body());
    return a.json();
  }

  private JsonNode ok(String action, String token, ObjectNode data) throws Exception {
    JsonNode r = action(action, token, data);
    assertEquals("success", r.path("status").asText(), r.toString());
    assertTrue(r.path("data").isObject(), r.toString());
    return r.path("data");
  }

  private String failure(String action, String token, ObjectNode data) throws Exception {
    JsonNode r = action(action, token, data);
    assertEquals("failure", r.path("status").asText(), r.toString());
    String m = r.path("data").path("message").asText();
    assertFalse(m.isEmpty(), r.toString());
    return m;
  }

  private String signUpAndLogIn(String email, String password) throws Exception {
    ObjectNode user = Json.object();
    user.putObject("user").put("email", email).put("password", password).put("name", "A User");
    ok("signUp", null, user);
    return login(email, password);
  }

  private String login(String email, String password) throws Exception {
    ObjectNode user = Json.object();
    user.putObject("user").put("email", email).put("password", password);
    JsonNode d = ok("logIn", null, user);
    assertFalse(d.path("storageEndpoint").asText().isEmpty());
    return d.path("token").asText();
  }

  private static ObjectNode fn(String... kv) {
    ObjectNode f = Json.object();
    for (int i = 0; i < kv.length; i += 2) {
      f.put(kv[i], kv[i + 1]);
    }
    return (ObjectNode) Json.object().set("function", f);
  }

  private static ObjectNode wf(String... kv) {
    ObjectNode f = Json.object();
    for (int i = 0; i < kv.length; i += 2) {
      f.put(kv[i], kv[i + 1]);
    }
    return (ObjectNode) Json.object().set("workflow", f);
  }

  @Test
  void versionUnknownActionsAndTokensAreAnsweredInKnixShape() throws Exception {
    assertTrue(ok("version", null, null).path("message").asText().contains("SAND"));
    assertTrue(failure("getFunctions", null, null).startsWith("User verification failed"));
    assertTrue(
        failure("getFunctions", "sand_not_a_key", null).contains("User verification failed"));
    String token = signUpAndLogIn("a@example.com", "pw-1");
    assertTrue(failure("frobnicate", token, null).contains("Unsupported action"));
    TestFrontend.Answer bad = fe.call("POST", "/management", null, "{\"action\":");
    assertEquals(200, bad.status());
    assertEquals("failure", bad.json().path("status").asText());
  }

  @Test
  void aLoginsTokenIsTheAccountsApiKeyAndOnlyTheRightPasswordGivesIt() throws Exception {
    String token = signUpAndLogIn("alice@example.com", "s3cret pass");
    assertEquals(
        200,
        fe.call("GET", "/api/v1/grains", token, null).status(),
        "the token works on the REST API");
    assertEquals(
        token, login("alice@example.com", "s3cret pass"), "every login gives the same key");
    ObjectNode wrong = Json.object();
    wrong.putObject("user").put("email", "alice@example.com").put("password", "guess");
    assertTrue(failure("logIn", null, wrong).contains("Authentication failed"));
    ObjectNode nobody = Json.object();
    nobody.putObject("user").put("email", "nobody@example.com").put("password", "x");
    assertTrue(failure("logIn", null, nobody).contains("Authentication failed"));
    ObjectNode again = Json.object();
    again
        .putObject("user")
        .put("email", "alice@example.com")
        .put("password", "other")
        .put("name", "x");
    assertEquals("User already exists.", failure("signUp", null, again));
    // the key is kept only wrapped: the stored login holds neither it nor the password
    String stored = new String(
        fe.store.knixRecord("login", "user", "alice@example.com").orElseThrow().value(),
        StandardCharsets.UTF_8);
    assertFalse(stored.contains(token) || stored.contains("s3cret"), stored);
  }

  @Test
  void functionsAreTheAccountsGrainsTextZipAndRequirements() throws Exception {
    String token = signUpAndLogIn("dev@example.com", "pw");
    JsonNode added =
        ok("addFunction", token, fn("name", "hello", "runtime", "Python 3.6")).path("function");
    String id = added.path("id").asText();
    assertEquals(32, id.length());
    assertTrue(added.path("modified").isNumber());
    String code = "def handle(event, context):\n    return {'hi': event}\n";
    ok(
        "uploadFunctionCode",
        token,
        fn("id", id, "code", B64.encodeToString(code.getBytes()), "format", "text"));
    TestFrontend.Answer grain = fe.call("GET", "/api/v1/grains/hello", token, null);
    assertEquals(200, grain.status(), grain.body());
    assertEquals(
        code,
        new String(Base64.getDecoder()
            .decode(ok("getFunctionCode", token, fn("id", id))
                .path("function")
                .path("code")
                .asText())));
    assertEquals(
        -1,
        ok("getFunctionZipMetadata", token, fn("id", id))
            .path("function")
            .path("chunks")
            .asInt());
    JsonNode list = ok("getFunctions", token, null).path("functions");
    assertEquals(1, list.size());
    assertEquals("hello", list.get(0).path("name").asText());

    // a zip in two chunks (split base64, as the SDK does), then requirements: the grain becomes a
    // zip of both
    byte[] zip = DeveloperApiTest.zip(Map.of("hello.py", "old code", "helper.py", "X = 1\n"));
    String b64 = B64.encodeToString(zip);
    int half = b64.length() / 2;
    ok("uploadFunctionCode", token, chunk(id, 0, b64.substring(0, half)));
    ok("uploadFunctionCode", token, chunk(id, 1, b64.substring(half)));
    ObjectNode meta = fn(
        "id", id, "metadata", B64.encodeToString("<table/>".getBytes()), "format", "zipMetadata");
    ((ObjectNode) meta.path("function")).put("chunks", 2);
    ok("uploadFunctionZipMetadata", token, meta);
    ok(
        "uploadFunctionRequirements",
        token,
        fn("id", id, "requirements", B64.encodeToString("six==1.16.0\n".getBytes())));
    ObjectNode z1 = fn("id", id);
    ((ObjectNode) z1.path("function")).put("chunk", 1);
    assertEquals(
        b64.substring(half),
        ok("getFunctionZip", token, z1).path("function").path("code").asText());
    Map<String, String> files =
        unzip(fe.store.latestGrain("dev-example-com", "hello").orElseThrow().code());
    assertEquals(
        code, files.get("hello.py"), "the text code wins over the zip's copy (KNIX's rule)");
    assertEquals("X = 1\n", files.get("helper.py"));
    assertEquals("six==1.16.0\n", files.get("requirements.txt"));

    assertTrue(
        failure("addFunction", token, fn("name", "bad name")).contains("Invalid function name"));
    assertTrue(
        failure("addFunction", token, fn("name", "j", "runtime", "JRE 8u232")).contains("Python"));
    assertTrue(failure("addFunction", token, fn("name", "hello")).contains("exists"));

    String bob = signUpAndLogIn("bob@example.com", "pw");
    assertTrue(
        failure("getFunctionCode", bob, fn("id", id)).contains("does not exist"),
        "one account's ids only");
    assertEquals(0, ok("getFunctions", bob, null).path("functions").size());

    ok("deleteFunction", token, fn("id", id));
    assertEquals(404, fe.call("GET", "/api/v1/grains/hello", token, null).status());
  }

  private static ObjectNode chunk(String id, int n, String code) {
    ObjectNode c = fn("id", id, "code", code, "format", "zip");
    ((ObjectNode) c.path("function")).put("chunk", n);
    return c;
  }

  private static Map<String, String> unzip(byte[] zip) throws Exception {
    Map<String, String> out = new HashMap<>();
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
      ZipEntry e;
      while ((e = in.getNextEntry()) != null) {
        out.put(e.getName(), new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /** A KNIX user's functions and native workflow, deployed; returns (token, workflow id, application). */
  private String[] deployedWorkflow(String exit) throws Exception {
    String token = signUpAndLogIn("wf@example.com", "pw");
    for (String name : new String[] {"greet", "shout"}) {
      String id =
          ok("addFunction", token, fn("name", name)).path("function").path("id").asText();
      ok(
          "uploadFunctionCode",
          token,
          fn(
              "id",
              id,
              "code",
              B64.encodeToString("def handle(event, context):\n    return event\n".getBytes()),
              "format",
              "text"));
    }
    JsonNode w = ok("addWorkflow", token, wf("name", "Hello World")).path("workflow");
    assertEquals("undeployed", w.path("status").asText());
    assertEquals(0, w.path("endpoints").size());
    String wid = w.path("id").asText();
    String json = "{\"name\":\"hello\",\"entry\":\"greet\",\"exit\":\"" + exit
        + "\",\"enable_checkpoints\":false,"
        + "\"functions\":[{\"name\":\"greet\",\"next\":[\"shout\"]},{\"name\":\"shout\",\"next\":[\""
        + exit + "\"]}]}";
    ok("uploadWorkflowJSON", token, wf("id", wid, "json", B64.encodeToString(json.getBytes())));
    assertEquals(
        json,
        new String(Base64.getDecoder()
            .decode(ok("getWorkflowJSON", token, wf("id", wid))
                .path("workflow")
                .path("json")
                .asText())));
    fe.store.upsertHost(
        new HostAgentTables.HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    JsonNode d = ok("deployWorkflow", token, wf("id", wid)).path("workflow");
    assertEquals("deploying", d.path("status").asText());
    String app = d.path("app").asText();
    assertTrue(app.startsWith("hello-world-"), app);
    return new String[] {token, wid, app};
  }

  @Test
  void aNativeWorkflowIsAnApplicationWithItsExitAsEnd() throws Exception {
    String[] t = deployedWorkflow("exit");
    String token = t[0];
    JsonNode app = fe.call("GET", "/api/v1/apps/" + t[2], token, null).json();
    assertEquals(
        "[\"end\"]", app.path("workflow").path("functions").get(1).path("next").toString());
    assertTrue(
        failure("deleteWorkflow", token, wf("id", t[1])).contains("Undeploy workflow first"));
    fe.store.setAppHostState(app.path("id").asText(), "h1", "deployed", null, Instant.now());
    JsonNode v = ok("getWorkflows", token, wf("id", t[1])).path("workflow");
    assertEquals("deployed", v.path("status").asText());
    assertTrue(
        v.path("endpoints").get(0).asText().endsWith("/app/" + t[2] + "/knix"), v.toString());
    assertEquals(1, ok("getWorkflows", token, null).path("workflows").size());

    String asl = "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}}";
    String wid2 =
        ok("addWorkflow", token, wf("name", "asl")).path("workflow").path("id").asText();
    ok("uploadWorkflowJSON", token, wf("id", wid2, "json", B64.encodeToString(asl.getBytes())));
    assertEquals(
        "deploying",
        ok("deployWorkflow", token, wf("id", wid2))
            .path("workflow")
            .path("status")
            .asText());
    String wid3 = ok("addWorkflow", token, wf("name", "broken"))
        .path("workflow")
        .path("id")
        .asText();
    String broken =
        "{\"name\":\"b\",\"entry\":\"nope\",\"functions\":[{\"name\":\"greet\",\"next\":[\"end\"]}]}";
    ok("uploadWorkflowJSON", token, wf("id", wid3, "json", B64.encodeToString(broken.getBytes())));
    assertTrue(
        failure("deployWorkflow", token, wf("id", wid3)).contains("nope"),
        "SAND's validation, word for word");
  }

  @Test
  void aFunctionGoesWhileItsWorkflowStaysDeployedAndRunsItsCopy() throws Exception {
    String[] t = deployedWorkflow("end");
    String token = t[0];
    String appId =
        fe.call("GET", "/api/v1/apps/" + t[2], token, null).json().path("id").asText();
    JsonNode shout = null;
    for (JsonNode f : ok("getFunctions", token, null).path("functions")) {
      shout = "shout".equals(f.path("name").asText()) ? f : shout;
    }
    // SAND's own API keeps refusing, and says how to ask
    var refused = fe.call("DELETE", "/api/v1/grains/shout", token, null);
    assertEquals(409, refused.status(), refused.body());
    assertTrue(refused.body().contains("keep_deployed"), refused.body());
    ok("deleteFunction", token, fn("id", shout.path("id").asText()));
    assertEquals(404, fe.call("GET", "/api/v1/grains/shout", token, null).status());
    assertTrue(
        fe.store.applicationCode(appId).containsKey("shout"),
        "the deployed workflow keeps its copy");
    assertEquals(
        "deploying",
        fe.call("GET", "/api/v1/apps/" + t[2], token, null)
            .json()
            .path("status")
            .asText());
    var bad = fe.call("DELETE", "/api/v1/grains/greet?keep_deployed=maybe", token, null);
    assertEquals(400, bad.status(), bad.body());
  }

  @Test
  void aFailedWorkflowIsDeletedAsOnKnix() throws Exception {
    String[] t = deployedWorkflow("end");
    String appId =
        fe.call("GET", "/api/v1/apps/" + t[2], t[0], null).json().path("id").asText();
    fe.store.setAppHostState(appId, "h1", "failed", "pip: no numpyu", Instant.now());
    JsonNode v = ok("getWorkflows", t[0], wf("id", t[1])).path("workflow");
    assertEquals("failed", v.path("status").asText(), v.toString());
    ok("deleteWorkflow", t[0], wf("id", t[1]));
    assertEquals(0, ok("getWorkflows", t[0], null).path("workflows").size());
    assertEquals(404, fe.call("GET", "/api/v1/apps/" + t[2], t[0], null).status());
  }

  @Test
  void theEndpointAnswersAsKnixAsyncIdThenResultAndErrorsAs200() throws Exception {
    String[] t = deployedWorkflow("end");
    String appId =
        fe.call("GET", "/api/v1/apps/" + t[2], t[0], null).json().path("id").asText();
    fe.store.setAppHostState(appId, "h1", "deployed", null, Instant.now());
    TestFrontend.Answer async =
        fe.call("POST", "/app/" + t[2] + "/knix?async=True", null, "{\"x\":1}");
    assertEquals(200, async.status(), async.body());
    String id = async.body();
    assertTrue(id.matches("[0-9a-f]{32}"), id);
    JsonNode pending = fe.call(
            "POST", "/app/" + t[2] + "/knix?executionId=" + id + "&async=True", null, (String) null)
        .json();
    assertTrue(
        pending.path("result").isNull() && pending.path("executionId").asText().equals(id),
        pending.toString());
    fe.store.endExecution(
        id,
        "failed",
        null,
        "{\"type\":\"ValueError\",\"message\":\"no\",\"grain\":\"shout\"}",
        Instant.now(),
        null,
        FrontendTables.resultRank(1),
        Duration.ofHours(1));
    JsonNode err = fe.call("POST", "/app/" + t[2] + "/knix?executionId=" + id, null, (String) null)
        .json();
    assertTrue(err.path("has_error").asBoolean(), err.toString());
    assertEquals("User code exception: ValueError", err.path("error_type").asText());
    assertEquals(2, err.size(), "exactly KNIX's has_error and error_type: " + err);
    assertEquals(404, fe.call("POST", "/app/nope/knix", null, "{}").status());
  }

  @Test
  void storageActionsReachTheUsersOwnSpaceAndTheWorkflowsData() throws Exception {
    String[] t = deployedWorkflow("end");
    ObjectNode put = Json.object();
    put.putObject("storage")
        .put("data_type", "kv")
        .putObject("parameters")
        .put("action", "putdata")
        .put("key", "k")
        .put("value", "v1");
    ok("performStorageAction", t[0], put);
    ObjectNode get = Json.object();
    get.putObject("storage")
        .put("data_type", "kv")
        .putObject("parameters")
        .put("action", "getdata")
        .put("key", "k");
    assertEquals(
        "v1",
        new String(Base64.getDecoder()
            .decode(ok("performStorageAction", t[0], get).path("value").asText())),
        "mfn-sdk 0.8.9 decodes kv values from base64");
    ((ObjectNode) get.path("storage")).put("workflowid", t[1]);
    assertTrue(
        ok("performStorageAction", t[0], get).path("value").isNull(),
        "the workflow's data is its own");
    ObjectNode inc = Json.object();
    inc.putObject("storage")
        .put("data_type", "counter")
        .put("workflowid", t[1])
        .putObject("parameters")
        .put("action", "incrementcounter")
        .put("countername", "c")
        .put("increment", 5);
    ok("performStorageAction", t[0], inc);
    String appId =
        fe.call("GET", "/api/v1/apps/" + t[2], t[0], null).json().path("id").asText();
    assertEquals(
        5L, fe.data.readCounter(appId, "c").orElseThrow(), "what the workflow's grains read");
    String bob = signUpAndLogIn("bob@example.com", "pw");
    assertTrue(
        failure("performStorageAction", bob, get).contains("does not exist"),
        "another's workflow: no");
    ((ObjectNode) get.path("storage")).remove("workflowid");
    assertTrue(
        ok("performStorageAction", bob, get).path("value").isNull(),
        "bob's own space is not alice's");
    ObjectNode bad = Json.object();
    bad.putObject("storage")
        .put("data_type", "queue")
        .putObject("parameters")
        .put("action", "push");
    assertTrue(failure("performStorageAction", t[0], bad).contains("unknown"));
  }
}
