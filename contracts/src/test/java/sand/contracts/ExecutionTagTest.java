package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ExecutionTagTest {
  private final ExecutionTag tags =
      new ExecutionTag("a-cluster-secret-of-32-bytes!!!!".getBytes(StandardCharsets.UTF_8));

  @Test
  void aTagVerifiesOnlyForItsOwnApplicationExecutionAndFrontend() {
    String t = tags.of("shop", "e1", "fe-8081");
    assertEquals(32, t.length());
    assertTrue(tags.verify(t, "shop", "e1", "fe-8081"));
    assertFalse(tags.verify(t, "mall", "e1", "fe-8081"));
    assertFalse(tags.verify(t, "shop", "e2", "fe-8081"));
    assertFalse(tags.verify(t, "shop", "e1", "fe-8082"));
    assertFalse(tags.verify(null, "shop", "e1", "fe-8081"));
    assertFalse(tags.verify("", "shop", "e1", "fe-8081"));
  }

  @Test
  void partsCannotBeShiftedBetweenFields() {
    assertNotEquals(tags.of("ab", "c", "f"), tags.of("a", "bc", "f"));
  }

  @Test
  void anotherSecretMakesOtherTags() {
    ExecutionTag other =
        new ExecutionTag("another-cluster-secret-32-bytes!".getBytes(StandardCharsets.UTF_8));
    assertFalse(other.verify(tags.of("shop", "e1", "f"), "shop", "e1", "f"));
    assertThrows(IllegalArgumentException.class, () -> new ExecutionTag(new byte[8]));
  }
}
