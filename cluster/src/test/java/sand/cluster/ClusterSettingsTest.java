package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.common.ConfigDef;

class ClusterSettingsTest {
  @Test
  void kafkaReplicationDefaultsToOneAndIsBounded() {
    assertEquals(1, ClusterSettings.fromEnvironment(Map.of()).kafkaReplication());
    assertEquals(3, ClusterSettings.fromEnvironment(Map.of("SAND_CLUSTER_KAFKA_REPLICATION", "3")).kafkaReplication());
    ConfigDef.ConfigException e = assertThrows(ConfigDef.ConfigException.class,
        () -> ClusterSettings.fromEnvironment(Map.of("SAND_CLUSTER_KAFKA_REPLICATION", "0")));
    assertTrue(e.getMessage().contains("SAND_CLUSTER_KAFKA_REPLICATION") || e.getMessage().contains("kafka.replication"),
        e.getMessage());
  }
}
