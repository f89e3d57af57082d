package sand.frontend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The console's files through a whole frontend (TestFrontend): headers, client routes, traversal, the API beside. */
class ConsoleHandlerTest {
  @TempDir
  static Path dir;

  static Path secret;
  static TestFrontend fe;

  @BeforeAll
  static void start() throws Exception {
    Path dist = Files.createDirectories(dir.resolve("dist"));
    Files.writeString(dist.resolve("index.html"), "<!doctype html><title>SAND</title>");
    Files.createDirectories(dist.resolve("assets"));
    Files.writeString(dist.resolve("assets/main-ABC123.js"), "console.log(1)");
    Files.writeString(dist.resolve("assets/main-ABC123.css"), "body{}");
    secret = Files.writeString(dir.resolve("secret.txt"), "not for the browser");
    Files.createSymbolicLink(dist.resolve("link.txt"), secret);
    fe = new TestFrontend(Map.of(FrontendSettings.CONSOLE_DIR, dist.toString()), true);
  }

  @AfterAll
  static void stop() {
    fe.close();
  }

  @Test
  void indexHasTheStrictPolicyAndIsAskedForAgainEachTime() throws Exception {
    var a = fe.call("GET", "/console/", null, null);
    assertEquals(200, a.status());
    assertTrue(a.body().startsWith("<!doctype html>"));
    var h = a.raw().headers();
    assertEquals("text/html; charset=utf-8", h.firstValue("Content-Type").orElseThrow());
    assertEquals(ConsoleHandler.CSP, h.firstValue("Content-Security-Policy").orElseThrow());
    assertTrue(ConsoleHandler.CSP.contains("script-src 'self';"));
    assertTrue(!ConsoleHandler.CSP.contains("unsafe"));
    assertEquals("nosniff", h.firstValue("X-Content-Type-Options").orElseThrow());
    assertEquals("no-cache", h.firstValue("Cache-Control").orElseThrow());
    assertEquals("DENY", h.firstValue("X-Frame-Options").orElseThrow());
  }

  @Test
  void hashedAssetsAreKeptAYearWithTheirTypes() throws Exception {
    var js = fe.call("GET", "/console/assets/main-ABC123.js", null, null);
    assertEquals(200, js.status());
    assertEquals("console.log(1)", js.body());
    assertEquals(
        "text/javascript; charset=utf-8",
        js.raw().headers().firstValue("Content-Type").orElseThrow());
    assertEquals(
        "public, max-age=31536000, immutable",
        js.raw().headers().firstValue("Cache-Control").orElseThrow());
    var css = fe.call("GET", "/console/assets/main-ABC123.css", null, null);
    assertEquals(
        "text/css; charset=utf-8",
        css.raw().headers().firstValue("Content-Type").orElseThrow());
    var head = fe.call("HEAD", "/console/assets/main-ABC123.js", null, null);
    assertEquals(200, head.status());
    assertEquals("", head.body());
  }

  @Test
  void consoleWithoutSlashRedirects() throws Exception {
    var a = fe.call("GET", "/console", null, null);
    assertEquals(301, a.status());
    assertEquals("/console/", a.raw().headers().firstValue("Location").orElseThrow());
  }

  @Test
  void clientRoutesAnswerIndexAndMissingFilesAre404() throws Exception {
    var route = fe.call("GET", "/console/apps/hello/executions", null, null);
    assertEquals(200, route.status());
    assertTrue(route.body().contains("<title>SAND</title>"));
    var missing = fe.call("GET", "/console/assets/nope.js", null, null);
    assertEquals(404, missing.status());
    assertEquals("not_found", missing.json().path("error").path("code").asText());
  }

  @Test
  void onlyGetAndHead() throws Exception {
    var a = fe.call("POST", "/console/", null, "{}");
    assertEquals(405, a.status());
    assertEquals("GET, HEAD", a.raw().headers().firstValue("Allow").orElseThrow());
  }

  @Test
  void pathsLeavingTheFolderAreRefused() throws Exception {
    assertTrue(Files.exists(secret));
    // raw requests: an HTTP client would normalize the dots away before sending
    for (String path : new String[] {
      "/console/../secret.txt",
      "/console/%2e%2e/secret.txt",
      "/console/assets/%2e%2e/%2e%2e/secret.txt",
      "/console/..%2fsecret.txt",
      "/console/.hidden",
      "/console/link.txt",
      "/console/assets/..%5c..%5csecret.txt"
    }) {
      String answer = raw(path);
      assertTrue(!answer.contains("not for the browser"), path + " answered the file: " + answer);
      String status = answer.substring(0, answer.indexOf("\r\n"));
      assertTrue(status.matches("HTTP/1.1 (400|404) .*"), path + " answered " + status);
    }
  }

  @Test
  void theApiGoesOnBesideTheConsole() throws Exception {
    var a = fe.call("GET", "/api/v1/apps", null, null);
    assertEquals(401, a.status());
    String key = fe.signUp("consoleuser");
    assertEquals(200, fe.call("GET", "/api/v1/apps", key, null).status());
    // /consoles is not /console/
    var other = fe.call("GET", "/consoles", null, null);
    assertEquals(404, other.status());
    assertTrue(other.raw().headers().firstValue("Content-Security-Policy").isEmpty());
  }

  @Test
  void noConsoleWhenTheSettingIsEmpty() throws Exception {
    try (TestFrontend plain = new TestFrontend()) {
      var a = plain.call("GET", "/console/", null, null);
      assertTrue(a.status() == 401 || a.status() == 404, "answered " + a.status());
    }
  }

  @Test
  void aConsoleNotBuiltSaysHowToBuildIt() throws Exception {
    Path empty = Files.createDirectories(dir.resolve("empty"));
    try (TestFrontend unbuilt =
        new TestFrontend(Map.of(FrontendSettings.CONSOLE_DIR, empty.toString()), true)) {
      var a = unbuilt.call("GET", "/console/", null, null);
      assertEquals(404, a.status());
      assertTrue(a.json().path("error").path("message").asText().contains("npm run build"));
    }
  }

  private static String raw(String path) throws Exception {
    int port = Integer.parseInt(fe.url.substring(fe.url.lastIndexOf(':') + 1));
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream()
          .write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
