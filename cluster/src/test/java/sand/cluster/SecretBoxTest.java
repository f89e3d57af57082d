package sand.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SecretBoxTest {
  final SecretBox box = new SecretBox("cluster secret of 32 bytes......".getBytes());

  @Test
  void aSealedValueOpensForItsApplicationAndNameOnly() {
    byte[] sealed = box.seal("a1", "DB_PASSWORD", "hunter2");
    assertEquals("hunter2", box.open("a1", "DB_PASSWORD", sealed));
    assertFalse(
        new String(sealed, StandardCharsets.ISO_8859_1).contains("hunter2"), "encrypted at rest");
    assertNotEquals(
        Arrays.toString(sealed),
        Arrays.toString(box.seal("a1", "DB_PASSWORD", "hunter2")),
        "fresh nonce");
    assertThrows(IllegalArgumentException.class, () -> box.open("a2", "DB_PASSWORD", sealed));
    assertThrows(IllegalArgumentException.class, () -> box.open("a1", "OTHER", sealed));
    assertThrows(
        IllegalArgumentException.class,
        () -> new SecretBox("another cluster's secret........".getBytes())
            .open("a1", "DB_PASSWORD", sealed));
    byte[] tampered = sealed.clone();
    tampered[tampered.length - 1] ^= 1;
    assertThrows(IllegalArgumentException.class, () -> box.open("a1", "DB_PASSWORD", tampered));
    assertThrows(IllegalArgumentException.class, () -> box.open("a1", "DB_PASSWORD", new byte[3]));
  }
}
