package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import sand.cluster.SecretTables.StoredSecret;

/** What every {@link ClusterStore} promises about secrets: run on the fake and on Cassandra (-Dsand.it=true). */
interface SecretTablesContract {
  ClusterStore store();

  @Test
  default void secretsAreSetReplacedListedAndDeletedPerApplication() {
    String app = HostAgentTablesContract.uid("sec");
    String other = HostAgentTablesContract.uid("sec");
    var now = HostAgentTablesContract.now();
    store().putSecret(new StoredSecret(app, "B", new byte[] {1, 2, 3}, now));
    store().putSecret(new StoredSecret(app, "A", new byte[] {4}, now));
    store().putSecret(new StoredSecret(app, "A", new byte[] {5, 6}, now.plusSeconds(1)));
    store().putSecret(new StoredSecret(other, "A", new byte[] {7}, now));
    List<StoredSecret> mine = store().secrets(app);
    assertEquals(List.of("A", "B"), mine.stream().map(StoredSecret::name).toList());
    assertArrayEquals(new byte[] {5, 6}, mine.get(0).sealed());
    assertEquals(now.plusSeconds(1), mine.get(0).updated());
    assertTrue(store().deleteSecret(app, "A"));
    assertFalse(store().deleteSecret(app, "A"));
    assertEquals(
        List.of("B"), store().secrets(app).stream().map(StoredSecret::name).toList());
    store().deleteSecrets(app);
    assertEquals(List.of(), store().secrets(app));
    assertEquals(1, store().secrets(other).size());
  }

  @Test
  default void deletingTheApplicationDeletesItsSecrets() {
    String app = HostAgentTablesContract.uid("sec");
    store().putSecret(new StoredSecret(app, "A", new byte[] {1}, HostAgentTablesContract.now()));
    store().deleteApplication(app);
    assertEquals(List.of(), store().secrets(app));
  }
}
