package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException.Code;

/** Reads hit memory; a miss reads the global layer (what another host wrote). */
class ReadThroughTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void aValueOnlyInTheGlobalLayerIsReturnedAndThenServedFromMemory() {
    t.global.writeKv("appa", "k", bytes("from another host"));
    assertEquals("from another host", text(t.a.get("k").orElseThrow()));
    t.global.setAvailable(false);
    assertEquals("from another host", text(t.a.get("k").orElseThrow()));
  }

  @Test
  void anAbsentKeyStaysAbsentAndIsNotRememberedAsAbsent() {
    assertTrue(t.a.get("k").isEmpty());
    assertTrue(t.a.get("k").isEmpty());
    t.global.writeKv("appa", "k", bytes("written later elsewhere"));
    assertEquals("written later elsewhere", text(t.a.get("k").orElseThrow()));
  }

  @Test
  void aMissWhileTheGlobalLayerIsDownIsUnavailable() {
    t.a.put("local", bytes("v"));
    t.global.setAvailable(false);
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(DataLayerException.class, () -> t.a.get("k")).code());
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(DataLayerException.class, () -> t.a.getMapEntry("m", "x")).code());
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(DataLayerException.class, () -> t.a.retrieveSet("s")).code());
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(DataLayerException.class, () -> t.a.getCounterValue("c")).code());
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(DataLayerException.class, () -> t.a.remove("k")).code());
    assertEquals(
        Code.UNAVAILABLE,
        assertThrows(DataLayerException.class, () -> t.a.listKeys("", 10)).code());
    // Hits and blind writes still work: writes wait in the write-behind queue.
    assertEquals("v", text(t.a.get("local").orElseThrow()));
    t.a.put("k", bytes("written while down"));
    t.a.createCounter("c", 3);
    assertEquals(4, t.a.incrementCounter("c", 1));
    t.global.setAvailable(true);
    assertTrue(t.a.flush(10_000));
    assertEquals("written while down", text(t.global.readKv("appa", "k").orElseThrow()));
    assertEquals(4L, t.global.readCounter("appa", "c").orElseThrow());
  }

  @Test
  void aDeleteHereHidesTheGlobalValueBeforeItIsBackedUp() {
    t.global.writeKv("appa", "k", bytes("old"));
    t.global.setWritesFailing(true);
    assertTrue(t.a.remove("k"));
    assertTrue(t.a.get("k").isEmpty());
    assertEquals(List.of(), t.a.listKeys("", 10));
  }

  @Test
  void mapsAndSetsAreLoadedOnFirstTouchOnly() {
    t.global.writeMapEntry("appa", "m", "x", bytes("1"));
    t.global.writeMapEntry("appa", "m", "y", bytes("2"));
    t.global.addSetItem("appa", "s", "i");
    long before = t.global.reads();
    assertEquals("1", text(t.a.getMapEntry("m", "x").orElseThrow()));
    assertEquals(List.of("x", "y"), t.a.getMapKeys("m"));
    t.a.putMapEntry("m", "z", bytes("3"));
    assertTrue(t.a.flush(10_000));
    before++; // its backup read the entry it replaces, for the application's stored bytes
    // (StorageQuota)
    assertEquals(Set.of("i"), t.a.retrieveSet("s"));
    assertTrue(t.a.addSetEntry("s", "j"));
    assertTrue(t.a.flush(10_000));
    before++; // its backup asked whether the item was there already (StorageQuota)
    assertEquals(before + 2, t.global.reads());
    t.global.setAvailable(false);
    assertEquals(List.of("x", "y", "z"), t.a.getMapKeys("m"));
    assertEquals(Set.of("i", "j"), t.a.retrieveSet("s"));
  }

  @Test
  void aMissWaitsForThisHostsEarlierWritesOfTheItem() throws Exception {
    // After a revoke drops the application's memory, its last writes may still be on their way.
    t.a.put("k", bytes("v1"));
    assertTrue(t.a.flush(10_000));
    t.global.setWritesFailing(true);
    t.a.put("k", bytes("v2"));
    t.layer.revokeApplication(Layers.AGENT, "appa");
    t.layer.grantApplication(Layers.AGENT, "appa", Layers.CRED_A);
    ApplicationData again = t.layer.forCredential(Layers.CRED_A);
    Thread recover = new Thread(() -> {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        return;
      }
      t.global.setWritesFailing(false);
    });
    recover.start();
    assertEquals(
        "v2", text(again.get("k").orElseThrow()), "never the older v1 from the global layer");
    recover.join();
  }

  @Test
  void countersReadThrough() {
    t.global.writeCounter("appa", "c", 41);
    assertEquals(42, t.a.incrementCounter("c", 1));
    assertTrue(t.a.flush(10_000));
    assertEquals(42L, t.global.readCounter("appa", "c").orElseThrow());
  }
}
