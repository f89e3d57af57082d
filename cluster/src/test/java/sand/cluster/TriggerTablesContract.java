package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import sand.cluster.TriggerTables.KeyClaim;

/**
 * What every {@link ClusterStore} promises about idempotency keys: run on the fake and on Cassandra
 * (-Dsand.it=true).
 */
interface TriggerTablesContract {
  ClusterStore store();

  @Test
  default void aKeysClaimIsTakenOnceAndFollowsItsDeliverysAttempts() {
    TriggerTables t = store().triggers();
    String app = HostAgentTablesContract.uid("key");
    Duration day = Duration.ofDays(1);
    assertEquals(Optional.empty(), t.readKey(app, "k"));
    assertEquals(Optional.empty(), t.claimKey(app, "k", new KeyClaim("e1", "sha"), day));
    assertEquals(
        Optional.of(new KeyClaim("e1", "sha", 1)),
        t.claimKey(app, "k", new KeyClaim("e9", "sha"), day),
        "the first claim answers");
    assertTrue(t.moveKey(app, "k", "e1", new KeyClaim("e2", "sha", 2), day));
    assertFalse(
        t.moveKey(app, "k", "e1", new KeyClaim("e3", "sha", 2), day), "one mover per attempt");
    assertEquals(Optional.of(new KeyClaim("e2", "sha", 2)), t.readKey(app, "k"));
    assertFalse(
        t.moveKey(app, "absent", "e1", new KeyClaim("e2", "sha", 2), day), "no claim, no move");
    assertEquals(Optional.empty(), t.readKey(app, "absent"));
    t.releaseKey(app, "k", "e1"); // not the claim's execution any more: kept
    assertEquals(Optional.of(new KeyClaim("e2", "sha", 2)), t.readKey(app, "k"));
    t.releaseKey(app, "k", "e2");
    assertEquals(Optional.empty(), t.readKey(app, "k"));
    assertEquals(Optional.empty(), t.claimKey(app, "k", new KeyClaim("e4", "sha"), day));
  }
}
