package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Fields;

/**
 * One HTTP call as an endpoint sees it: method, path parameters, query, the authenticated account (or
 * null) and the body, read at most once and at most {@code maxBody} bytes (413 beyond).
 */
public final class Call {
  private final Request request;
  private final Map<String, String> params;
  private final String account;
  private final long maxBody;
  private Fields query;
  private byte[] body;

  Call(Request request, Map<String, String> params, String account, long maxBody) {
    this.request = request;
    this.params = params;
    this.account = account;
    this.maxBody = maxBody;
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
    return Boolean.TRUE.equals(request.getAttribute(AuthHandler.ADMIN_ATTRIBUTE));
  }

  public String query(String name) {
    if (query == null) {
      query = Request.extractQueryParameters(request);
    }
    return query.getValue(name);
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
    throw ApiException.badRequest("query parameter " + name + "=" + v + " is invalid: write " + name + "=1 (or 0)");
  }

  /** Who sent this, for an audit line: the peer's address and, behind nginx, the client it forwarded for. */
  public String origin() {
    String forwarded = request.getHeaders().get("X-Forwarded-For");
    String peer = Request.getRemoteAddr(request);
    return forwarded == null || forwarded.isBlank() ? peer : forwarded + " via " + peer;
  }

  public String header(String name) {
    return request.getHeaders().get(name);
  }

  /** The media type without parameters, lower case; "" when absent. */
  public String contentType() {
    String ct = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
    return ct == null ? "" : ct.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
  }

  public byte[] body() {
    if (body != null) {
      return body;
    }
    long declared = request.getLength();
    if (declared > maxBody) {
      throw tooLarge(declared);
    }
    try (InputStream in = Request.asInputStream(request)) {
      byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, maxBody + 1));
      if (b.length > maxBody) {
        throw tooLarge(-1);
      }
      body = b;
      return b;
    } catch (IOException e) {
      throw ApiException.badRequest("cannot read the request body: " + e.getMessage());
    }
  }

  private ApiException tooLarge(long size) {
    return new ApiException(413, "too_large", "request body " + (size >= 0 ? "of " + size + " bytes " : "")
        + "is larger than the limit of " + maxBody + " bytes (frontend setting max.body.bytes)");
  }

  public JsonNode json(String what) {
    return Json.parse(body(), what);
  }
}
