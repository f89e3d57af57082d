package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.metrics.StoreHealth;
import sand.frontend.internal.Json;

/**
 * Whether this frontend can answer invocations now, for nginx ({@link DecliningHandler}) and {@code GET /readyz}.
 *
 * <p>Ready: not stopping, and results can reach it, through its response topic (Kafka answered its consumer within
 * the setting ready.results.silence.ms) or through a host agent's gate that is connected. A frontend that cannot receive
 * results would take a request and answer 504 after the caller's whole timeout; declined, the request goes to a
 * frontend that can. Cassandra is reported, not required: the API degrades without it (cached applications, stale
 * answers: docs/operations.md), and an outage of the shared cluster state would otherwise take every frontend out of
 * nginx's rotation at once.
 */
final class Readiness {
  private static final Logger LOG = LoggerFactory.getLogger(Readiness.class);
  private final String frontendId;
  private final Duration silenceMax;
  private final BooleanSupplier topicPolled;
  private final LongSupplier gatesUp;
  private final StoreHealth health;
  private volatile boolean stopping;
  private volatile boolean lastReady = true;

  /**
   * @param topicPolled whether Kafka answered the response topic's consumer within {@code silenceMax}
   * @param gatesUp     how many host agents' gates are connected (0 without gates)
   */
  Readiness(
      String frontendId,
      Duration silenceMax,
      BooleanSupplier topicPolled,
      LongSupplier gatesUp,
      StoreHealth health) {
    this.frontendId = frontendId;
    this.silenceMax = silenceMax;
    this.topicPolled = topicPolled;
    this.gatesUp = gatesUp;
    this.health = health;
  }

  void stopping() {
    stopping = true;
  }

  boolean stopped() {
    return stopping;
  }

  /** Ready to take an invocation; a change is logged once. */
  boolean ready() {
    boolean ready = !stopping && (topicPolled.getAsBoolean() || gatesUp.getAsLong() > 0);
    if (ready != lastReady) {
      lastReady = ready;
      if (ready) {
        LOG.info("[frontend {}] ready again: results reach it", frontendId);
      } else if (!stopping) {
        LOG.warn(
            "[frontend {}] not ready: Kafka has not answered its response topic's consumer for {} s and no host agent's gate is"
                + " connected; invocations are declined (nginx sends them to another frontend)",
            frontendId,
            silenceMax.toMillis() / 1000.0);
      }
    }
    return ready;
  }

  /** {@code GET /readyz}'s body: the answer and each check. */
  ObjectNode report(boolean ready) {
    ObjectNode checks = Json.object()
        .put("stopping", stopping)
        .put("response_topic_polled", topicPolled.getAsBoolean())
        .put("gates_connected", gatesUp.getAsLong())
        .put("cluster_state_answered", health.up(StoreHealth.CLUSTER_STATE))
        .put("global_data_answered", health.up(StoreHealth.GLOBAL_DATA));
    ObjectNode body =
        Json.object().put("status", ready ? "ready" : "not ready").put("frontend", frontendId);
    body.set("checks", checks);
    return body;
  }
}
