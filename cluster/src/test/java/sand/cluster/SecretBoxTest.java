package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

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
}
