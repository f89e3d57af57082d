package sand.frontend.internal;

import java.util.Map;

/**
 * An error answer: HTTP status, a stable code, and a message that says what failed and what to do.
 * Rendered as {@code {"error": {"code", "message", ...extra}}}.
 */
public final class ApiException extends RuntimeException {
  private final int status;
  private final String code;
  private final Map<String, String> extra;

  public ApiException(int status, String code, String message) {
    this(status, code, message, Map.of());
  }

  public ApiException(int status, String code, String message, Map<String, String> extra) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = Map.copyOf(extra);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public Map<String, String> extra() {
    return extra;
  }

  /** A call that needs an API key came without one. */
  public static ApiException missingKey() {
    return new ApiException(
        401,
        "unauthorized",
        "this call needs an API key: send 'Authorization: Bearer <api key>' (POST /api/v1/accounts gives one)");
  }

  public static ApiException badRequest(String message) {
    return new ApiException(400, "bad_request", message);
  }

  public static ApiException notFound(String message) {
    return new ApiException(404, "not_found", message);
  }

  public static ApiException conflict(String message) {
    return new ApiException(409, "conflict", message);
  }
}
