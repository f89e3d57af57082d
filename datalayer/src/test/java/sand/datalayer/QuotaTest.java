package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;
import static sand.datalayer.internal.Sizes.ITEM_OVERHEAD_BYTES;
import static sand.datalayer.internal.Sizes.WRITE_OVERHEAD_BYTES;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.contracts.DataKind;
import sand.datalayer.DataLayerException.Code;

/**
 * Memory is a cache of the global layer: above its quota an application's clean data is evicted and
 * read through again; only writes that cannot reach the global layer fill the quota for good, and then
 * the application's writes (only its) get QUOTA_EXCEEDED and nothing changes.
 */
class QuotaTest {
  static final long QUOTA = 40_000;
  static final int VALUE = 1000;
  /** Most a put of a value to a key named "key-NN" counts while its write waits: the value, item, write. */
  static final long PUT = VALUE + ITEM_OVERHEAD_BYTES + WRITE_OVERHEAD_BYTES + 2 * 6;

  /** Global layer up: a full quota waits (up to 5 s) for backups, as when Cassandra is merely behind. */
  private Layers t = layers(QUOTA, 10 * QUOTA, Duration.ofSeconds(5));

  static Layers layers(long appMax, long max, Duration wait) {
    return new Layers(new LocalDataLayer.Options(
        VALUE, 4, Duration.ofMillis(20), wait, Duration.ofSeconds(10), appMax, max));
  }

  @AfterEach
  void close() {
    t.close();
  }

  static byte[] value(String tag) {
    byte[] v = new byte[VALUE];
    Arrays.fill(v, (byte) '.');
    byte[] t = bytes(tag);
    System.arraycopy(t, 0, v, 0, t.length);
    return v;
  }

  private MemoryUsage usage(String app) {
    return t.layer.usage().getOrDefault(app, new MemoryUsage(0, 0, 0));
  }

  private void useFailingLayers(long appMax, long max) {
    t.close();
    t = layers(appMax, max, Duration.ofMillis(100));
  }

  @Test
  void writingThreeTimesTheQuotaEvictsCleanKeysAndReadsThemBackFromTheGlobalLayer() {
    int n = (int) (3 * QUOTA / VALUE);
    for (int i = 0; i < n; i++) {
      t.a.put("key-" + i, value("v" + i));
      assertTrue(
          usage("appa").bytes() <= QUOTA, "above the quota after put " + i + ": " + usage("appa"));
    }
    assertTrue(usage("appa").evictedItems() > 0, "nothing was evicted: " + usage("appa"));
    long readsBefore = t.global.reads();
    for (int i = 0; i < n; i++) {
      assertArrayEquals(value("v" + i), t.a.get("key-" + i).orElseThrow(), "key-" + i);
    }
    assertTrue(t.global.reads() > readsBefore, "evicted keys must be read through");
    assertTrue(usage("appa").bytes() <= QUOTA);
    assertEquals(n, t.a.listKeys("", 10 * n).size());
  }

  @Test
  void mapsAndSetsAreEvictedWholeAndReadBack() {
    int maps = (int) (3 * QUOTA / (4 * VALUE));
    for (int m = 0; m < maps; m++) {
      for (int e = 0; e < 4; e++) {
        t.a.putMapEntry("map-" + m, "e" + e, value(m + "/" + e));
      }
      for (int e = 0; e < 40; e++) {
        t.a.addSetEntry("set-" + m, "item-" + e);
      }
      t.a.createCounter("counter-" + m, m);
    }
    assertTrue(usage("appa").bytes() <= QUOTA);
    assertTrue(usage("appa").evictedItems() > 0);
    for (int m = 0; m < maps; m++) {
      Map<String, byte[]> map = t.a.retrieveMap("map-" + m);
      assertEquals(List.of("e0", "e1", "e2", "e3"), new ArrayList<>(map.keySet()), "map-" + m);
      assertArrayEquals(value(m + "/3"), map.get("e3"));
      assertEquals(40, t.a.retrieveSet("set-" + m).size(), "set-" + m);
      assertEquals(m, t.a.getCounterValue("counter-" + m));
    }
  }

