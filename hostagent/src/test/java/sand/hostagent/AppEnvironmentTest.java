package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.InMemoryClusterStore;
import sand.cluster.SecretBox;
import sand.cluster.SecretTables.StoredSecret;

/** At deploy the host agent opens what a frontend sealed (they share the cluster secret), once. */
class AppEnvironmentTest {
  private final InMemoryClusterStore store = new InMemoryClusterStore();
  private final ApplicationRecord app = new ApplicationRecord(
      "a1",
      "shop",
      "alice",
      "{}",
      "",
      "{\"env\": {\"GREETING\": \"hi\"}}",
      1,
      HostAgentTables.DESIRED_DEPLOYED,
      List.of());

  @Test
  void settingsEnvAndOpenedSecrets() {
    SecretBox frontend = new SecretBox(store.clusterSecret());
    store.putSecret(new StoredSecret(
        "a1", "API_TOKEN", frontend.seal("a1", "API_TOKEN", "hunter2"), Instant.now()));
    var env = new AppEnvironment(store).of(app);
    assertEquals(Map.of("GREETING", "hi"), env.config());
    assertEquals(Map.of("API_TOKEN", "hunter2"), env.secrets());
  }

  @Test
  void aSecretMovedFromAnotherApplicationFailsTheDeployNamingIt() {
    SecretBox frontend = new SecretBox(store.clusterSecret());
    store.putSecret(new StoredSecret(
        "a1", "API_TOKEN", frontend.seal("a2", "API_TOKEN", "hunter2"), Instant.now()));
    String why = assertThrows(IllegalStateException.class, () -> new AppEnvironment(store).of(app))
        .getMessage();
    assertTrue(why.contains("API_TOKEN"), why);
    assertFalse(why.contains("hunter2"), why);
  }
}
