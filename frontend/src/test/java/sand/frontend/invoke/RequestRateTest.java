package sand.frontend.invoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RequestRateTest {
  private static final long SECOND = 1_000_000_000L;

  @Test
  void aBurstOfOneSecondsShareThenTheRate() {
    RequestRate r = new RequestRate();
    int taken = 0;
    for (int i = 0; i < 20; i++) {
      taken += r.take("alice", 5, 0) ? 1 : 0;
    }
    assertEquals(5, taken, "a second's worth at once");
    assertFalse(r.take("alice", 5, SECOND / 10), "0.5 of a token after 100 ms");
    assertTrue(r.take("alice", 5, SECOND / 5), "one token after 200 ms");
    assertTrue(r.take("bob", 5, SECOND / 5), "accounts do not share a bucket");
  }

  @Test
  void aShareBelowOnePerSecondStillAdmitsOneRequestAtATime() {
    RequestRate r = new RequestRate();
    assertTrue(r.take("alice", 0.5, 0));
    assertFalse(r.take("alice", 0.5, SECOND));
    assertTrue(r.take("alice", 0.5, 2 * SECOND));
  }
}
