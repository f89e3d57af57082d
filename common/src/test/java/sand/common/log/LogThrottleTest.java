package sand.common.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LogThrottleTest {
  @Test
  void theFirstLinePassesThenOneAnInterval() throws Exception {
    LogThrottle t = new LogThrottle(Duration.ofMillis(200));
    assertTrue(t.allow(), "the first time at once");
    assertFalse(t.allow());
    Thread.sleep(250);
    assertTrue(t.allow(), "once the interval passed");
    assertFalse(t.allow());
  }

  @Test
  void aFloodFromManyThreadsGetsOneLine() throws Exception {
    LogThrottle t = new LogThrottle(Duration.ofMinutes(1));
    AtomicInteger allowed = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    for (int i = 0; i < 10_000; i++) {
      pool.execute(() -> {
        if (t.allow()) {
          allowed.incrementAndGet();
        }
      });
    }
    pool.shutdown();
    assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    assertEquals(1, allowed.get());
  }
}
