package sand.frontend;

import java.io.IOException;
import java.io.InputStream;
import java.util.function.BooleanSupplier;

/** {@code /healthz}, {@code /metrics} (Prometheus text) and {@code /api/v1/openapi.json} (from the jar). */
public final class SystemHandler {
  public static final String OPENAPI_RESOURCE = "/openapi.json";

  private final String frontendId;
  private final FrontendMetrics metrics;
  private final BooleanSupplier listening;
  private final byte[] openapi;

  public SystemHandler(String frontendId, FrontendMetrics metrics, BooleanSupplier listening) {
    this.frontendId = frontendId;
    this.metrics = metrics;
    this.listening = listening;
    this.openapi = openapi();
  }

  public static byte[] openapi() {
    try (InputStream in = SystemHandler.class.getResourceAsStream(OPENAPI_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("openapi.json is missing from the frontend jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read openapi.json from the frontend jar", e);
    }
  }

  public void routes(Router r) {
    r.add("GET", "/healthz", false, c -> health());
    r.add("GET", "/metrics", false, c -> Reply.text(200, "text/plain; version=0.0.4; charset=utf-8",
        metrics.render()));
    r.add("GET", "/api/v1/openapi.json", false, c -> new Reply(200, Reply.JSON, openapi, java.util.Map.of()));
  }

  /** Healthy while the response topic is being read (without it no request could be answered). */
  Reply health() {
    boolean ok = listening.getAsBoolean();
    return Reply.json(ok ? 200 : 503, Json.object().put("status", ok ? "ok" : "not listening for results")
        .put("frontend", frontendId));
  }
}
