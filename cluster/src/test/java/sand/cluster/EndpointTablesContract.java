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
    assertEquals(Optional.empty(), store().endpoints().endpointAuth(app));
    store().endpoints().putEndpointMode(app, "key");
    assertEquals("key", store().endpoints().endpointAuth(app).orElseThrow().mode());
    assertNull(store().endpoints().endpointAuth(app).orElseThrow().sealedSecret());
    store().endpoints().putSigningSecret(app, new byte[] {1, 2});
    store().endpoints().putEndpointMode(app, "hmac");
    assertEquals("hmac", store().endpoints().endpointAuth(app).orElseThrow().mode());
    assertArrayEquals(
        new byte[] {1, 2}, store().endpoints().endpointAuth(app).orElseThrow().sealedSecret());
  }

  @Test
  default void keysAreAddedListedRevokedAndDeletedWithTheApplication() {
    String app = HostAgentTablesContract.uid("ep");
    String other = HostAgentTablesContract.uid("ep");
    var now = HostAgentTablesContract.now();
    store().endpoints().putInvokeKey(new InvokeKey(app, "b", "ci", "h2", "sik_bbbb", now));
    store().endpoints().putInvokeKey(new InvokeKey(app, "a", "", "h1", "sik_aaaa", now));
    store().endpoints().putInvokeKey(new InvokeKey(other, "a", "", "h3", "sik_cccc", now));
    List<InvokeKey> keys = store().endpoints().invokeKeys(app);
    assertEquals(List.of("a", "b"), keys.stream().map(InvokeKey::id).toList());
    assertEquals(new InvokeKey(app, "b", "ci", "h2", "sik_bbbb", now), keys.get(1));
    assertTrue(store().endpoints().deleteInvokeKey(app, "a"));
    assertFalse(store().endpoints().deleteInvokeKey(app, "a"));
    assertEquals(1, store().endpoints().invokeKeys(app).size());
    store().endpoints().putEndpointMode(app, "key");
    store().deleteApplication(app);
    assertEquals(List.of(), store().endpoints().invokeKeys(app));
    assertEquals(Optional.empty(), store().endpoints().endpointAuth(app));
    assertEquals(1, store().endpoints().invokeKeys(other).size());
  }
}
