package sand.frontend;

import java.io.IOException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * A request this frontend cannot serve is not answered: its connection is closed. nginx takes that for an error,
 * sends the request to another frontend and counts this one as failed (max_fails), so it sends it nothing more
 * for fail_timeout and then tries it again (the frontend comes back without a restart); a 503 would reach the caller.
 *
 * <p>Declined: every request once the server is stopping (requests under way before the stop are left to the
 * wrapped handler: Jetty's GracefulHandler lets them finish), and invocations ({@value #INVOCATIONS}...) while
 * the frontend is not {@link Readiness#ready() ready}. {@code /healthz}, {@code /readyz} and the API are served
 * while not ready: they need no results.
 */
final class DecliningHandler extends Handler.Wrapper implements LifeCycle.Listener {
  static final String INVOCATIONS = "/app/";

  private final Readiness readiness;

  DecliningHandler(Handler handler, Readiness readiness) {
    super(handler);
    this.readiness = readiness;
  }

  @Override
  public void lifeCycleStopping(LifeCycle event) {
    readiness.stopping();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    if (readiness.stopped()
        || (Request.getPathInContext(request).startsWith(INVOCATIONS) && !readiness.ready())) {
      request.getConnectionMetaData().getConnection().getEndPoint().close();
      callback.failed(new IOException(
          readiness.stopped() ? "this frontend is stopping" : "this frontend is not ready"));
      return true;
    }
    return super.handle(request, response, callback);
  }
}
