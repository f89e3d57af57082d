package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import sand.cluster.EndpointTables.InvokeKey;

/** What every {@link ClusterStore} promises about protected endpoints: run on the fake and on Cassandra. */
interface EndpointTablesContract {
  ClusterStore store();

  @Test
  default void modeAndSecretAreSetIndependently() {
    String app = HostAgentTablesContract.uid("ep");
    assertEquals(Optional.empty(), store().endpointAuth(app));
    store().putEndpointMode(app, "key");
    assertEquals("key", store().endpointAuth(app).orElseThrow().mode());
    assertNull(store().endpointAuth(app).orElseThrow().sealedSecret());
    store().putSigningSecret(app, new byte[] {1, 2});
    store().putEndpointMode(app, "hmac");
    assertEquals("hmac", store().endpointAuth(app).orElseThrow().mode());
    assertArrayEquals(new byte[] {1, 2}, store().endpointAuth(app).orElseThrow().sealedSecret());
  }

  @Test
  default void keysAreAddedListedRevokedAndDeletedWithTheApplication() {
    String app = HostAgentTablesContract.uid("ep");
    String other = HostAgentTablesContract.uid("ep");
    var now = HostAgentTablesContract.now();
    store().putInvokeKey(new InvokeKey(app, "b", "ci", "h2", "sik_bbbb", now));
    store().putInvokeKey(new InvokeKey(app, "a", "", "h1", "sik_aaaa", now));
    store().putInvokeKey(new InvokeKey(other, "a", "", "h3", "sik_cccc", now));
    List<InvokeKey> keys = store().invokeKeys(app);
    assertEquals(List.of("a", "b"), keys.stream().map(InvokeKey::id).toList());
    assertEquals(new InvokeKey(app, "b", "ci", "h2", "sik_bbbb", now), keys.get(1));
    assertTrue(store().deleteInvokeKey(app, "a"));
    assertFalse(store().deleteInvokeKey(app, "a"));
    assertEquals(1, store().invokeKeys(app).size());
    store().putEndpointMode(app, "key");
    store().deleteApplication(app);
    assertEquals(List.of(), store().invokeKeys(app));
    assertEquals(Optional.empty(), store().endpointAuth(app));
    assertEquals(1, store().invokeKeys(other).size());
  }
}
