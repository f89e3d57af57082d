package sand.frontend.trigger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import sand.cluster.InMemoryClusterStore;
import sand.cluster.TriggerTables.DeadLetter;
import sand.contracts.Trace;
import sand.frontend.FrontendMetrics;
import sand.frontend.internal.Json;

/** The parts of data-trigger retries that need no frontend: which ends are taken, and the memory bound. */
class BucketRetriesUnitTest {
  @Test
  void onlyAHostAgentsDataTriggerIsTaken() {
    assertEquals(
        "photos", BucketRetries.bucketOf(Trace.empty().add("trigger", "bucket:photos@h1", 1)));
    assertEquals(
        "a.b-c", BucketRetries.bucketOf(Trace.empty().add("trigger", "bucket:a.b-c@h1", 1)));
    assertNull(BucketRetries.bucketOf(Trace.empty().add("trigger", "bucket:photos#2@fe-1", 1)));
    assertNull(BucketRetries.bucketOf(Trace.empty().add("trigger", "timer:tick@fe-1", 1)));
    assertNull(BucketRetries.bucketOf(Trace.empty().add("frontend", "bucket:x@fe-1", 1)));
    assertNull(BucketRetries.bucketOf(Trace.empty().add("trigger", "bucket:@h1", 1)));
    assertNull(BucketRetries.bucketOf(Trace.empty()));
  }

  @Test
  void beyondTheBoundAFailureIsDeadLetteredAtOnceAndCounted() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    FrontendMetrics metrics = new FrontendMetrics("fe-test");
    Deliveries d = new Deliveries(null, null, store, metrics, Clock.systemUTC(), 0);
    AtomicInteger loads = new AtomicInteger();
    var failed = Json.object().set("error", Json.object().put("type", "ValueError"));
    d.resume("app-1", "bucket:photos", "e1", failed, () -> {
      loads.incrementAndGet();
      return Optional.of(new Deliveries.Resumed(
          "app-1", "thumbs", Json.object().put("key", "k"), Optional.empty()));
    });
    assertEquals(0, d.inFlight(), "nothing held");
    assertEquals(1, loads.get());
    List<DeadLetter> letters = store.triggers().deadLetters("app-1", null, 10);
    assertEquals(1, letters.size());
    DeadLetter l = letters.get(0);
    assertEquals("bucket:photos", l.source());
    assertEquals(1, l.attempts());
    assertEquals("e1", l.executions());
    assertEquals("{\"key\":\"k\"}", l.event());
    assertEquals("{\"type\":\"ValueError\"}", l.error());
    assertTrue(
        metrics
            .render()
            .contains(
                "app=\"thumbs\",frontend=\"fe-test\",outcome=\"refused\",trigger=\"bucket:photos\"} 1.0"),
        metrics.render());
    d.close();
  }

  @Test
  void aHeldResumeCountsAgainstTheBoundUntilItEnds() throws Exception {
    InMemoryClusterStore store = new InMemoryClusterStore();
    Deliveries d =
        new Deliveries(null, null, store, new FrontendMetrics("fe-test"), Clock.systemUTC(), 1);
    var failed = Json.object().set("error", Json.object().put("type", "ValueError"));
    // an event that is never found: held while it is read again (LOAD_TRIES x LOAD_EVERY)
    d.resume("app-1", "bucket:photos", "e1", failed, Optional::empty);
    assertEquals(1, d.inFlight());
    d.resume("app-1", "bucket:photos", "e2", failed, Optional::empty); // beyond the bound: at once
    assertEquals(1, store.triggers().deadLetters("app-1", null, 10).size());
    long deadline = System.nanoTime()
        + Deliveries.LOAD_EVERY.multipliedBy(Deliveries.LOAD_TRIES + 4).toNanos();
    while (d.inFlight() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertEquals(0, d.inFlight());
    assertEquals(2, store.triggers().deadLetters("app-1", null, 10).size());
    d.close();
  }
}
