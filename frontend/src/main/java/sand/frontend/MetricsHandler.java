package sand.frontend;

import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import sand.frontend.internal.Router;

/** Counts every request by the route it matched (not its raw path, which has names in it) and status. */
public final class MetricsHandler extends Handler.Wrapper {
  private final FrontendMetrics metrics;

  public MetricsHandler(FrontendMetrics metrics, Handler next) {
    super(next);
    this.metrics = metrics;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    long t0 = System.nanoTime();
    Request.addCompletionListener(request, failure -> count(request, response, t0));
    return super.handle(request, response, callback);
  }

  private void count(Request request, Response response, long t0) {
    Object route = request.getAttribute(Router.ROUTE_ATTRIBUTE);
    metrics.request(
        request.getMethod(),
        route == null ? "unmatched" : route.toString(),
        response.getStatus(),
        (System.nanoTime() - t0) / 1e9);
  }
}
