package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Predicate;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import sand.cluster.ClusterSettings;
import sand.frontend.internal.Json;

/**
 * Against the real system (-Dsand.it=true; Kafka on 127.0.0.1:9092, Cassandra on 127.0.0.1:9042 and a
 * running host agent, as `make up` leaves them): sign up, upload examples/hello, deploy, invoke sync and
 * async, read the execution and its logs, undeploy, delete.
 */
class FrontendEndToEndTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private String url;

  private JsonNode call(
      String method, String path, String key, String contentType, byte[] body, int expect)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path))
        .timeout(Duration.ofSeconds(60))
        .method(
            method,
            body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body));
    if (key != null) {
      b.header("Authorization", "Bearer " + key);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(expect, r.statusCode(), method + " " + path + ": " + r.body());
    return Json.MAPPER.readTree(r.body());
  }

  private JsonNode await(String what, long seconds, ThrowingSupplier s, Predicate<JsonNode> done)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      last = s.get();
      if (done.test(last)) {
        return last;
      }
      Thread.sleep(250);
    }
    throw new AssertionError(what + " did not happen within " + seconds + " s; last: " + last);
  }

  interface ThrowingSupplier {
    JsonNode get() throws Exception;
  }

  @Test
  void helloFromSignUpToUndeployOnTheRealSystem() throws Exception {
    Assumptions.assumeTrue(
        Boolean.getBoolean("sand.it"), "needs Kafka, Cassandra and a host agent (-Dsand.it=true)");
    String suffix = Long.toHexString(System.nanoTime());
    var config = Frontend.DEF.parse(Map.of("port", "0", "id", "fe-it-" + suffix));
    Frontend.Deps deps = Frontend.connect(config, ClusterSettings.fromEnvironment(System.getenv()));
    Server server = Frontend.newServer(config, deps);
    server.start();
    try {
      url = "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
      String key = call(
              "POST",
              "/api/v1/accounts",
              null,
              null,
              ("{\"name\":\"it-" + suffix + "\"}").getBytes(),
              201)
          .path("api_key")
          .asText();
      Path hello = Path.of("..", "examples", "hello");
      for (String g : new String[] {"greet", "shout"}) {
        call(
            "PUT",
            "/api/v1/grains/" + g,
            key,
            "text/x-python",
            Files.readAllBytes(hello.resolve(g + ".py")),
            200);
      }
      String app = "hello-it-" + suffix;
      call(
          "PUT",
          "/api/v1/apps/" + app,
          key,
          "application/json",
          Files.readAllBytes(hello.resolve("workflow.json")),
          200);
      call("POST", "/api/v1/apps/" + app + "/deploy", key, null, null, 202);
      JsonNode status = await(
          "deploy",
          120,
          () -> call("GET", "/api/v1/apps/" + app, key, null, null, 200),
          a -> !a.path("status").asText().equals("deploying"));
      assertEquals("deployed", status.path("status").asText(), status.toString());

      JsonNode out = call(
          "POST", "/app/" + app, null, "application/json", "{\"name\":\"sand\"}".getBytes(), 200);
      assertEquals("HELLO, SAND!", out.path("greeting").asText(), out.toString());

      String id = call(
              "POST",
              "/app/" + app + "?async=1",
              null,
              "application/json",
              "{\"name\":\"async\"}".getBytes(),
              202)
          .path("execution_id")
          .asText();
      JsonNode e = await(
          "async result",
          30,
          () -> call("GET", "/api/v1/executions/" + id, key, null, null, 200),
          x -> !x.path("status").asText().equals("running"));
      assertEquals("succeeded", e.path("status").asText(), e.toString());
      assertEquals("HELLO, ASYNC!", e.path("result").path("greeting").asText());
      JsonNode logs = await(
          "logs",
          30,
          () -> call("GET", "/api/v1/executions/" + id + "/logs", key, null, null, 200),
          x -> x.path("logs").size() > 0);
      assertEquals(
          "greeting async", logs.path("logs").get(0).path("text").asText(), logs.toString());

      call("POST", "/api/v1/apps/" + app + "/undeploy", key, null, null, 202);
      await(
          "undeploy",
          60,
          () -> call("GET", "/api/v1/apps/" + app, key, null, null, 200),
          a -> a.path("status").asText().equals("undeployed"));
      call("POST", "/app/" + app, null, "application/json", "{}".getBytes(), 409);
      call("DELETE", "/api/v1/apps/" + app, key, null, null, 200);
      assertFalse(deps.store().appName(app).isPresent());
      assertTrue(
          call("GET", "/healthz", null, null, null, 200).path("status").asText().equals("ok"));
    } finally {
      server.stop();
      deps.producer().close();
      deps.store().close();
    }
  }
}
