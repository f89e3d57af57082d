package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.internal.Sizes.ITEM_OVERHEAD_BYTES;
import static sand.datalayer.internal.Sizes.WRITE_OVERHEAD_BYTES;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException.Code;

/**
 * The bytes an application holds: names and values in memory with {@value
 * sand.datalayer.internal.Sizes#ITEM_OVERHEAD_BYTES} bytes per item (key, map, map entry, set, set item,
 * counter), plus writes waiting for the global layer ({@value
 * sand.datalayer.internal.Sizes#WRITE_OVERHEAD_BYTES} bytes each, their names, and their value when
 * memory no longer holds it). All names here are ASCII, so a name's UTF-8 length is its length.
 */
class MemoryAccountingTest {
  private static final long OV = WRITE_OVERHEAD_BYTES;
  private static final long IT = ITEM_OVERHEAD_BYTES;
  private Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  private MemoryUsage usage(String app) {
    return t.layer.usage().getOrDefault(app, new MemoryUsage(0, 0, 0));
  }

  private static byte[] sized(int n) {
    return new byte[n];
  }

  @Test
  void backToTheExactValueAfterOverwritesDeletesAndMapSetCounterOperations() {
    t.a.put("key", sized(100));
    t.a.put("key2", sized(50));
    t.a.put("key", sized(30));
    assertTrue(t.a.remove("key2"));
    t.a.createCounter("ctr", 5);
    t.a.incrementCounter("ctr", 1);
    t.a.putMapEntry("map", "x", sized(10));
    t.a.putMapEntry("map", "y", sized(20));
    t.a.putMapEntry("map", "y", sized(25));
    assertTrue(t.a.deleteMapEntry("map", "x"));
    t.a.addSetEntry("set", "i1");
    t.a.addSetEntry("set", "i22");
    assertTrue(t.a.removeSetEntry("set", "i1"));
    assertTrue(t.a.flush(10_000));
    long expected = (IT + 3 + 30)
        + (IT + 4) // key, and key2's known-absent slot
        + (IT + 3 + 8) // counter
        + (IT + 3)
        + (IT + 1 + 25) // map with y
        + (IT + 3)
        + (IT + 3); // set with i22
    assertEquals(new MemoryUsage(expected, 0, 0), usage("appa"));
    assertEquals(expected, t.layer.heldBytes());
    assertEquals(0, usage("appb").bytes());

    assertTrue(t.a.deleteMap("map"));
    assertTrue(t.a.deleteSet("set"));
    assertTrue(t.a.deleteCounter("ctr"));
    assertTrue(t.a.flush(10_000));
    // The emptied map and set stay loaded (empty), the counter known-absent.
    assertEquals(expected - (IT + 1 + 25) - (IT + 3), usage("appa").bytes());
  }

  @Test
  void writesWaitingForTheGlobalLayerCountTheirValuesOnceMemoryDropsThem() {
    t.a.retrieveMap("m"); // loaded while the global layer can be read
    long map = IT + 1;
    assertEquals(map, usage("appa").bytes());
    t.global.setWritesFailing(true);
    t.a.putMapEntry("m", "x", sized(100));
    t.a.putMapEntry("m", "x", sized(40)); // map entry writes are never merged: both wait
    long write = OV + 1 + 1;
    assertEquals(
        new MemoryUsage(map + (IT + 1 + 40) + 2 * write + 100, 2 * write + 140, 0), usage("appa"));
    assertTrue(t.a.deleteMapEntry("m", "x"));
    assertEquals(new MemoryUsage(map + 3 * write + 140, 3 * write + 140, 0), usage("appa"));
    t.global.setWritesFailing(false);
    assertTrue(t.a.flush(10_000));
    assertEquals(new MemoryUsage(map, 0, 0), usage("appa"));
  }

  @Test
  void aQueuedKvWriteCountsItsNamesAndOverheadAndSharesItsValueWithMemory() {
    t.global.setWritesFailing(true);
    t.a.put("key", sized(100));
    assertEquals(new MemoryUsage((IT + 3 + 100) + (OV + 3), OV + 3 + 100, 0), usage("appa"));
    t.global.setWritesFailing(false);
    assertTrue(t.a.flush(10_000));
    assertEquals(new MemoryUsage(IT + 3 + 100, 0, 0), usage("appa"));
  }

