package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.contracts.DataKind;

/** The backup to the global layer: in order per item, never dropped, retried until the global layer is back. */
class WriteBehindTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  /** The values written to one item of appa, in the order the global layer applied them. */
  private List<String> applied(String operation, String name) {
    List<String> out = new ArrayList<>();
    for (InMemoryGlobalDataLayer.AppliedWrite w : t.global.writes()) {
      if (w.operation().equals(operation) && w.app().equals("appa") && w.name().equals(name)) {
        out.add(w.key() == null ? text(w.value()) : w.key() + "=" + text(w.value()));
      }
    }
    return out;
  }

  private static void assertInOrderEndingWith(List<String> applied, int last) {
    int previous = -1;
    for (String v : applied) {
      int n = Integer.parseInt(v.substring(v.indexOf('=') + 1));
      assertTrue(n > previous, "applied out of order: " + applied);
      previous = n;
    }
    assertEquals(last, previous, "last applied write is not the last local write: " + applied);
  }

  @Test
  void writesDuringAnOutageArriveInLocalOrderOnceTheGlobalLayerIsBack() throws Exception {
    t.a.retrieveMap("m"); // a map is loaded on its first touch, which needs the global layer
    t.global.setAvailable(false);
    int n = 300;
    for (int i = 0; i < n; i++) {
      t.a.putMapEntry("m", "k", bytes(Integer.toString(i)));
      t.a.put("k", bytes(Integer.toString(i)));
      t.a.put("key-" + i, bytes("v"));
    }
    assertFalse(t.a.flush(200), "nothing can be flushed while the global layer is down");
    assertTrue(t.layer.pendingWrites() > 0);
    t.global.setAvailable(true);
    assertTrue(t.a.flush(30_000));
    assertEquals(0, t.layer.pendingWrites());

    // Map entry writes are applied one by one, exactly in local order.
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      expected.add("k=" + i);
    }
    assertEquals(expected, applied("writeMapEntry", "m"));
    // Whole-value writes of one key may be merged while queued, never reordered; the last one wins.
    assertInOrderEndingWith(applied("writeKv", "k"), n - 1);
    assertEquals(Integer.toString(n - 1), text(t.global.readKv("appa", "k").orElseThrow()));
    // Nothing dropped.
    for (int i = 0; i < n; i++) {
      assertTrue(t.global.readKv("appa", "key-" + i).isPresent(), "key-" + i + " lost");
    }
  }

  @Test
  void aSlowAndFlappingGlobalLayerNeitherReordersNorDrops() throws Exception {
    t.a.retrieveMap("m");
    t.global.setDelay(Duration.ofMillis(1));
    AtomicBoolean run = new AtomicBoolean(true);
    Thread flapper = new Thread(() -> {
      while (run.get()) {
        t.global.setAvailable(Math.random() < 0.5);
        try {
          Thread.sleep(15);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    flapper.start();
    int n = 500;
    try {
      for (int i = 0; i < n; i++) {
        t.a.putMapEntry("m", "k" + (i % 3), bytes(Integer.toString(i)));
        t.a.createCounter("c", i);
        if (i % 10 == 0) {
          Thread.sleep(5); // spread the writes over several outages
        }
      }
    } finally {
      run.set(false);
      flapper.join();
      t.global.setAvailable(true);
    }
    assertTrue(t.a.flush(30_000));
    for (int k = 0; k < 3; k++) {
      List<String> forKey = new ArrayList<>();
      for (String w : applied("writeMapEntry", "m")) {
        if (w.startsWith("k" + k + "=")) {
          forKey.add(w);
        }
      }
      assertEquals(
          (n - 1 - k) / 3 * 3 + k,
          Integer.parseInt(forKey.get(forKey.size() - 1).split("=")[1]));
      assertEquals(
          (n + 2 - k) / 3, forKey.size(), "map entry writes of k" + k + " dropped or repeated");
      assertInOrderEndingWith(
          forKey, Integer.parseInt(forKey.get(forKey.size() - 1).split("=")[1]));
    }
    assertInOrderEndingWith(applied("writeCounter", "c"), n - 1);
    assertEquals((long) n - 1, t.global.readCounter("appa", "c").orElseThrow());
  }

  @Test
  void backupOfCompletesOnlyOnceTheLatestWriteIsDurable() throws Exception {
    t.a.put("k", bytes("v1"));
    t.a.backupOf(DataKind.KV, "k").get(10, TimeUnit.SECONDS);
    t.global.setWritesFailing(true);
    t.a.put("k", bytes("v2"));
    CompletableFuture<Void> backup = t.layer.backupOf("appa", DataKind.KV, "k");
    Thread.sleep(200);
    assertFalse(backup.isDone());
    assertEquals("v1", text(t.global.readKv("appa", "k").orElseThrow()));
    t.global.setWritesFailing(false);
    backup.get(10, TimeUnit.SECONDS);
    assertEquals("v2", text(t.global.readKv("appa", "k").orElseThrow()));
    assertTrue(t.layer.backupOf("appa", DataKind.KV, "never-written").isDone());
  }

  @Test
  void flushWaitsForOneApplicationOnly() {
    t.a.put("k", bytes("v"));
    assertTrue(t.a.flush(10_000));
    t.global.setWritesFailing(true);
    t.b.put("k", bytes("v"));
    assertTrue(t.a.flush(0), "app a has nothing pending");
    assertFalse(t.b.flush(100));
    t.global.setWritesFailing(false);
    assertTrue(t.b.flush(10_000));
  }

  @Test
  void closeWaitsForPendingWrites() {
    Layers other = new Layers();
    other.global.setDelay(Duration.ofMillis(2));
    for (int i = 0; i < 50; i++) {
      other.a.put("k" + i, bytes("v"));
    }
    other.close();
    for (int i = 0; i < 50; i++) {
      assertTrue(other.global.readKv("appa", "k" + i).isPresent());
    }
  }
}
