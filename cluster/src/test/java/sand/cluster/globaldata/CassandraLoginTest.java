package sand.cluster.globaldata;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The data layer logs in to a cluster's Cassandra as its process's role (SAND_CLUSTER_CASSANDRA_*), or not at all. */
class CassandraLoginTest {
  @TempDir
  Path tmp;

  @Test
  void noUserNoLoginAndAUsersPasswordComesFromAPrivateFile() throws Exception {
    assertNull(CassandraGlobalDataLayer.clusterLogin(Map.of()), "loopback: no login");
    Path pw = Files.writeString(tmp.resolve("hostagent.password"), "pw-0123456789\n");
    Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-------"));
    Map<String, String> env = Map.of(
        "SAND_CLUSTER_CASSANDRA_USER",
        "hostagent",
        "SAND_CLUSTER_CASSANDRA_PASSWORD_FILE",
        pw.toString());
    assertArrayEquals(
        new String[] {"hostagent", "pw-0123456789"}, CassandraGlobalDataLayer.clusterLogin(env));

    Files.setPosixFilePermissions(pw, PosixFilePermissions.fromString("rw-r--r--"));
    GlobalUnavailableException e = assertThrows(
        GlobalUnavailableException.class, () -> CassandraGlobalDataLayer.clusterLogin(env));
    assertTrue(e.getMessage().contains("chmod 600"), e.getMessage());
  }
}