  @Test
  void revokeReleasesTheApplicationsMemoryAndItsPendingWritesOnceBackedUp() {
    t.global.setWritesFailing(true);
    t.a.put("key", sized(100));
    t.a.putMapEntry("m", "x", sized(10));
    ApplicationData stale = t.a;
    t.layer.revokeApplication(Layers.AGENT, "appa");
    // Memory is dropped at once; the writes still hold their bytes until the global layer has them.
    long pending = (OV + 3 + 100) + (OV + 1 + 1 + 10);
    assertEquals(new MemoryUsage(pending, pending, 0), usage("appa"));
    DataLayerException e =
        assertThrows(DataLayerException.class, () -> stale.put("late", sized(5)));
    assertEquals(Code.UNAUTHORIZED, e.code());
    assertEquals(pending, usage("appa").bytes());
    t.global.setWritesFailing(false);
    assertTrue(t.layer.flush("appa", 10_000));
    assertEquals(0, usage("appa").bytes());
    assertEquals(0, t.layer.heldBytes());
    assertTrue(
        !t.layer.usage().containsKey("appa"),
        "a revoked application holding nothing is not listed");

    t.layer.grantApplication(Layers.AGENT, "appa", Layers.CRED_A);
    ApplicationData again = t.layer.forCredential(Layers.CRED_A);
    assertArrayEquals(sized(100), again.get("key").orElseThrow());
    assertEquals(IT + 3 + 100, usage("appa").bytes());
  }

  @Test
  void exactUnderConcurrentWritesWithoutEviction() throws Exception {
    Set<String> everPut = ConcurrentHashMap.newKeySet();
    t.a.createCounter("c", 0);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      done.add(pool.submit(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < 400; i++) {
          String k = "k" + r.nextInt(20);
          switch (r.nextInt(7)) {
            case 0, 1 -> {
              everPut.add(k);
              t.a.put(k, sized(r.nextInt(200)));
            }
            case 2 -> t.a.remove(k);
            case 3 -> t.a.putMapEntry("m", "e" + r.nextInt(10), sized(r.nextInt(200)));
            case 4 -> t.a.deleteMapEntry("m", "e" + r.nextInt(10));
            case 5 -> {
              if (r.nextBoolean()) {
                t.a.addSetEntry("s", "i" + r.nextInt(10));
              } else {
                t.a.removeSetEntry("s", "i" + r.nextInt(10));
              }
            }
            default -> t.a.incrementCounter("c", 1);
          }
        }
        return null;
      }));
    }
    for (Future<?> f : done) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertTrue(t.a.flush(10_000));
    long expected = IT + 1 + 8;
    for (String k : everPut) {
      expected += IT + k.length() + t.a.get(k).map(v -> v.length).orElse(0);
    }
    expected += IT + 1;
    for (Map.Entry<String, byte[]> e : t.a.retrieveMap("m").entrySet()) {
      expected += IT + e.getKey().length() + e.getValue().length;
    }
    expected += IT + 1;
    for (String item : t.a.retrieveSet("s")) {
      expected += IT + item.length();
    }
    assertEquals(new MemoryUsage(expected, 0, 0), usage("appa"));
  }

  @Test
  void neverAboveTheQuotaAndExactAfterRevokeUnderConcurrentEviction() throws Exception {
    long quota = 30_000;
    t.close();
    t = QuotaTest.layers(quota, 4 * quota, Duration.ofSeconds(10));
    AtomicBoolean run = new AtomicBoolean(true);
    AtomicLong highest = new AtomicLong();
    Thread sampler = new Thread(() -> {
      while (run.get()) {
        highest.accumulateAndGet(usage("appa").bytes(), Math::max);
        Thread.onSpinWait();
      }
    });
    sampler.start();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<Map<String, Optional<byte[]>>>> done = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      String prefix = "w" + w + "-";
      done.add(pool.submit(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        Map<String, Optional<byte[]>> last = new HashMap<>();
        for (int i = 0; i < 300; i++) {
          String k = prefix + r.nextInt(25);
          if (r.nextInt(5) == 0) {
            t.a.remove(k);
            last.put(k, Optional.empty());
          } else if (r.nextInt(4) == 0) {
            t.a.get(k);
          } else {
            byte[] v = bytes(k + "#" + i + ".".repeat(500));
            t.a.put(k, v);
            last.put(k, Optional.of(v));
          }
        }
        return last;
      }));
    }
    Map<String, Optional<byte[]>> expected = new HashMap<>();
    try {
      for (Future<Map<String, Optional<byte[]>>> f : done) {
        expected.putAll(f.get(60, TimeUnit.SECONDS));
      }
    } finally {
      run.set(false);
      sampler.join(10_000);
      pool.shutdown();
    }
    assertTrue(
        highest.get() <= quota, "held " + highest.get() + " bytes, above the quota " + quota);
    for (Map.Entry<String, Optional<byte[]>> e : expected.entrySet()) {
      assertEquals(
          e.getValue().map(Layers::text), t.a.get(e.getKey()).map(Layers::text), e.getKey());
    }
    assertTrue(t.a.flush(10_000));
    t.layer.revokeApplication(Layers.AGENT, "appa");
    assertEquals(0, usage("appa").bytes());
    assertEquals(0, t.layer.heldBytes());
  }
}
