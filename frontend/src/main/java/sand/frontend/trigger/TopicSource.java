package sand.frontend.trigger;

import java.util.OptionalInt;
import org.apache.kafka.clients.consumer.Consumer;

/** Where queue triggers read: Kafka ({@link KafkaTopicSource}); tests hand in mock consumers. */
public interface TopicSource {
  /**
   * The topic's partitions; empty when it does not exist. IllegalStateException when Kafka cannot say (down, or
   * this frontend may not describe it: an ACL).
   */
  OptionalInt partitions(String topic);

  /** A consumer in {@code group}, starting at {@code start} (earliest or latest) where the group has no offset. */
  Consumer<String, byte[]> consumer(String group, String start, int maxRecords, String clientId);
}
