package sand.frontend.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Fields;

/**
 * One HTTP call as an endpoint sees it: method, path parameters, query, the authenticated account (or
 * null) and the body, read at most once and at most {@code maxBody} bytes (413 beyond; the route's limit). A body
 * is read only once its bytes were taken from the frontend's {@link BodyBudget} (503 {@code busy} when spent); the
 * router gives them back when the call is answered ({@link #release}).
 */
public final class Call {
  /** Set by the authentication wrapper: the account of the caller's key; the admin token. */
  public static final String ACCOUNT_ATTRIBUTE = "sand.account";

  public static final String ADMIN_ATTRIBUTE = "sand.admin";
  private final Request request;
  private final Map<String, String> params;
  private final String account;
  /** Request attribute: the body was read to its end (nothing left for the router to drain). */
  static final String BODY_READ_ATTRIBUTE = "sand.body.read";
  /** What a caller refused for want of body budget is told to wait before trying again. */
  private static final int BUSY_RETRY_AFTER_S = 1;

  private final long maxBody;
  private final BodyBudget budget;
  private long taken;
  private Fields query;
  private byte[] body;

  Call(Request request, Map<String, String> params, String account, long maxBody) {
    this(request, params, account, maxBody, null);
  }

  Call(
      Request request,
      Map<String, String> params,
      String account,
      long maxBody,
      BodyBudget budget) {
    this.request = request;
    this.params = params;
    this.account = account;
    this.maxBody = maxBody;
    this.budget = budget;
  }

  /** Give the body's bytes back to the budget (the router, once the call is answered). */
  synchronized void release() {
    if (taken > 0 && budget != null) {
      budget.give(taken);
    }
    taken = 0;
  }

  public String param(String name) {
    return params.get(name);
  }

  /** The authenticated account; the router has already answered 401 for routes that need one. */
  public String account() {
    return account;
  }

  /** The request carried the operator's admin key. */
  public boolean isAdmin() {
    return Boolean.TRUE.equals(request.getAttribute(ADMIN_ATTRIBUTE));
  }

  public String query(String name) {
    if (query == null) {
      query = Request.extractQueryParameters(request);
    }
    return query.getValue(name);
  }

  /** A count query parameter ({@code ?limit=}): absent or empty is {@code dflt}, else 1..{@code max} or 400. */
  public int count(String name, int dflt, int max) {
    String v = query(name);
    if (v == null || v.isEmpty()) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v);
      if (n >= 1 && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // the message below
    }
    throw ApiException.badRequest(name + "=" + v + " is invalid: 1.." + max);
  }

  /** A yes/no query parameter: absent, 0 or false is no; 1, true or empty ({@code ?async}) is yes; else 400. */
  public boolean flag(String name) {
    String v = query(name);
    if (v == null || v.equals("0") || v.equals("false")) {
      return false;
    }
    if (v.equals("1") || v.equals("true") || v.isEmpty()) {
      return true;
    }
    throw ApiException.badRequest(
        "query parameter " + name + "=" + v + " is invalid: write " + name + "=1 (or 0)");
  }

  /** Who sent this, for an audit line: the peer's address and, behind nginx, the client it forwarded for. */
  public String origin() {
    return origin(request);
  }

  /** {@link #origin()} of a request not (yet) made a call (the authentication in front of the router). */
  public static String origin(Request request) {
    String forwarded = request.getHeaders().get("X-Forwarded-For");
    String peer = Request.getRemoteAddr(request);
    return forwarded == null || forwarded.isBlank() ? peer : forwarded + " via " + peer;
  }

  /**
   * The client's address, for per-address limits: behind nginx the last X-Forwarded-For entry (the one nginx
   * appended: what came before it is the client's to write), else the peer's address.
   */
  public String clientAddress() {
    String forwarded = request.getHeaders().get("X-Forwarded-For");
    if (forwarded != null && !forwarded.isBlank()) {
      String last = forwarded.substring(forwarded.lastIndexOf(',') + 1).trim();
      if (!last.isEmpty()) {
        return last;
      }
    }
    return Request.getRemoteAddr(request);
  }

  /** This frontend calling its own API for the KNIX door ({@link LoopbackApi}): its limits were applied there. */
  public boolean isLoopback() {
    return LoopbackApi.TOKEN.equals(request.getHeaders().get(LoopbackApi.TOKEN_HEADER));
  }

  public String header(String name) {
    return request.getHeaders().get(name);
  }

  /** The media type without parameters, lower case; "" when absent. */
  public String contentType() {
    String ct = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
    return ct == null ? "" : ct.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
  }

  public synchronized byte[] body() {
    if (body != null) {
      return body;
    }
    long declared = request.getLength();
    if (declared > maxBody) {
      throw tooLarge(declared);
    }
    if (declared == 0) {
      body = new byte[0];
      request.setAttribute(BODY_READ_ATTRIBUTE, Boolean.TRUE);
      return body;
    }
    // a body of unknown length (chunked) may be as large as the route allows: reserve that much
    long reserve = declared > 0 ? declared : maxBody;
    if (budget != null) {
      if (!budget.tryTake(reserve)) {
        throw busy(reserve);
      }
      taken += reserve;
    }
    try (InputStream in = Request.asInputStream(request)) {
      byte[] b;
      if (declared > 0) { // exactly as large as declared: no growing copies
        b = new byte[(int) declared];
        int n = in.readNBytes(b, 0, b.length);
        if (n < b.length) {
          throw ApiException.badRequest(
              "the request body ended after " + n + " of its " + declared + " bytes");
        }
      } else {
        b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBody + 1));
        if (b.length > maxBody) {
          throw tooLarge(-1);
        }
      }
      request.setAttribute(BODY_READ_ATTRIBUTE, Boolean.TRUE);
      body = b;
      return b;
    } catch (IOException e) {
      throw ApiException.badRequest("cannot read the request body: " + e.getMessage());
    }
  }

  private ApiException busy(long bytes) {
    return new ApiException(
        503,
        "busy",
        "this frontend is reading as many request bodies as its memory allows "
            + "(frontend setting body.budget.bytes = " + budget.capacity() + "); this one (" + bytes
            + " bytes) was not read: try again in a moment",
        Map.of(Reply.RETRY_AFTER_S, Integer.toString(BUSY_RETRY_AFTER_S)));
  }

  /** The largest body this call's route takes. */
  private long maxBody() {
    return maxBody;
  }

  private ApiException tooLarge(long size) {
    return new ApiException(
        413,
        "too_large",
        "request body " + (size >= 0 ? "of " + size + " bytes " : "")
            + "is larger than the limit of " + maxBody
            + " bytes of this route (docs/api.md \"Request bodies\"; "
            + "frontend setting max.body.bytes)");
  }

  public JsonNode json(String what) {
    return Json.parse(body(), what);
  }
}
