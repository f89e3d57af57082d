package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.contracts.ClusterKeys;

class SecretBoxTest {
  private static final byte[] CLUSTER = new SecureRandom().generateSeed(32);
  private final SecretBox box = new SecretBox(CLUSTER);

  @Test
  void aSealedValueOpensToItself() throws Exception {
    byte[] sealed = box.seal("a1", "TOKEN", "hunter2 ✓");
    assertEquals("hunter2 ✓", box.open("a1", "TOKEN", sealed));
    assertEquals(
        SecretBox.OVERHEAD + "hunter2 ✓".getBytes(StandardCharsets.UTF_8).length, sealed.length);
    // another process with the same cluster secret (a host agent) opens it
    assertEquals("hunter2 ✓", new SecretBox(CLUSTER).open("a1", "TOKEN", sealed));
  }

  @Test
  void everyWriteTakesAFreshNonceAndTheValueIsNotInTheClear() {
    byte[] one = box.seal("a1", "TOKEN", "hunter2");
    byte[] two = box.seal("a1", "TOKEN", "hunter2");
    assertNotEquals(java.util.Arrays.toString(one), java.util.Arrays.toString(two));
    assertFalse(new String(one, StandardCharsets.ISO_8859_1).contains("hunter2"));
  }

  @Test
  void anAlteredOrMovedValueDoesNotOpen() {
    byte[] sealed = box.seal("a1", "TOKEN", "hunter2");
    byte[] altered = sealed.clone();
    altered[altered.length - 1] ^= 1;
    assertThrows(SecretBox.Unsealable.class, () -> box.open("a1", "TOKEN", altered));
    assertThrows(SecretBox.Unsealable.class, () -> box.open("a2", "TOKEN", sealed));
    assertThrows(SecretBox.Unsealable.class, () -> box.open("a1", "OTHER", sealed));
    assertThrows(SecretBox.Unsealable.class, () -> box.open("a", "1\0TOKEN", sealed));
    assertThrows(
        SecretBox.Unsealable.class,
        () -> new SecretBox(new SecureRandom().generateSeed(32)).open("a1", "TOKEN", sealed));
    assertThrows(SecretBox.Unsealable.class, () -> box.open("a1", "TOKEN", new byte[3]));
  }

  @Test
  void aValueSealedBeforeARotationOpensUntilItFinishesAndIsToldApartForResealing()
      throws Exception {
    byte[] fresh = new SecureRandom().generateSeed(32);
    byte[] sealedBefore = box.seal("a1", "TOKEN", "hunter2");
    ClusterKeys keys = ClusterKeys.of(fresh);
    keys.use(fresh, List.of(CLUSTER)); // switched: the old secret still accepted
    SecretBox switched = new SecretBox(keys);
    assertEquals("hunter2", switched.open("a1", "TOKEN", sealedBefore));
    assertFalse(switched.sealedWithCurrent("a1", "TOKEN", sealedBefore));
    byte[] resealed = switched.seal("a1", "TOKEN", "hunter2");
    assertTrue(switched.sealedWithCurrent("a1", "TOKEN", resealed));
    keys.use(fresh, List.of()); // finished
    assertEquals("hunter2", switched.open("a1", "TOKEN", resealed));
    assertThrows(SecretBox.Unsealable.class, () -> switched.open("a1", "TOKEN", sealedBefore));
  }
}
