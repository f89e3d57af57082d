package sand.hostagent;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.KafkaClients;
import sand.contracts.TopicNames;

/**
 * Creates the topics SAND needs before anyone uses them, instead of relying on auto-creation: the
 * control topic has one partition (one order of events), and grain topics take records as large as a
 * local bus message (Kafka's default limit is 1 MiB).
 */
final class KafkaTopics implements GrainTopics, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaTopics.class);
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
  public void ensureGrainTopics(String appId, Set<String> grains, int hosts) {
    int wanted = Math.max(partitions, hosts);
    List<NewTopic> topics = new ArrayList<>();
    for (String g : grains) {
      topics.add(topic(TopicNames.grainTopic(appId, g), wanted));
    }
    ensure(topics);
    grow(topics.stream().map(NewTopic::name).toList(), wanted);
  }

  /** Topics made when the cluster had fewer hosts get partitions up to {@code wanted} (never fewer: Kafka cannot). */
  private void grow(List<String> names, int wanted) {
    try {
      Map<String, NewPartitions> more = new HashMap<>();
      admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS).forEach((name, d) -> {
        if (d.partitions().size() < wanted) {
          more.put(name, NewPartitions.increaseTo(wanted));
        }
      });
      if (!more.isEmpty()) {
        admin.createPartitions(more).all().get(30, TimeUnit.SECONDS);
        LOG.info(
            "grain topics {} now have {} partitions (the cluster's hosts)", more.keySet(), wanted);
      }
    } catch (ExecutionException | TimeoutException e) {
      // the topics work as they are; the next deploy tries again
      LOG.warn("could not give grain topics {} partitions: {}", names, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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
