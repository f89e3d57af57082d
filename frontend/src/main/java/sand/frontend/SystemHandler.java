package sand.frontend;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.function.BooleanSupplier;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code /healthz} (alive), {@code /readyz} (can answer invocations: {@link Readiness}), {@code /metrics} (Prometheus text; the operator's only: it names every application) and
 * {@code /api/v1/openapi.json} (from the jar).
 */
public final class SystemHandler {
  public static final String OPENAPI_RESOURCE = "/openapi.json";

  private final String frontendId;
  private final FrontendMetrics metrics;
  private final BooleanSupplier listening;
  private final Readiness readiness;
  private final byte[] openapi;

  SystemHandler(
      String frontendId, FrontendMetrics metrics, BooleanSupplier listening, Readiness readiness) {
    this.frontendId = frontendId;
    this.metrics = metrics;
    this.listening = listening;
    this.readiness = readiness;
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
    r.add("GET", "/readyz", false, c -> {
      boolean ready = readiness.ready();
      return Reply.json(ready ? 200 : 503, readiness.report(ready));
    });
    r.add("GET", "/metrics", false, c -> {
      operator(c);
      return Reply.text(200, sand.cluster.metrics.Exposition.CONTENT_TYPE, metrics.render());
    });
    r.add("GET", "/api/v1/openapi.json", false, c -> new Reply(200, Reply.JSON, openapi, Map.of()));
  }

  /** The metrics list every application with its counts: only the operator reads them (issue 26, finding 13). */
  private static void operator(Call c) {
    if (c.isAdmin()) {
      return;
    }
    if (c.account() == null) {
      throw new ApiException(
          401,
          "unauthorized",
          "/metrics is the operator's: send 'Authorization: Bearer <admin "
              + "key>' (the frontend setting admin.key; make up writes it to $SAND_HOME/admin-key)");
    }
    throw new ApiException(
        403, "forbidden", "/metrics is the operator's, not an account's: it needs the admin key");
  }

  /** Healthy while the response topic is being read (without it no request could be answered). */
  Reply health() {
    boolean ok = listening.getAsBoolean();
    return Reply.json(
        ok ? 200 : 503,
        Json.object()
            .put("status", ok ? "ok" : "not listening for results")
            .put("frontend", frontendId));
  }
}
