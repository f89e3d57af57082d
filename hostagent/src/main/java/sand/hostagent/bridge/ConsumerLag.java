package sand.hostagent.bridge;

import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Each grain topic's consumer lag on this host: records behind the end, summed over this host's partitions of it,
 * as the consumer's last fetch said ({@link Consumer#currentLag}: no request to Kafka). The consumer may only be
 * asked on its own thread, so the loop {@link #refresh}es this at most once a second and any thread reads it.
 */
final class ConsumerLag {
  private final Consumer<?, ?> consumer;
  private volatile Map<String, Long> byTopic = Map.of();
  private long refreshedMs =
      Long.MIN_VALUE / 2; // consumer thread only (half: no overflow when subtracted)

  ConsumerLag(Consumer<?, ?> consumer) {
    this.consumer = consumer;
  }

  /** Consumer thread only. */
  void refresh(long nowMs) {
    if (nowMs - refreshedMs < 1000) {
      return;
    }
    refreshedMs = nowMs;
    Map<String, Long> out = new TreeMap<>();
    for (TopicPartition tp : consumer.assignment()) {
      OptionalLong l = consumer.currentLag(tp);
      if (l.isPresent()) {
        out.merge(tp.topic(), l.getAsLong(), Long::sum);
      }
    }
    byTopic = Map.copyOf(out);
  }

  Map<String, Long> byTopic() {
    return byTopic;
  }
}
