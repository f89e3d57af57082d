package sand.frontend.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.junit.jupiter.api.Test;

class StaleAnswersBoundsTest {
  private static Reply json(int bytes) {
    return new Reply(200, Reply.JSON, new byte[bytes], Map.of());
  }

  @Test
  void itKeepsAtMostItsEntriesAndBytesTheOldestGoingFirst() {
    StaleAnswers s = new StaleAnswers();
    for (int i = 0; i < 10_000; i++) {
      s.keep("account:a /api/v1/apps/" + i, json(10));
    }
    assertEquals(4096, s.size());
    assertNull(s.stale("account:a /api/v1/apps/0"), "the oldest went first");
    assertNotNull(s.stale("account:a /api/v1/apps/9999"));
    for (int i = 0; i < 100; i++) { // 100 x 200 KB: past 16 MB
      s.keep("account:b /big/" + i, json(200 * 1024));
    }
    assertNotNull(s.stale("account:b /big/99"), "the newest is kept");
    assertNull(s.stale("account:b /big/0"));
  }

  @Test
  void onlySmallSuccessfulJsonAnswersAreKept() {
    StaleAnswers s = new StaleAnswers();
    s.keep("k1", new Reply(404, Reply.JSON, new byte[1], Map.of()));
    s.keep("k2", new Reply(200, "text/plain", new byte[1], Map.of()));
    s.keep("k3", json(300 * 1024));
    assertEquals(0, s.size());
  }
}
