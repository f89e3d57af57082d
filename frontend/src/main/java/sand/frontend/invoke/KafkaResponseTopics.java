package sand.frontend.invoke;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import sand.cluster.KafkaClients;

/**
 * Creates a frontend's response topic: one partition (one reader, the frontend), records as large as a
 * local bus message (docs/host-agent.md "Record size"), replicated as the grain topics are (the cluster's
 * {@code kafka.replication}): a result is as durable as the request that produced it.
 */
public final class KafkaResponseTopics implements ResponseListener.TopicCreator {
  private final String bootstrap;
  private final short replication;

  public KafkaResponseTopics(String bootstrap, int replication) {
    this.bootstrap = bootstrap;
    this.replication = (short) replication;
  }

  /** The topic as it is created. */
  NewTopic newTopic(String topic) {
    return KafkaClients.newTopic(topic, 1, replication);
  }

  @Override
  public void ensureResponseTopic(String topic) {
    try (Admin admin = Admin.create(KafkaClients.adminProperties(bootstrap))) {
      admin.createTopics(List.of(newTopic(topic))).all().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException(
            "cannot create response topic " + topic + ": " + e.getCause(), e);
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot create response topic " + topic + ": " + e, e);
    }
  }
}
