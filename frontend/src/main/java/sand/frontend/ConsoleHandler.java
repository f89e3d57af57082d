package sand.frontend;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import sand.frontend.internal.Json;
import sand.frontend.internal.Router;

/**
 * The web console (docs/console.md): the built single page in {@code console.dir} (console/dist), served at
 * {@code /console/} with no key (it signs in against the public API from the browser), a strict
 * Content-Security-Policy and {@code nosniff}. {@code /console} redirects to {@code /console/}; a path under it that
 * names no file and has no extension is a client route and answers index.html; a path leaving the folder is 404.
 * Everything else goes on to the API.
 */
public final class ConsoleHandler extends Handler.Wrapper {
  static final String PREFIX = "/console";
  /** Nothing inline, nothing from elsewhere: scripts, styles, fonts and calls from this origin only. */
  static final String CSP =
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
          + "img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

  private static final Map<String, String> TYPES = Map.of(
      "html", "text/html; charset=utf-8",
      "js", "text/javascript; charset=utf-8",
      "css", "text/css; charset=utf-8",
      "map", "application/json",
      "json", "application/json",
      "svg", "image/svg+xml",
      "png", "image/png",
      "ico", "image/x-icon",
      "woff2", "font/woff2",
      "txt", "text/plain; charset=utf-8");

  private final Path root;

  /** @param root the built console's folder (index.html and assets/) */
  public ConsoleHandler(Path root, Handler next) {
    super(next);
    this.root = root.toAbsolutePath().normalize();
  }

  /** {@code next} behind the console of the setting {@code console.dir}; {@code next} alone when it is empty. */
  static Handler around(Handler next, FrontendSettings s) {
    return s.consoleDir().isEmpty() ? next : new ConsoleHandler(Path.of(s.consoleDir()), next);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = Request.getPathInContext(request);
    if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
      return super.handle(request, response, callback);
    }
    request.setAttribute(Router.ROUTE_ATTRIBUTE, PREFIX + "/*");
    String method = request.getMethod();
    boolean head = method.equals("HEAD");
    if (!head && !method.equals("GET")) {
      response.getHeaders().put(HttpHeader.ALLOW, "GET, HEAD");
      return error(
          response,
          callback,
          405,
          "method_not_allowed",
          method + " is not allowed on " + path
              + "; allowed: GET, HEAD (the console is static files)");
    }
    if (path.equals(PREFIX)) {
      response.setStatus(301);
      response.getHeaders().put(HttpHeader.LOCATION, PREFIX + "/");
      callback.succeeded();
      return true;
    }
    Path file = resolve(path.substring(PREFIX.length() + 1));
    if (file == null) {
      return error(
          response,
          callback,
          404,
          "not_found",
          "no file " + path
              + " in the console (its files are index.html and assets/...; open /console/)");
    }
    if (!Files.isRegularFile(file)) {
      return error(
          response,
          callback,
          404,
          "not_found",
          "the console is not built on this frontend (" + root
              + " has no index.html): run make up, or cd console && npm ci && npm run build");
    }
    serve(file, head, response, callback);
    return true;
  }

  /** The file a relative path names, index.html for a client route, or null: a path leaving the folder or none. */
  private Path resolve(String rel) {
    if (rel.isEmpty()) {
      return root.resolve("index.html");
    }
    for (String segment : rel.split("/", -1)) {
      if (segment.isEmpty()
          || segment.equals(".")
          || segment.equals("..")
          || segment.indexOf('\\') >= 0
          || segment.indexOf('\0') >= 0
          || segment.startsWith(".")) {
        return null;
      }
    }
    Path file = root.resolve(rel).normalize();
    if (!file.startsWith(root)) {
      return null;
    }
    if (Files.isRegularFile(file)) {
      return inside(file) ? file : null;
    }
    String last = rel.substring(rel.lastIndexOf('/') + 1);
    return last.contains(".") ? null : root.resolve("index.html");
  }

  /** Whether a file is in the folder once links are followed (a link in dist/ must not lead out of it). */
  private boolean inside(Path file) {
    try {
      return file.toRealPath().startsWith(root.toRealPath());
    } catch (IOException e) {
      return false;
    }
  }

  private void serve(Path file, boolean head, Response response, Callback callback)
      throws IOException {
    String name = file.getFileName().toString();
    String ext = name.contains(".") ? name.substring(name.lastIndexOf('.') + 1) : "";
    byte[] bytes = Files.readAllBytes(file);
    var h = response.getHeaders();
    response.setStatus(200);
    h.put(
        HttpHeader.CONTENT_TYPE,
        TYPES.getOrDefault(ext.toLowerCase(Locale.ROOT), "application/octet-stream"));
    // assets/ names carry their content's hash (console/build.mjs): kept a year; index.html asked
    // again each time
    h.put(
        HttpHeader.CACHE_CONTROL,
        root.relativize(file).startsWith("assets")
            ? "public, max-age=31536000, immutable"
            : "no-cache");
    securityHeaders(response);
    h.put(HttpHeader.CONTENT_LENGTH, bytes.length);
    response.write(true, head ? ByteBuffer.allocate(0) : ByteBuffer.wrap(bytes), callback);
  }

  private static void securityHeaders(Response response) {
    var h = response.getHeaders();
    h.put("Content-Security-Policy", CSP);
    h.put("X-Content-Type-Options", "nosniff");
    h.put("Referrer-Policy", "no-referrer");
    h.put("X-Frame-Options", "DENY");
  }

  private static boolean error(
      Response response, Callback callback, int status, String code, String message) {
    var body = Json.object();
    body.putObject("error").put("code", code).put("message", message);
    byte[] bytes = Json.bytes(body);
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
    securityHeaders(response);
    response.write(true, ByteBuffer.wrap(bytes), callback);
    return true;
  }
}
