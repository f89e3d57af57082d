package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;
import sand.datalayer.DataLayerException.Code;

/** The data backup flag's metadata (§4.3) and its check against the global layer in recovery. */
class MetadataTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void metadataDescribesTheLocalValue() {
    t.a.put("k", bytes("hello grain"));
    t.a.putMapEntry("m", "x", bytes("1"));
    t.a.addSetEntry("s", "i");
    t.a.createCounter("c", 12);
    List<DataMetadata> got = t.a.metadata(List.of(
        DataMetadata.absent(DataKind.KV, "k"),
        DataMetadata.absent(DataKind.MAP, "m"),
        DataMetadata.absent(DataKind.SET, "s"),
        DataMetadata.absent(DataKind.COUNTER, "c"),
        DataMetadata.absent(DataKind.KV, "absent")));
    assertEquals(
        new DataMetadata(DataKind.KV, "k", 11, CanonicalEncoding.sha256Hex(bytes("hello grain"))),
        got.get(0));
    assertEquals(CanonicalEncoding.ofMapEntries("m", t.a.retrieveMap("m")), got.get(1));
    assertEquals(
        new DataMetadata(DataKind.SET, "s", 1, CanonicalEncoding.sha256Hex(bytes("i"))),
        got.get(2));
    assertEquals(
        new DataMetadata(DataKind.COUNTER, "c", 2, CanonicalEncoding.sha256Hex(bytes("12"))),
        got.get(3));
    assertEquals(DataMetadata.absent(DataKind.KV, "absent"), got.get(4));
  }

  @Test
  void verifyMatchesAfterFlushAndNotAfterALaterUnflushedWrite() {
    for (DataKind kind : DataKind.values()) {
      write(kind, "1");
      assertTrue(t.a.flush(10_000));
      DataMetadata first = t.a.metadata(kind, "item");
      assertTrue(t.a.verifyGlobal(first), kind + " flushed");

      t.global.setWritesFailing(true);
      write(kind, "2");
      DataMetadata second = t.a.metadata(kind, "item");
      assertNotEquals(first, second);
      assertFalse(
          t.a.verifyGlobal(second), kind + ": the later write has not reached the global layer");
      assertTrue(t.a.verifyGlobal(first), kind + ": the global layer still holds the first value");

      t.global.setWritesFailing(false);
      assertTrue(t.a.flush(10_000));
      assertTrue(t.a.verifyGlobal(second));
      assertFalse(t.a.verifyGlobal(first));
    }
  }

  @Test
  void absentMatchesAbsent() {
    assertTrue(t.a.verifyGlobal(DataMetadata.absent(DataKind.KV, "nothing")));
    assertTrue(t.a.verifyGlobal(DataMetadata.absent(DataKind.MAP, "nothing")));
    t.a.put("k", bytes("v"));
    assertTrue(t.a.flush(10_000));
    assertFalse(t.a.verifyGlobal(DataMetadata.absent(DataKind.KV, "k")));
  }

  @Test
  void verifyNeedsTheGlobalLayer() {
    t.global.setAvailable(false);
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(
                DataLayerException.class,
                () -> t.a.verifyGlobal(DataMetadata.absent(DataKind.KV, "k")))
            .code());
  }

  @Test
  void unknownKindIsNamed() {
    assertEquals(
        "unknown data kind 'table': use kv, map, set or counter",
        assertThrows(IllegalArgumentException.class, () -> DataKind.parse("table"))
            .getMessage());
  }

  /** Issue 26: a data flag's report may name an item thousands of times; its SHA-256 is computed once per write. */
  @Test
  void metadataIsComputedOncePerWriteHoweverOftenItIsAsked() {
    for (DataKind kind : DataKind.values()) {
      write(kind, "1");
      long before = t.a.metadataComputed();
      DataMetadata first = t.a.metadata(kind, "item");
      for (int i = 0; i < 1000; i++) {
        assertEquals(first, t.a.metadata(kind, "item"));
      }
      assertEquals(before + 1, t.a.metadataComputed(), kind + ": computed once for 1001 asks");

      write(kind, "2"); // a write forgets it: the next ask sees the new value
      DataMetadata second = t.a.metadata(kind, "item");
      assertNotEquals(first, second, kind.toString());
      assertEquals(second, t.a.metadata(kind, "item"));
      assertEquals(before + 2, t.a.metadataComputed(), kind + ": once more after the write");
    }
  }

  private void write(DataKind kind, String v) {
    switch (kind) {
      case KV -> t.a.put("item", bytes(v));
      case MAP -> t.a.putMapEntry("item", "x", bytes(v));
      case SET -> t.a.addSetEntry("item", v);
      case COUNTER -> t.a.createCounter("item", Long.parseLong(v));
    }
  }
}
