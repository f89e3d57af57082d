package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.Test;
import sand.cluster.ClusterSettings;
import sand.cluster.KafkaClients;

/** The response topic as it is created: no broker needed, only its description. */
class KafkaResponseTopicsTest {
  @Test
  void responseTopicsAreReplicatedAsTheClusterSays() {
    ClusterSettings cluster =
        ClusterSettings.fromEnvironment(Map.of("SAND_CLUSTER_KAFKA_REPLICATION", "3"));
    NewTopic t = new KafkaResponseTopics(cluster.kafkaBootstrap(), cluster.kafkaReplication())
        .newTopic("sand.response.fe-1");
    assertEquals(3, t.replicationFactor());
    assertEquals(1, t.numPartitions());
    assertEquals(
        Integer.toString(KafkaClients.MAX_REQUEST_BYTES), t.configs().get("max.message.bytes"));
  }
}
