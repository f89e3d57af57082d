package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException.Code;

class CountersTest {
  private final Layers t = new Layers();

  @AfterEach
  void close() {
    t.close();
  }

  @Test
  void createIncrementDecrementDelete() {
    t.a.createCounter("c", 10);
    assertEquals(15, t.a.incrementCounter("c", 5));
    assertEquals(12, t.a.decrementCounter("c", 3));
    assertEquals(12, t.a.getCounterValue("c"));
    assertEquals(2, t.a.incrementCounter("c", -10));
    assertTrue(t.a.deleteCounter("c"));
    assertFalse(t.a.deleteCounter("c"));
  }

  @Test
  void missingCounterIsNotFound() {
    assertEquals(
        Code.NOT_FOUND,
        assertThrows(DataLayerException.class, () -> t.a.getCounterValue("nope"))
            .code());
    assertEquals(
        Code.NOT_FOUND,
        assertThrows(DataLayerException.class, () -> t.a.incrementCounter("nope", 1))
            .code());
    assertEquals(
        Code.NOT_FOUND,
        assertThrows(DataLayerException.class, () -> t.a.decrementCounter("nope", 1))
            .code());
    t.a.createCounter("c", 1);
    t.a.deleteCounter("c");
    assertEquals(
        Code.NOT_FOUND,
        assertThrows(DataLayerException.class, () -> t.a.getCounterValue("c")).code());
  }

  @Test
  void createOnAnExistingCounterResetsIt() {
    t.a.createCounter("c", 5);
    t.a.incrementCounter("c", 100);
    t.a.createCounter("c", 7);
    assertEquals(7, t.a.getCounterValue("c"));
  }

  @Test
  void overflowIsABadRequestAndLeavesTheValue() {
    t.a.createCounter("c", Long.MAX_VALUE);
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.incrementCounter("c", 1))
            .code());
    assertEquals(
        Code.BAD_REQUEST,
        assertThrows(DataLayerException.class, () -> t.a.decrementCounter("c", Long.MIN_VALUE))
            .code());
    assertEquals(Long.MAX_VALUE, t.a.getCounterValue("c"));
  }

  @Test
  void concurrentIncrementsAreAtomicAndTheGlobalLayerGetsTheFinalValue() throws Exception {
    t.a.createCounter("hits", 0);
    int threads = 8;
    int each = 2000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        done.add(pool.submit(() -> {
          for (int j = 0; j < each; j++) {
            t.a.incrementCounter("hits", 1);
          }
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    assertEquals((long) threads * each, t.a.getCounterValue("hits"));
    assertTrue(t.a.flush(10_000));
    assertEquals((long) threads * each, t.global.readCounter("appa", "hits").orElseThrow());
  }
}
