package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
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

  @Test
  void duringARotationTagsAndCredentialsOfBothKeysAreAcceptedAndOnlyTheCurrentOneMakes() {
    byte[] old = "the-old-cluster-secret-32-bytes!".getBytes(StandardCharsets.UTF_8);
    byte[] fresh = "the-new-cluster-secret-32-bytes!".getBytes(StandardCharsets.UTF_8);
    ClusterKeys keys = ClusterKeys.of(old);
    ExecutionTag process = new ExecutionTag(keys);
    String before = process.of("shop", "e1", "f");
    String gateBefore = process.credential("gate");

    keys.use(old, List.of(fresh)); // begin: the next one accepted, the old one still makes
    assertEquals(before, process.of("shop", "e1", "f"));
    String madeByASwitchedProcess = new ExecutionTag(fresh).of("shop", "e1", "f");
    assertTrue(process.verify(madeByASwitchedProcess, "shop", "e1", "f"));
    assertTrue(process.acceptsCredential(new ExecutionTag(fresh).credential("gate"), "gate"));

    keys.use(fresh, List.of(old)); // switch: the new one makes, the old one still accepted
    assertEquals(madeByASwitchedProcess, process.of("shop", "e1", "f"));
    assertTrue(process.verify(before, "shop", "e1", "f"), "a tag made before the switch");
    assertTrue(process.acceptsCredential(gateBefore, "gate"));
    assertFalse(process.verify(before, "shop", "e2", "f"));

    keys.use(fresh, List.of()); // finish: the old one no longer
    assertFalse(process.verify(before, "shop", "e1", "f"));
    assertFalse(process.acceptsCredential(gateBefore, "gate"));
    assertTrue(process.acceptsCredential(process.credential("gate"), "gate"));
    assertFalse(process.acceptsCredential(null, "gate"));
    assertTrue(keys.holds(fresh, List.of()));
    assertFalse(keys.holds(fresh, List.of(old)));
  }
}
