package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.security.SecureRandom;
import org.junit.jupiter.api.Test;
import sand.contracts.ClusterKeys;

class ClusterKeysRefresherTest {
  @Test
  void aProcessFollowsTheRowsOfARotation() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    byte[] old = store.clusterSecret();
    ClusterKeys keys = ClusterKeys.of(old);
    try (ClusterKeysRefresher r = new ClusterKeysRefresher(store.clusterSecrets(), keys, "test")) {
      byte[] next = new SecureRandom().generateSeed(32);
      store.clusterSecrets().putIfAbsent(ClusterSecrets.NEXT, next);
      r.refresh();
      assertArrayEquals(old, keys.now().current(), "begun: the old one still makes");
      assertEquals(2, keys.now().all().size());

      store.clusterSecrets().promote(old, next);
      r.refresh();
      assertArrayEquals(next, keys.now().current(), "switched");
      assertArrayEquals(old, keys.now().all().get(1), "the old one accepted");
      assertArrayEquals(next, store.clusterSecret(), "a process starting now reads the new one");

      store.clusterSecrets().delete(ClusterSecrets.PREVIOUS);
      r.refresh();
      assertEquals(1, keys.now().all().size(), "finished");
      assertArrayEquals(next, ClusterKeysRefresher.read(store).now().current());
    }
  }
}
