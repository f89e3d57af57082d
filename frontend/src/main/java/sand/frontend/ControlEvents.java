package sand.frontend;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import sand.contracts.ControlEvent;
import sand.contracts.TopicNames;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;

/**
 * Deploy and undeploy events on {@code sand.control} (docs/host-agent.md "Control events"), key = app id.
 * Sent after the cluster state is written, so an agent that reads the event finds the new state; an
 * agent that misses it catches up at its next periodic reconcile.
 */
public final class ControlEvents {
  private final Producer<String, byte[]> producer;

  public ControlEvents(Producer<String, byte[]> producer) {
    this.producer = producer;
  }

  public void publish(String type, String appId, List<String> hosts) {
    try {
      producer
          .send(new ProducerRecord<>(
              TopicNames.CONTROL, appId, ControlEvent.application(type, appId, hosts)))
          .get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // The state is written; agents reconcile periodically, so the deploy still happens, only
      // later.
      throw new ApiException(
          502,
          "unavailable",
          "the " + type + " of application " + appId + " is recorded but "
              + "the control event could not be sent to Kafka (" + e
              + "); the host agents pick it up at their next "
              + "reconcile (30 s)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiException(502, "unavailable", "interrupted sending the control event");
    }
  }

  /**
   * Operators changed the schedule of {@code host} (cordon, drain, uncordon): its host agent reads it again and
   * reconciles. Best effort like {@link #publishBuckets}: an agent that misses it reconciles within 30 s anyway.
   */
  public void publishHost(String host) {
    var v = Json.object().put("type", "host").put("host", host);
    try {
      producer
          .send(new ProducerRecord<>(TopicNames.CONTROL, host, Json.bytes(v)))
          .get(5, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // stored: the agent reads its schedule at its next reconcile
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The triggerable buckets of {@code owner} changed (docs/data-triggers.md): host agents read them again. Waits
   * (bounded) until Kafka has the event, so the change reaches the agents in tens of milliseconds after the call
   * answers; best effort: an agent that misses it reads them again within 5 s anyway.
   */
  public void publishBuckets(String owner) {
    var v = Json.object().put("type", "buckets").put("owner", owner);
    try {
      producer
          .send(new ProducerRecord<>(TopicNames.CONTROL, owner, Json.bytes(v)))
          .get(5, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // the change is stored: agents see it at their next read of the account's buckets (5 s)
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
