package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import sand.frontend.internal.Call;
import sand.frontend.knix.KnixManagement.Failure;

/** Reading KNIX's requests: their fields, and where the caller reached this frontend. */
final class KnixRequests {
  private KnixRequests() {}

  /**
   * The URL callers reached this frontend at: through nginx, the address they called nginx at; for a grain's
   * request, none (the endpoints it is told are paths).
   */
  static String baseUrl(Call call) {
    if (call
        == null) { // a grain's request (GrainManagement): it knows no address of ours; a path it is
      return "";
    }
    String host = call.header("X-Forwarded-Host");
    if (host == null || host.isBlank()) {
      host = call.header("Host");
    }
    String proto = call.header("X-Forwarded-Proto");
    return (proto == null || proto.isBlank() ? "http" : proto) + "://" + host;
  }

  /** The text of {@code node.field}, or a failure naming {@code where.field}. */
  static String text(JsonNode node, String field, String where) {
    JsonNode v = node.path(field);
    if (!v.isTextual() || v.asText().isEmpty()) {
      throw new Failure(where + "." + field + " is missing");
    }
    return v.asText();
  }

  /** {@code s} as one segment of an API path. */
  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
