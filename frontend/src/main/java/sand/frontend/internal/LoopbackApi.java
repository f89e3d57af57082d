package sand.frontend.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * SAND's own REST API, called over HTTP on this frontend's port: what the KNIX door does, it does as a client of
 * the API with the caller's key, so every check of the API (authentication, ownership, validation, quotas, limits)
 * applies to it unchanged.
 */
public final class LoopbackApi {
  /**
   * Marks this process's own calls (a random secret of the process, never sent anywhere else): a KNIX sign-up
   * counts against the caller's address in the KNIX door, not again against this frontend's own address.
   */
  static final String TOKEN_HEADER = "X-Sand-Loopback";

  static final String TOKEN = Ids.newId();

  /** An answer: HTTP status and JSON body (null when the body is not JSON). */
  public record Answer(int status, JsonNode body) {
    public boolean ok() {
      return status >= 200 && status < 300;
    }

    /** The API's error message, or what the status says. */
    public String message() {
      String m = body == null ? "" : body.path("error").path("message").asText("");
      return m.isEmpty() ? "HTTP " + status : m;
    }
  }

  /** How the KNIX door reaches the API (tests hand in their own). */
  @FunctionalInterface
  public interface Api {
    Answer call(String method, String path, String key, String contentType, byte[] body);
  }

  private final HttpClient http = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5))
      .build();
  private final Supplier<URI> base;

  /** @param base this frontend's own address (known once its connector is started) */
  public LoopbackApi(Supplier<URI> base) {
    this.base = base;
  }

  public Answer call(String method, String path, String key, String contentType, byte[] body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(base.get().resolve(path))
        .timeout(Duration.ofSeconds(60))
        .method(
            method,
            body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body));
    if (key != null && !key.isEmpty()) { // none: a call anyone may make (sign-up)
      b.header("Authorization", "Bearer " + key);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    b.header(TOKEN_HEADER, TOKEN);
    try {
      HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      JsonNode json;
      try {
        json = r.body().length == 0 ? null : Json.MAPPER.readTree(r.body());
      } catch (IOException e) {
        json = null;
      }
      return new Answer(r.statusCode(), json);
    } catch (IOException e) {
      throw new ApiException(
          502, "unavailable", "this frontend's own API did not answer: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiException(503, "unavailable", "interrupted");
    }
  }
}
