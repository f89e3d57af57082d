package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import sand.hostagent.bridge.InFlightEvents.Home;

/** Issue 26: events an instance only says it delivered locally are bounded per application and expire. */
class InFlightEventsTest {
  private final InFlightEvents homes = new InFlightEvents();

  private static Home home(String app) {
    return new Home(
        "sand." + app + ".g", 0, app, CompletableFuture.completedFuture(null), "g", null);
  }

  @Test
  void claimsAreBoundedPerApplicationInNumberAndBytes() {
    assertTrue(homes.registerLocal("a1", home("shop"), 10, 2, 100, Long.MAX_VALUE));
    assertTrue(
        homes.registerLocal("a1", home("shop"), 10, 2, 100, Long.MAX_VALUE),
        "the same event again: no more");
    assertTrue(homes.registerLocal("a2", home("shop"), 10, 2, 100, Long.MAX_VALUE));
    assertFalse(
        homes.registerLocal("a3", home("shop"), 10, 2, 100, Long.MAX_VALUE),
        "a third is past the count");
    assertTrue(
        homes.registerLocal("b1", home("mall"), 10, 2, 100, Long.MAX_VALUE),
        "another application's own bound");
    assertFalse(
        homes.registerLocal("b2", home("mall"), 91, 2, 100, Long.MAX_VALUE), "past the bytes");
    homes.register("fed", home("shop")); // delivered by the agent itself: not counted
    assertEquals(Map.of("shop", 3, "mall", 1), homes.countByApplication());

    assertTrue(homes.remove("shop", "a1") != null); // finished: room again
    assertTrue(homes.registerLocal("a3", home("shop"), 10, 2, 100, Long.MAX_VALUE));
    homes.forgetApplication("shop");
    assertTrue(
        homes.registerLocal("a4", home("shop"), 10, 2, 100, Long.MAX_VALUE),
        "forgotten with its application");
  }

  @Test
  void claimsExpireOldestFirstAndOnlyThey() {
    homes.registerLocal("old", home("shop"), 1, 10, 100, 1_000);
    homes.registerLocal("new", home("shop"), 1, 10, 100, 2_000);
    homes.register("fed", home("shop"));
    var expired = homes.expireLocal(1_500);
    assertEquals(1, expired.size());
    assertEquals("old", expired.get(0).getKey());
    assertNull(homes.get("shop", "old"));
    assertTrue(homes.get("shop", "new") != null);
    assertEquals(2, homes.expireLocal(10_000).size() + 1, "then 'new'; 'fed' never expires here");
    assertTrue(homes.get("shop", "fed") != null);
  }
}
