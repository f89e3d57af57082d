package sand.frontend.internal;

import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routes of the frontend: method + path template ({@code /api/v1/grains/{grain}}) to an endpoint.
 * Unknown paths answer 404, a known path with another method 405, both as JSON errors. The list of
 * routes is public so the OpenAPI document can be checked against it.
 */
public final class Router extends Handler.Abstract {
  private static final Logger LOG = LoggerFactory.getLogger(Router.class);
  /** Request attribute: the template of the matched route (metrics label). */
  public static final String ROUTE_ATTRIBUTE = "sand.route";
  /** Set by nginx when it asks which methods a path allows for a method it refused itself. */
  private static final String REFUSED_METHOD_HEADER = "X-Sand-Refused-Method";

  /** What a route does with a call; an ApiException (thrown or as the failure) becomes an error reply. */
  @FunctionalInterface
  public interface Endpoint {
    CompletionStage<Reply> handle(Call call) throws Exception;
  }

  /**
   * One route; {@code authenticated} routes answer 401 without a valid API key; {@code maxBody} is the largest body
   * it takes (413 beyond).
   */
  public record Route(
      String method,
      String template,
      boolean authenticated,
      Endpoint endpoint,
      Pattern pattern,
      List<String> names,
      long maxBody) {}

  private final List<Route> routes = new ArrayList<>();
  private final long maxBody;
  private final BodyBudget budget;

  /** Each caller's last answers to GETs, for when the cluster state does not answer (issue 31). */
  private final StaleAnswers stale = new StaleAnswers();

  public Router(long maxBody) {
    this(maxBody, null);
  }

  /** @param budget the bytes of bodies read at once over all calls (null: no bound, tests) */
  public Router(long maxBody, BodyBudget budget) {
    this.maxBody = maxBody;
    this.budget = budget;
  }

  /** Lower the largest body a route takes (docs/api.md "Request bodies"); never above the frontend's limit. */
  public Router limitBody(String method, String template, long bytes) {
    for (int i = 0; i < routes.size(); i++) {
      Route r = routes.get(i);
      if (r.method().equals(method) && r.template().equals(template)) {
        routes.set(
            i,
            new Route(
                r.method(),
                r.template(),
                r.authenticated(),
                r.endpoint(),
                r.pattern(),
                r.names(),
                Math.min(maxBody, bytes)));
        return this;
      }
    }
    throw new IllegalArgumentException("no route " + method + " " + template + " to limit");
  }

  /** Add a route whose endpoint answers at once. */
  public Router add(String method, String template, boolean authenticated, SyncEndpoint endpoint) {
    return addAsync(
        method,
        template,
        authenticated,
        c -> CompletableFuture.completedFuture(endpoint.handle(c)));
  }

  /** An endpoint that answers in the calling thread. */
  @FunctionalInterface
  public interface SyncEndpoint {
    Reply handle(Call call) throws Exception;
  }

  public Router addAsync(String method, String template, boolean authenticated, Endpoint endpoint) {
    List<String> names = new ArrayList<>();
    Matcher m = Pattern.compile("\\{([a-z]+)}").matcher(template);
    StringBuilder regex = new StringBuilder();
    int last = 0;
    while (m.find()) {
      regex.append(Pattern.quote(template.substring(last, m.start()))).append("([^/]+)");
      names.add(m.group(1));
      last = m.end();
    }
    regex.append(Pattern.quote(template.substring(last)));
    routes.add(new Route(
        method,
        template,
        authenticated,
        endpoint,
        Pattern.compile(regex.toString()),
        names,
        maxBody));
    return this;
  }

