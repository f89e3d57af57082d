package sand.frontend.trigger;

import java.util.List;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import sand.cluster.KafkaClients;

/** {@link TopicSource} on the cluster's Kafka, with the frontend's login. */
public final class KafkaTopicSource implements TopicSource {
  /** A batch's executions may take minutes (attempts x timeout): the group waits that long for a poll. */
  static final int MAX_POLL_INTERVAL_MS = 30 * 60 * 1000;

  private final String bootstrap;

  public KafkaTopicSource(String bootstrap) {
    this.bootstrap = bootstrap;
  }

  @Override
  public OptionalInt partitions(String topic) {
    try (Admin admin = Admin.create(KafkaClients.adminProperties(bootstrap))) {
      var d = admin.describeTopics(List.of(topic)).allTopicNames().get(20, TimeUnit.SECONDS);
      return OptionalInt.of(d.get(topic).partitions().size());
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        return OptionalInt.empty();
      }
      throw new IllegalStateException(
          "Kafka could not describe topic " + topic + ": " + e.getCause(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (Exception e) {
      throw new IllegalStateException("Kafka could not describe topic " + topic + ": " + e, e);
    }
  }

  @Override
  public Consumer<String, byte[]> consumer(
      String group, String start, int maxRecords, String clientId) {
    Properties c = KafkaClients.clientProperties(bootstrap);
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
    c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
        false); // committed once the batch's results are stored
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, start);
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxRecords);
    c.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, MAX_POLL_INTERVAL_MS);
    c.put(
        ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG,
        10_000); // a dead frontend's partitions move in ~10 s
    c.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 3_000);
    c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, KafkaClients.MAX_REQUEST_BYTES);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return new KafkaConsumer<>(c);
  }
}
