package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException.Code;

class KeyValueTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void putGetRemove() {
    assertTrue(t.a.get("k").isEmpty());
    t.a.put("k", bytes("v1"));
    assertEquals("v1", text(t.a.get("k").orElseThrow()));
    t.a.put("k", bytes("v2"));
    assertEquals("v2", text(t.a.get("k").orElseThrow()));
    assertTrue(t.a.remove("k"));
    assertTrue(t.a.get("k").isEmpty());
    assertFalse(t.a.remove("k"));
    assertFalse(t.a.remove("never-there"));
  }

  @Test
  void emptyValueIsAValue() {
    t.a.put("empty", new byte[0]);
    assertArrayEquals(new byte[0], t.a.get("empty").orElseThrow());
  }

  @Test
  void writesReachTheGlobalLayer() {
    t.a.put("k", bytes("v"));
    t.a.put("gone", bytes("x"));
    t.a.remove("gone");
    assertTrue(t.a.flush(10_000));
    assertEquals("v", text(t.global.readKv("appa", "k").orElseThrow()));
    assertTrue(t.global.readKv("appa", "gone").isEmpty());
    assertEquals(0, t.layer.pendingWrites());
  }

  @Test
  void listKeysMergesMemoryAndGlobalInOrder() {
    t.global.writeKv("appa", "b-global", bytes("1"));
    t.global.writeKv("appa", "d-global-deleted-here", bytes("1"));
    t.a.put("a-local", bytes("1"));
    t.a.put("c-local", bytes("1"));
    assertTrue(t.a.remove("d-global-deleted-here"));
    assertEquals(List.of("a-local", "b-global", "c-local"), t.a.listKeys("", 10));
    assertEquals(List.of("a-local", "b-global"), t.a.listKeys("", 2));
    assertEquals(List.of("b-global", "c-local"), t.a.listKeys("a-local", 5));
    assertEquals(List.of(), t.a.listKeys("", 0));
    assertEquals(List.of(), t.b.listKeys("", 10));
  }

  @Test
  void listKeysIsInCodePointOrder() {
    // U+FF5E sorts before U+1F600 by code point (and UTF-8 bytes), after it by UTF-16 units.
    t.a.put("\uD83D\uDE00", bytes("1"));
    t.a.put("\uFF5E", bytes("1"));
    assertEquals(List.of("\uFF5E", "\uD83D\uDE00"), t.a.listKeys("", 10));
  }

  @Test
  void tooLargeNamesTheSizeAndTheLimitAndKeepsTheOldValue() {
    t.a.put("big", bytes("small"));
    DataLayerException e =
        assertThrows(DataLayerException.class, () -> t.a.put("big", new byte[1001]));
    assertEquals(Code.TOO_LARGE, e.code());
    assertTrue(e.getMessage().contains("1001") && e.getMessage().contains("1000"), e.getMessage());
    assertEquals("small", text(t.a.get("big").orElseThrow()));
    t.a.put("exactly-the-limit", new byte[1000]);
  }

  @Test
  void badNamesAndArguments() {
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.put("", bytes("v"))).code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.get(null)).code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.put("k", null)).code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.put("\uD800", bytes("v")))
            .code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(
                DataLayerException.class,
                () -> t.a.put("x".repeat(ApplicationData.MAX_NAME_BYTES + 1), bytes("v")))
            .code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.listKeys("", -1)).code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.flush(-1)).code());
  }
}
