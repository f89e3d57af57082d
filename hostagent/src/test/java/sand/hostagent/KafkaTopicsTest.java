package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import sand.cluster.KafkaClients;
import sand.contracts.TopicNames;

/** Grain topics in a real Kafka (make up's, -Dsand.it=true): a partition per live host, grown when hosts are added. */
class KafkaTopicsTest {
  private final String bootstrap = System.getProperty("sand.kafka", "127.0.0.1:9092");
  private final String app =
      "itt" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  private KafkaTopics topics;
  private Admin admin;

  @BeforeEach
  void connect() {
    Assumptions.assumeTrue(Boolean.getBoolean("sand.it"), "integration test: -Dsand.it=true");
    topics = new KafkaTopics(bootstrap, 2, (short) 1);
    admin = Admin.create(KafkaClients.adminProperties(bootstrap));
  }

  @AfterEach
  void deleteTopics() throws Exception {
    if (admin != null) {
      admin.deleteTopics(List.of(TopicNames.grainTopic(app, "a"))).all().get(30, TimeUnit.SECONDS);
      admin.close();
      topics.close();
    }
  }

  private int partitions() throws Exception {
    String t = TopicNames.grainTopic(app, "a");
    return admin
        .describeTopics(List.of(t))
        .allTopicNames()
        .get(30, TimeUnit.SECONDS)
        .get(t)
        .partitions()
        .size();
  }

  @Test
  void aTopicHasTheSettingsPartitionsOrOnePerLiveHostAndGrowsWithTheCluster() throws Exception {
    topics.ensureGrainTopics(app, Set.of("a"), 1);
    assertEquals(2, partitions(), "topic.partitions when the cluster is smaller");
    topics.ensureGrainTopics(app, Set.of("a"), 5);
    assertEquals(5, partitions(), "a host added: the existing topic grows to one per host");
    topics.ensureGrainTopics(app, Set.of("a"), 3);
    assertEquals(5, partitions(), "never fewer (Kafka cannot shrink a topic)");
  }
}