  @Test
  void withTheGlobalLayerFailingWritesBeyondTheQuotaAreRefusedAndNothingIsLost() {
    useFailingLayers(QUOTA, 10 * QUOTA);
    t.global.writeKv("appa", "old", bytes("in the global layer"));
    t.global.setWritesFailing(true);
    t.a.put("k", bytes("first"));
    List<Integer> accepted = new ArrayList<>();
    DataLayerException refused = null;
    for (int i = 0; i < 3 * QUOTA / VALUE && refused == null; i++) {
      try {
        t.a.put("key-" + i, value("v" + i));
        accepted.add(i);
      } catch (DataLayerException e) {
        refused = e;
      }
    }
    assertTrue(
        refused != null, "3x the quota of writes that cannot be backed up were all accepted");
    assertEquals(Code.QUOTA_EXCEEDED, refused.code());
    MemoryUsage u = usage("appa");
    String m = refused.getMessage();
    for (String part : List.of(
        "[app appa]",
        "quota " + QUOTA + " bytes",
        "holds " + u.bytes() + " bytes",
        u.pendingBytes() + " of them",
        "retry later",
        "app.max.bytes")) {
      assertTrue(m.contains(part), "message lacks '" + part + "': " + m);
    }
    assertTrue(u.bytes() <= QUOTA && u.pendingBytes() > QUOTA / 2, u.toString());

    // Nothing changed: a refused new key stays absent, a refused overwrite keeps the old value.
    int next = accepted.size();
    assertTrue(t.a.get("key-" + next).isEmpty());
    assertEquals(
        Code.QUOTA_EXCEEDED,
        assertThrows(DataLayerException.class, () -> t.a.put("k", value("second")))
            .code());
    assertEquals("first", text(t.a.get("k").orElseThrow()));
    // Reads are served, even of data that no longer fits in memory.
    assertEquals("in the global layer", text(t.a.get("old").orElseThrow()));

    t.global.setWritesFailing(false);
    assertTrue(t.a.flush(30_000));
    for (int i : accepted) {
      assertArrayEquals(
          value("v" + i), t.global.readKv("appa", "key-" + i).orElseThrow(), "key-" + i + " lost");
    }
    for (int i = next; i < next + 2 * QUOTA / VALUE; i++) {
      t.a.put("key-" + i, value("v" + i)); // room again: the backed-up data is evicted
    }
    for (int i = 0; i < next + 2 * QUOTA / VALUE; i++) {
      assertArrayEquals(value("v" + i), t.a.get("key-" + i).orElseThrow(), "key-" + i);
    }
    assertEquals("first", text(t.a.get("k").orElseThrow()));
  }

  @Test
  void anotherApplicationKeepsReadingAndWritingWhileOneIsAtItsQuota() {
    useFailingLayers(QUOTA, 10 * QUOTA);
    t.global.writeKv("appb", "remote", bytes("in the global layer"));
    t.global.setWritesFailing(
        true); // for everyone: one application's failing write holds back its shard
    assertEquals(
        Code.QUOTA_EXCEEDED,
        assertThrows(DataLayerException.class, () -> {
              for (int i = 0; i < 3 * QUOTA / VALUE; i++) {
                t.a.put("key-" + i, value("a" + i));
              }
            })
            .code());
    int n = (int) (QUOTA / VALUE / 4); // a kv value and a map entry each: half the quota
    for (int i = 0; i < n; i++) {
      t.b.put("key-" + i, value("b" + i));
      t.b.putMapEntry("m", "e" + i, value("b" + i));
    }
    for (int i = 0; i < n; i++) {
      assertArrayEquals(value("b" + i), t.b.get("key-" + i).orElseThrow());
      assertArrayEquals(value("b" + i), t.b.getMapEntry("m", "e" + i).orElseThrow());
    }
    assertEquals("in the global layer", text(t.b.get("remote").orElseThrow()));
    assertEquals(
        Code.QUOTA_EXCEEDED,
        assertThrows(DataLayerException.class, () -> t.a.put("one-more", value("a")))
            .code());
    assertEquals(0, usage("appb").evictedItems());
  }

