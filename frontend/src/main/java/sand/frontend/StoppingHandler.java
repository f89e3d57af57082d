package sand.frontend;

import java.io.IOException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * Once the server is stopping, a request that arrives (on a connection nginx kept alive) is not answered: its
 * connection is closed. nginx takes that for an error and sends the request to another frontend, and counts this
 * one as failed (max_fails), so it sends it nothing more; a 503 would reach the caller. Requests under way before
 * the stop are left to the wrapped handler (Jetty's GracefulHandler lets them finish).
 */
final class StoppingHandler extends Handler.Wrapper implements LifeCycle.Listener {
  private volatile boolean stopping;

  StoppingHandler(Handler handler) {
    super(handler);
  }

  @Override
  public void lifeCycleStopping(LifeCycle event) {
    stopping = true;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    if (stopping) {
      request.getConnectionMetaData().getConnection().getEndPoint().close();
      callback.failed(new IOException("this frontend is stopping"));
      return true;
    }
    return super.handle(request, response, callback);
  }
}
