package sand.hostagent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.localbus.QueueStats;

/** How long an application has been idle on a host, from its local queues' counters. */
class IdleSandboxesTest {
  private static final long S = 1_000_000_000L;

  @Test
  void anApplicationWithEventsQueuedOrCountedIsNotIdle() {
    IdleSandboxes idle = new IdleSandboxes();
    List<QueueStats> quiet = List.of(
        new QueueStats("LQ_HA", 0, 10, 0, 0, 1),
        new QueueStats("app1/a", 0, 10, 3, 3, 1),
        new QueueStats("app1/b", 0, 10, 2, 2, 1));
    idle.observe(quiet, 0);
    assertEquals(Map.of("app1", Duration.ofSeconds(7)), idle.observe(quiet, 7 * S));

    List<QueueStats> polled =
        List.of(new QueueStats("app1/a", 0, 10, 4, 4, 1), new QueueStats("app1/b", 0, 10, 2, 2, 1));
    assertEquals(Duration.ZERO, idle.observe(polled, 8 * S).get("app1"), "an event went through");
    assertEquals(Duration.ofSeconds(1), idle.observe(polled, 9 * S).get("app1"));

    List<QueueStats> waiting =
        List.of(new QueueStats("app1/a", 1, 10, 5, 4, 0), new QueueStats("app1/b", 0, 10, 2, 2, 1));
    assertEquals(Duration.ZERO, idle.observe(waiting, 20 * S).get("app1"), "an event waits");
    assertEquals(Duration.ZERO, idle.observe(waiting, 30 * S).get("app1"), "still waits");
  }
}