  @Test
  void aboveTheHostCapTheLargestHolderIsEvictedFirst() {
    t.close();
    t = layers(QUOTA, QUOTA + QUOTA / 2, Duration.ofSeconds(5));
    ApplicationData c = t.layer.forApplication("appc");
    for (int i = 0;
        i < QUOTA / PUT - 1;
        i++) { // within its quota even if no write were backed up yet
      t.a.put("key-" + i, value("a" + i));
    }
    for (int i = 0; i < 5; i++) {
      t.b.put("key-" + i, value("b" + i));
    }
    assertTrue(t.layer.flush("appa", 10_000) && t.layer.flush("appb", 10_000));
    long a = usage("appa").bytes();
    long b = usage("appb").bytes();
    for (int i = 0;
        i < 20;
        i++) { // the host cap is crossed while app c is still smaller than app a
      c.put("key-" + i, value("c" + i));
      // c's writes waiting for the global layer count more than its stored items: a slow backup
      // thread
      // would make c the largest holder, which this test is not about
      assertTrue(t.layer.flush("appc", 10_000));
    }
    assertTrue(t.layer.heldBytes() <= QUOTA + QUOTA / 2, "host cap exceeded: " + t.layer.usage());
    assertTrue(usage("appa").bytes() < a, "the largest holder was not evicted: " + t.layer.usage());
    assertEquals(b, usage("appb").bytes(), "a smaller holder was evicted before the largest");
    assertEquals(0, usage("appb").evictedItems());
    assertEquals(0, usage("appc").evictedItems());
  }

  @Test
  void theHostCapRefusesWritesWhenEveryApplicationsDataWaitsForTheGlobalLayer() {
    useFailingLayers(QUOTA, QUOTA + QUOTA / 2);
    t.global.setWritesFailing(true);
    for (int i = 0; i < QUOTA / PUT - 1; i++) {
      t.a.put("key-" + i, value("a" + i));
    }
    DataLayerException e = assertThrows(DataLayerException.class, () -> {
      for (int i = 0; i < QUOTA / VALUE; i++) {
        t.b.put("key-" + i, value("b" + i));
      }
    });
    assertEquals(Code.QUOTA_EXCEEDED, e.code());
    assertTrue(
        usage("appb").bytes() < QUOTA, "app b was refused by the host cap, not its own quota");
    assertTrue(
        e.getMessage().contains("[app appb]")
            && e.getMessage().contains("datalayer max.bytes")
            && e.getMessage().contains("cap " + (QUOTA + QUOTA / 2) + " bytes"),
        e.getMessage());
    assertTrue(t.layer.heldBytes() <= QUOTA + QUOTA / 2);
  }

  @Test
  void aKeyIsNotEvictedBeforeItsWriteReachedTheGlobalLayer() {
    // A refused write holds back the writes behind it in its backup shard: with 16 shards, at most
    // 2/16
    // of the other keys stay dirty, well below the quota, so the rest can be evicted.
    t.close();
    t = new Layers(new LocalDataLayer.Options(
        VALUE,
        16,
        Duration.ofMillis(20),
        Duration.ofSeconds(5),
        Duration.ofSeconds(10),
        QUOTA,
        10 * QUOTA));
    t.global.writeKv("appa", "gone", bytes("old"));
    t.global.refuseWrites(w -> w.name().equals("k") || w.name().equals("gone"));
    t.a.put("k", bytes("written here"));
    assertTrue(t.a.remove("gone"));
    for (int i = 0; i < 3 * QUOTA / VALUE; i++) {
      t.a.put("key-" + i, value("v" + i)); // clean data to evict, over and over
    }
    assertTrue(usage("appa").evictedItems() > 0);
    assertEquals("written here", text(t.a.get("k").orElseThrow()));
    assertTrue(
        t.a.get("gone").isEmpty(),
        "a delete not yet in the global layer must keep hiding the old value");
    assertFalse(t.a.backupOf(DataKind.KV, "k").isDone());
  }

  @Test
  void aSingleMapLargerThanTheQuotaIsRefused() {
    DataLayerException e = assertThrows(DataLayerException.class, () -> {
      for (int i = 0; i < 2 * QUOTA / VALUE; i++) {
        t.a.putMapEntry("huge", "e" + i, value("e" + i));
      }
    });
    assertEquals(Code.QUOTA_EXCEEDED, e.code());
    assertTrue(e.getMessage().contains("map 'huge'"), e.getMessage());
    assertTrue(t.a.retrieveMap("huge").size() < 2 * QUOTA / VALUE);
    t.a.putMapEntry(
        "small", "x", value("fits")); // other items still fit: the big map can be evicted
    assertArrayEquals(value("fits"), t.a.getMapEntry("small", "x").orElseThrow());
    assertEquals(Set.of(), t.a.retrieveSet("none"));
  }
}
