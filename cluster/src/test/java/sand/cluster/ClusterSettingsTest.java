package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sand.common.ConfigDef;

class ClusterSettingsTest {
  @Test
  void kafkaReplicationDefaultsToOneAndIsBounded() {
    assertEquals(1, ClusterSettings.fromEnvironment(Map.of()).kafkaReplication());
    assertEquals(
        3,
        ClusterSettings.fromEnvironment(Map.of("SAND_CLUSTER_KAFKA_REPLICATION", "3"))
            .kafkaReplication());
    ConfigDef.ConfigException e = assertThrows(
        ConfigDef.ConfigException.class,
        () -> ClusterSettings.fromEnvironment(Map.of("SAND_CLUSTER_KAFKA_REPLICATION", "0")));
    assertTrue(
        e.getMessage().contains("SAND_CLUSTER_KAFKA_REPLICATION")
            || e.getMessage().contains("kafka.replication"),
        e.getMessage());
  }

  @Test
  void withoutAUserNoLoginWithOneItIsReadFromAFileOthersCannotRead(@TempDir Path tmp)
      throws Exception {
    assertTrue(
        ClusterSettings.fromEnvironment(Map.of()).kafkaLogin().isEmpty(), "loopback: no login");
    assertTrue(ClusterSettings.fromEnvironment(Map.of()).cassandraLogin().isEmpty());
    Path pw = Files.writeString(tmp.resolve("hostagent.password"), "s3cret-0123\n");
    Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-------"));
    ClusterSettings c = ClusterSettings.fromEnvironment(Map.of(
        "SAND_CLUSTER_KAFKA_USER",
        "hostagent",
        "SAND_CLUSTER_KAFKA_PASSWORD_FILE",
        pw.toString(),
        "SAND_CLUSTER_CASSANDRA_USER",
        "hostagent",
        "SAND_CLUSTER_CASSANDRA_PASSWORD_FILE",
        pw.toString()));
    assertEquals("hostagent", c.kafkaLogin().orElseThrow().user());
    assertEquals("s3cret-0123", c.kafkaLogin().orElseThrow().password());
    assertEquals("s3cret-0123", c.cassandraLogin().orElseThrow().password());
    assertTrue(
        !c.toString().contains("s3cret"),
        "settings are printed; the password is not in them: " + c);

    Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-r--r--"));
    IllegalStateException e = assertThrows(
        IllegalStateException.class, () -> c.kafkaLogin().orElseThrow().password());
    assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> ClusterSettings.fromEnvironment(Map.of("SAND_CLUSTER_KAFKA_USER", "hostagent")),
        "a user without a password file");
  }
}
