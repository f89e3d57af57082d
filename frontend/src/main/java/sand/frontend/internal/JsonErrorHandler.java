package sand.frontend.internal;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's own errors (a URL it refuses before any route sees it, a malformed request line or header, a body it
 * cannot read) answered as the API's JSON error, for every method, instead of Jetty's HTML page (or, for PUT and
 * DELETE, an empty body): the OpenAPI document promises {"error": {"code", "message"}} everywhere.
 */
public final class JsonErrorHandler extends ErrorHandler {

  @Override
  public boolean errorPageForMethod(String method) {
    return true;
  }

  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      String message,
      Throwable cause,
      Callback callback) {
    Reply reply = Reply.error(error(code, message));
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, reply.contentType());
    response.write(true, ByteBuffer.wrap(reply.body()), callback);
  }

  /** The API's error for a status Jetty chose, with what the caller can do about it. */
  private static ApiException error(int status, String reason) {
    String why = reason == null || reason.isBlank() ? "" : reason + ": ";
    return switch (status) {
      case 400 ->
        new ApiException(
            400,
            "bad_request",
            "bad request: " + why + "names in the URL are letters, "
                + "digits, '_', '.', '-' (the routes and their patterns are in GET /api/v1/openapi.json)");
      case 404 ->
        ApiException.notFound("no such route (the routes are listed at GET /api/v1/openapi.json)");
      case 405 ->
        new ApiException(
            405, "method_not_allowed", why + "see GET /api/v1/openapi.json for the methods");
      case 413 -> new ApiException(413, "too_large", why + "the request is too large");
      case 414 -> new ApiException(414, "uri_too_long", why + "the URL is too long");
      case 431 ->
        new ApiException(431, "headers_too_large", why + "the request's headers are too large");
      default ->
        status >= 500
            ? new ApiException(
                status, "internal", "the frontend failed (" + status + "): " + why + "try again")
            : new ApiException(
                status,
                "http_" + status,
                why.isEmpty() ? "HTTP " + status : why.substring(0, why.length() - 2));
    };
  }
}