  public List<Route> routes() {
    return List.copyOf(routes);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    String path = Request.getPathInContext(request);
    Set<String> allowed =
        null; // made only for a path whose method is not served (no allocation per call)
    for (Route r : routes) {
      Matcher m = r.pattern().matcher(path);
      if (!m.matches()) {
        continue;
      }
      if (!r.method().equals(request.getMethod())) {
        if (allowed == null) {
          allowed = new TreeSet<>();
        }
        allowed.add(r.method());
        continue;
      }
      request.setAttribute(ROUTE_ATTRIBUTE, r.template());
      Map<String, String> params = new LinkedHashMap<>();
      for (int i = 0; i < r.names().size(); i++) {
        params.put(r.names().get(i), URLDecoder.decode(m.group(i + 1), StandardCharsets.UTF_8));
      }
      String account = (String) request.getAttribute(Call.ACCOUNT_ATTRIBUTE);
      if (r.authenticated() && account == null) {
        write(request, response, callback, Reply.error(ApiException.missingKey()));
        return true;
      }
      run(r, new Call(request, params, account, r.maxBody(), budget), request, response, callback);
      return true;
    }
    // nginx answers a method it refuses itself (TRACE) by asking here with OPTIONS and this header:
    // see nginx.conf
    String refused = request.getHeaders().get(REFUSED_METHOD_HEADER);
    String method =
        refused != null && "OPTIONS".equals(request.getMethod()) ? refused : request.getMethod();
    if (allowed == null) {
      write(
          request,
          response,
          callback,
          Reply.error(ApiException.notFound("no such route: " + method + " " + path
              + " (the routes are listed at GET /api/v1/openapi.json)")));
    } else {
      String allow = String.join(", ", allowed);
      write(
          request,
          response,
          callback,
          Reply.error(new ApiException(
                  405,
                  "method_not_allowed",
                  method + " is not allowed on " + path + "; allowed: " + allow))
              .withHeader("Allow", allow));
    }
    return true;
  }

  private void run(Route r, Call call, Request request, Response response, Callback callback) {
    CompletionStage<Reply> stage = attempt(r, call);
    if (r.method().equals("GET")) {
      // A read the cluster state did not answer is tried once more: with Cassandra at replication
      // factor 3, a node that just died is still chosen for a few seconds (until gossip convicts
      // it) and a read can time out although a quorum is alive (issue 31: 1 of 326 API reads while
      // a host died). If it fails again, the caller's last answer to the same GET, marked stale.
      String key = StaleAnswers.key(
          call, Request.getPathInContext(request), request.getHttpURI().getQuery());
      stage = stage
          .exceptionallyCompose(
              t -> Errors.cassandra(t) ? attempt(r, call) : CompletableFuture.failedFuture(t))
          .whenComplete((reply, t) -> {
            if (t == null) {
              stale.keep(key, reply);
            }
          })
          .exceptionallyCompose(t -> {
            Reply old = Errors.cassandra(t) ? stale.stale(key) : null;
            return old != null
                ? CompletableFuture.completedFuture(old)
                : CompletableFuture.failedFuture(t);
          });
    }
    stage.whenComplete((reply, failure) -> {
      call.release();
      write(request, response, callback, failure == null ? reply : toReply(r, failure));
    });
  }

  private static CompletionStage<Reply> attempt(Route r, Call call) {
    try {
      return r.endpoint().handle(call);
    } catch (Exception e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static Reply toReply(Route r, Throwable failure) {
    Throwable t = failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
    if (t instanceof RuntimeException re && Errors.platform(re) instanceof ApiException e) {
      if (e.status() >= 500
          && !e.code().equals("busy")) { // busy: counted (metrics), expected under load
        LOG.warn("[route {} {}] {}", r.method(), r.template(), e.getMessage());
      }
      return Reply.error(e);
    }
    LOG.error("[route {} {}] failed", r.method(), r.template(), t);
    return Reply.error(new ApiException(
        500, "internal", "the frontend failed: " + t + " (see the frontend's log)"));
  }

  /**
   * Answer {@code reply}; an error answered before the body was read first reads the body to its end and drops it
   * (without keeping it): nginx, still sending a body into a connection the frontend closed, would take the
   * frontend for dead (max_fails) and answer every caller 502 "no live upstreams" (finding 6 of issue 26).
   */
  public static void write(Request request, Response response, Callback callback, Reply reply) {
    if (reply.status() >= 400
        && request.getLength() != 0
        && request.getAttribute(Call.BODY_READ_ATTRIBUTE) == null) {
      request.setAttribute(Call.BODY_READ_ATTRIBUTE, Boolean.TRUE);
      Content.Source.consumeAll(
          request,
          Callback.from(
              () -> write(response, callback, reply), failure -> write(response, callback, reply)));
      return;
    }
    write(response, callback, reply);
  }

  public static void write(Response response, Callback callback, Reply reply) {
    response.setStatus(reply.status());
    if (reply.status() >= 400) {
      // An error may be answered before the request body was read: the connection cannot be reused
      // safely, so say so rather than let a client (or nginx) send its next request into a closing
      // socket.
      response.getHeaders().put(HttpHeader.CONNECTION, "close");
    }
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.contentType());
    reply.headers().forEach((k, v) -> response.getHeaders().put(k, v));
    response.write(true, ByteBuffer.wrap(reply.body()), callback);
  }
}
