package sand.frontend.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** An answer to one call: status, content type, body and extra headers. */
public record Reply(int status, String contentType, byte[] body, Map<String, String> headers) {
  public static final String JSON = "application/json";
  /** An error's extra field saying how many seconds to wait before trying again (also sent as Retry-After). */
  public static final String RETRY_AFTER_S = "retry_after_s";
  /** An error's extra field naming the credentials a 401 wants (also sent as WWW-Authenticate). */
  public static final String AUTHENTICATE = "authenticate";

  public static Reply json(int status, JsonNode body) {
    return new Reply(status, JSON, Json.bytes(body), Map.of());
  }

  public static Reply ok(JsonNode body) {
    return json(200, body);
  }

  public static Reply text(int status, String contentType, String body) {
    return new Reply(status, contentType, body.getBytes(StandardCharsets.UTF_8), Map.of());
  }

  public static Reply error(ApiException e) {
    var err = Json.object();
    var inner = err.putObject("error").put("code", e.code()).put("message", e.getMessage());
    new java.util.TreeMap<>(e.extra())
        .forEach(inner::put); // in name order: the same bytes every run
    Reply r = json(e.status(), err);
    // a 429 or 503 that says when to come back says it in HTTP's own header too
    if (e.extra().containsKey(AUTHENTICATE)) {
      r = r.withHeader("WWW-Authenticate", e.extra().get(AUTHENTICATE));
    }
    return e.extra().containsKey(RETRY_AFTER_S)
        ? r.withHeader("Retry-After", e.extra().get(RETRY_AFTER_S))
        : r;
  }

  public Reply withHeader(String name, String value) {
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.put(name, value);
    return new Reply(status, contentType, body, h);
  }
}
