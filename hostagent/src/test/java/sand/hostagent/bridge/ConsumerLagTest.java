package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** A grain topic's lag: summed over this host's partitions, refreshed at most once a second. */
class ConsumerLagTest {
  @Test
  void lagPerTopicSummedOverPartitionsAndRefreshedOncePerSecond() {
    TopicPartition p0 = new TopicPartition("sand.shop.resize", 0);
    TopicPartition p1 = new TopicPartition("sand.shop.resize", 1);
    Map<TopicPartition, Long> lags = new ConcurrentHashMap<>(Map.of(p0, 4L, p1, 2L));
    // Kafka's MockConsumer fetches nothing, so it knows no lag: what the real one's last fetch
    // would say
    MockConsumer<String, byte[]> consumer =
        new MockConsumer<>(AutoOffsetResetStrategy.EARLIEST.name()) {
          @Override
          public synchronized OptionalLong currentLag(TopicPartition tp) {
            return OptionalLong.of(lags.get(tp));
          }
        };
    consumer.assign(List.of(p0, p1));
    ConsumerLag lag = new ConsumerLag(consumer);
    assertEquals(Map.of(), lag.byTopic(), "nothing before the first refresh");
    lag.refresh(1_000);
    assertEquals(Map.of("sand.shop.resize", 6L), lag.byTopic());
    lags.put(p0, 0L);
    lag.refresh(1_500);
    assertEquals(Map.of("sand.shop.resize", 6L), lag.byTopic(), "not again within a second");
    lag.refresh(2_000);
    assertEquals(Map.of("sand.shop.resize", 2L), lag.byTopic());
  }
}
