package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException.Code;

class MapsAndSetsTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void mapOperations() {
    assertTrue(t.a.getMapEntry("m", "x").isEmpty());
    assertEquals(Map.of(), t.a.retrieveMap("m"));
    assertFalse(t.a.deleteMap("m"));
    t.a.putMapEntry("m", "y", bytes("2"));
    t.a.putMapEntry("m", "x", bytes("1"));
    assertEquals("1", text(t.a.getMapEntry("m", "x").orElseThrow()));
    assertTrue(t.a.containsMapKey("m", "y"));
    assertFalse(t.a.containsMapKey("m", "z"));
    assertEquals(List.of("x", "y"), t.a.getMapKeys("m"));
    Map<String, byte[]> all = t.a.retrieveMap("m");
    assertEquals(List.of("x", "y"), List.copyOf(all.keySet()));
    assertTrue(t.a.deleteMapEntry("m", "x"));
    assertFalse(t.a.deleteMapEntry("m", "x"));
    assertEquals(List.of("y"), t.a.getMapKeys("m"));
    assertTrue(t.a.deleteMap("m"));
    assertEquals(Map.of(), t.a.retrieveMap("m"));
    assertFalse(t.a.deleteMap("m"));
  }

  @Test
  void mapWritesReachTheGlobalLayer() {
    t.a.putMapEntry("m", "x", bytes("1"));
    t.a.putMapEntry("m", "y", bytes("2"));
    t.a.deleteMapEntry("m", "x");
    t.a.putMapEntry("gone", "k", bytes("v"));
    t.a.deleteMap("gone");
    assertTrue(t.a.flush(10_000));
    assertEquals(Set.of("y"), t.global.readMap("appa", "m").keySet());
    assertEquals(Map.of(), t.global.readMap("appa", "gone"));
  }

  @Test
  void mapEntryValuesAreLimitedAndNamesChecked() {
    assertEquals(
        Code.TOO_LARGE,
        assertThrows(DataLayerException.class, () -> t.a.putMapEntry("m", "k", new byte[1001]))
            .code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.putMapEntry("", "k", bytes("v")))
            .code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.getMapEntry("m", "")).code());
  }

  @Test
  void setOperations() {
    assertEquals(Set.of(), t.a.retrieveSet("s"));
    assertTrue(t.a.addSetEntry("s", "b"));
    assertTrue(t.a.addSetEntry("s", "a"));
    assertFalse(t.a.addSetEntry("s", "a"));
    assertTrue(t.a.containsSetItem("s", "a"));
    assertFalse(t.a.containsSetItem("s", "z"));
    assertEquals(List.of("a", "b"), List.copyOf(t.a.retrieveSet("s")));
    assertTrue(t.a.removeSetEntry("s", "a"));
    assertFalse(t.a.removeSetEntry("s", "a"));
    assertEquals(Set.of("b"), t.a.retrieveSet("s"));
    assertTrue(t.a.deleteSet("s"));
    assertFalse(t.a.deleteSet("s"));
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.addSetEntry("s", "")).code());
  }

  @Test
  void setWritesReachTheGlobalLayer() {
    t.a.addSetEntry("s", "a");
    t.a.addSetEntry("s", "b");
    t.a.removeSetEntry("s", "a");
    assertTrue(t.a.flush(10_000));
    assertEquals(Set.of("b"), t.global.readSet("appa", "s"));
    t.a.deleteSet("s");
    assertTrue(t.a.flush(10_000));
    assertEquals(Set.of(), t.global.readSet("appa", "s"));
  }
}
