package sand.frontend.trigger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import sand.frontend.internal.Json;
import sand.frontend.invoke.RetryPolicy;

class ScheduleTest {
  private static long at(String iso) {
    return Instant.parse(iso).toEpochMilli();
  }

  @Test
  void anIntervalTicksAtWholeMultiplesSoEveryFrontendAgrees() {
    Schedule s = Schedule.every("10s");
    assertEquals(at("2026-11-27T01:00:10Z"), s.atOrBefore(at("2026-11-27T01:00:19.999Z")));
    assertEquals(at("2026-11-27T01:00:20Z"), s.atOrBefore(at("2026-11-27T01:00:20Z")));
    assertEquals(at("2026-11-27T01:00:30Z"), s.after(at("2026-11-27T01:00:20Z")));
    assertEquals("every 10s", s.describe());
  }

  @Test
  void aCronExpressionTicksInUtc() {
    Schedule s = Schedule.cron("*/5 * * * *");
    assertEquals(at("2026-11-27T01:05:00Z"), s.atOrBefore(at("2026-11-27T01:09:59Z")));
    assertEquals(at("2026-11-27T01:10:00Z"), s.atOrBefore(at("2026-11-27T01:10:00Z")));
    assertEquals(at("2026-11-27T01:15:00Z"), s.after(at("2026-11-27T01:10:00Z")));
    Schedule nightly = Schedule.cron("0 3 * * *");
    assertEquals(at("2026-11-28T03:00:00Z"), nightly.after(at("2026-11-27T03:00:00Z")));
  }

  @Test
  void badSchedulesNameTheRule() {
    for (String bad : new String[] {"0s", "500ms", "8d", "10", "ten seconds", ""}) {
      var e = assertThrows(IllegalArgumentException.class, () -> Schedule.every(bad));
      assertTrue(e.getMessage().contains("every="), e.getMessage());
    }
    for (String bad :
        new String[] {"* * * *", "61 * * * *", "* * * * * *", "@hourly", "a b c d e"}) {
      var e = assertThrows(IllegalArgumentException.class, () -> Schedule.cron(bad));
      assertTrue(e.getMessage().contains("cron="), e.getMessage());
    }
  }

  @Test
  void aQueueTriggerKeepsOutOfSandsTopicsAndGroups() {
    var q = TriggerSpec.parse("a1", "orders", Json.stored("{\"topic\": \"events.orders\"}"));
    assertEquals("sand.trigger.a1.orders", q.group());
    assertEquals(10, q.batchSize());
    assertEquals("latest", q.start());
    // as stored (with SAND's group) it reads back the same
    assertEquals(
        q.json(), TriggerSpec.stored("a1", "orders", Json.text(q.json())).json());
    for (String bad : new String[] {
      "{\"topic\": \"sand.a1.greet\"}",
      "{\"topic\": \"events.x\", \"group\": \"sand.hostagents\"}",
      "{\"topic\": \"events.x\", \"batch_size\": 0}",
      "{\"topic\": \"events.x\", \"start\": \"middle\"}",
      "{\"topic\": \"events.x\", \"per\": \"day\"}",
      "{\"topic\": \"bad topic\"}",
    }) {
      assertThrows(
          IllegalArgumentException.class,
          () -> TriggerSpec.parse("a1", "q", Json.stored(bad)),
          bad);
    }
  }

  @Test
  void theRetryPolicyBacksOffExponentiallyUpToItsCap() {
    RetryPolicy p =
        RetryPolicy.parse(Json.stored("{\"attempts\": 5, \"backoff_s\": 1, \"max_backoff_s\": 3}"));
    assertEquals(1000, p.backoff(1).toMillis());
    assertEquals(2000, p.backoff(2).toMillis());
    assertEquals(3000, p.backoff(3).toMillis());
    assertEquals(RetryPolicy.DEFAULT, RetryPolicy.parse(null));
    for (String bad : new String[] {
      "{\"attempts\": 0}",
      "{\"attempts\": 11}",
      "{\"attempts\": 1.5}",
      "{\"backoff_s\": -1}",
      "{\"tries\": 2}",
      "[]"
    }) {
      assertThrows(IllegalArgumentException.class, () -> RetryPolicy.parse(Json.stored(bad)), bad);
    }
  }
}
