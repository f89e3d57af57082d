package sand.hostagent;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import sand.cluster.KafkaClients;
import sand.contracts.TopicNames;

/**
 * Creates the topics SAND needs before anyone uses them, instead of relying on auto-creation: the
 * control topic has one partition (one order of events), and grain topics take records as large as a
 * local bus message (Kafka's default limit is 1 MiB).
 */
final class KafkaTopics implements GrainTopics, AutoCloseable {
  private final Admin admin;
  private final int partitions;
  private final short replication;

  KafkaTopics(String bootstrap, int partitions, short replication) {
    this.admin = Admin.create(KafkaClients.adminProperties(bootstrap));
    this.partitions = partitions;
    this.replication = replication;
  }

  private NewTopic topic(String name, int parts) {
    return KafkaClients.newTopic(name, parts, replication);
  }

  void ensureControlTopic() {
    ensure(List.of(topic(TopicNames.CONTROL, 1)));
  }

  @Override
  public void ensureGrainTopics(String appId, Set<String> grains) {
    List<NewTopic> topics = new ArrayList<>();
    for (String g : grains) {
      topics.add(topic(TopicNames.grainTopic(appId, g), partitions));
    }
    ensure(topics);
  }

  private void ensure(Collection<NewTopic> topics) {
    for (var e : admin.createTopics(topics).values().entrySet()) {
      try {
        e.getValue().get(30, TimeUnit.SECONDS);
      } catch (ExecutionException ex) {
        if (!(ex.getCause() instanceof TopicExistsException)) {
          throw new IllegalStateException(
              "cannot create Kafka topic " + e.getKey() + ": " + ex.getCause(), ex);
        }
      } catch (TimeoutException ex) {
        throw new IllegalStateException(
            "Kafka did not create topic " + e.getKey() + " within 30 s", ex);
      } catch (InterruptedException ex) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted creating topic " + e.getKey(), ex);
      }
    }
  }

  @Override
  public void close() {
    admin.close();
  }
}
