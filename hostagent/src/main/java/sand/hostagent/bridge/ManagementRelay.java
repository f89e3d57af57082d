package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.datalayer.DataLayerException;
import sand.datalayer.LocalDataLayer;

/**
 * A grain's management request (datalayer.thrift {@code manage}: KNIX's {@code context.addTrigger},
 * {@code addStorageTriggerForWorkflow}, {@code _invoke_management_api}...) on its way to a frontend: a sandbox has
 * no network, so the host agent hands the request to a frontend that polls its gate, as a mailbox message
 * {@code {"management": {"id", "app", "request"}}}, and the frontend answers through the gate
 * ({@code answer}) after running it as the application's owner. The application is the one the grain's credential
 * names: a grain cannot speak for another.
 *
 * <p>Bounded: at most {@link #PER_APP} calls of one application and {@link #MAX_PENDING} in all wait here (more are
 * refused at once with QUOTA_EXCEEDED), each for at most {@link #WAIT}; the caller's own Thrift connection thread
 * waits, no other.
 */
public final class ManagementRelay implements LocalDataLayer.ManagementDoor {
  private static final Logger LOG = LoggerFactory.getLogger(ManagementRelay.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  static final int PER_APP = 4;
  static final int MAX_PENDING = 256;
  static final Duration WAIT = Duration.ofSeconds(60);

  /** Where a message for a frontend goes: false when no frontend polls this host. */
  @FunctionalInterface
  public interface Frontends {
    boolean offer(byte[] message);
  }

  private final String host;
  private final Frontends frontends;
  private final Duration wait;
  private final Map<String, CompletableFuture<byte[]>> pending = new ConcurrentHashMap<>();
  private final Map<String, Integer> perApp = new ConcurrentHashMap<>();

  public ManagementRelay(String host, Frontends frontends) {
    this(host, frontends, WAIT);
  }

  ManagementRelay(String host, Frontends frontends, Duration wait) {
    this.host = host;
    this.frontends = frontends;
    this.wait = wait;
  }

  @Override
  public byte[] manage(String app, byte[] request) {
    ObjectNode message = JSON.createObjectNode();
    ObjectNode m = message.putObject("management");
    String id = UUID.randomUUID().toString();
    m.put("id", id).put("app", app);
    try {
      m.set("request", JSON.readTree(request));
    } catch (IOException e) {
      throw refused(
          DataLayerException.Code.BAD_REQUEST,
          "a management request is JSON "
              + "{\"action\": ..., \"data\": {...}}; this one does not parse: " + e.getMessage());
    }
    if (!m.get("request").isObject()) {
      throw refused(
          DataLayerException.Code.BAD_REQUEST,
          "a management request is a JSON object " + "{\"action\": ..., \"data\": {...}}");
    }
    if (!acquire(app)) {
      throw refused(
          DataLayerException.Code.QUOTA_EXCEEDED,
          "the application has " + PER_APP
              + " management calls under way on this host, as many as it may; call again when one has ended");
    }
    CompletableFuture<byte[]> reply = new CompletableFuture<>();
    try {
      if (pending.size() >= MAX_PENDING) {
        throw refused(
            DataLayerException.Code.QUOTA_EXCEEDED,
            "this host has " + MAX_PENDING + " management calls under way; call again in a moment");
      }
      pending.put(id, reply);
      if (!frontends.offer(JSON.writeValueAsBytes(message))) {
        throw refused(
            DataLayerException.Code.UNAVAILABLE,
            "no frontend polls this host's gate " + "now; call again in a moment");
      }
      return reply.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.warn(
          "[host {}] [app {}] management request {}: no frontend answered within {} s",
          host,
          app,
          id,
          wait.toSeconds());
      throw refused(
          DataLayerException.Code.UNAVAILABLE,
          "no frontend answered within " + wait.toSeconds()
              + " s; the request may still have been carried out");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw refused(DataLayerException.Code.UNAVAILABLE, "the host agent is stopping");
    } catch (ExecutionException | IOException e) {
      throw refused(DataLayerException.Code.UNAVAILABLE, e.toString());
    } finally {
      pending.remove(id);
      release(app);
    }
  }

  private boolean acquire(String app) {
    boolean[] taken = {false};
    perApp.compute(app, (a, n) -> {
      int now = n == null ? 0 : n;
      taken[0] = now < PER_APP;
      return taken[0] ? now + 1 : n;
    });
    return taken[0];
  }

  private void release(String app) {
    perApp.computeIfPresent(app, (a, n) -> n <= 1 ? null : n - 1);
  }

  /** A frontend's reply to request {@code id}; false when nobody waits for it (late, or unknown). */
  public boolean answer(String id, byte[] reply) {
    CompletableFuture<byte[]> f = pending.get(id);
    return f != null && f.complete(reply);
  }

  int pending() {
    return pending.size();
  }

  private static DataLayerException refused(DataLayerException.Code code, String message) {
    return new DataLayerException(code, message);
  }
}
