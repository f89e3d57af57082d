package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataLayerException;

/** A grain's management request on its way through the host agent to a frontend and back. */
class ManagementRelayTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final byte[] REQUEST =
      "{\"action\":\"addTrigger\",\"data\":{}}".getBytes(StandardCharsets.UTF_8);

  private final List<JsonNode> offered = new CopyOnWriteArrayList<>();

  private ManagementRelay relay(boolean frontendPolls, Duration wait) {
    return new ManagementRelay(
        "h1",
        m -> {
          if (frontendPolls) {
            try {
              offered.add(JSON.readTree(m));
            } catch (java.io.IOException e) {
              throw new AssertionError(e);
            }
          }
          return frontendPolls;
        },
        wait);
  }

  /** Answer every offered request with its id, as a frontend would through the gate. */
  private void answerAll(ManagementRelay r, CountDownLatch stop) {
    CompletableFuture.runAsync(() -> {
      int done = 0;
      while (stop.getCount() > 0) {
        while (done < offered.size()) {
          JsonNode m = offered.get(done++).path("management");
          r.answer(
              m.path("id").asText(),
              ("{\"status\":\"success\",\"data\":{\"app\":\"" + m.path("app").asText() + "\"}}")
                  .getBytes(StandardCharsets.UTF_8));
        }
        Thread.onSpinWait();
      }
    });
  }

  @Test
  void theFrontendsAnswerIsTheGrainsAndTheRequestNamesTheGrainsApplication() throws Exception {
    ManagementRelay r = relay(true, Duration.ofSeconds(5));
    CountDownLatch stop = new CountDownLatch(1);
    answerAll(r, stop);
    try {
      byte[] reply = r.manage("app-1", REQUEST);
      assertEquals(
          "{\"status\":\"success\",\"data\":{\"app\":\"app-1\"}}",
          new String(reply, StandardCharsets.UTF_8));
      JsonNode m = offered.get(0).path("management");
      assertEquals("app-1", m.path("app").asText());
      assertEquals("addTrigger", m.path("request").path("action").asText());
      assertEquals(0, r.pending());
    } finally {
      stop.countDown();
    }
  }

  @Test
  void malformedRequestsAreRefusedBeforeAnyFrontendSeesThem() {
    ManagementRelay r = relay(true, Duration.ofSeconds(1));
    for (String bad : List.of("not json", "[1,2]", "\"text\"")) {
      DataLayerException e = assertThrows(
          DataLayerException.class, () -> r.manage("app-1", bad.getBytes(StandardCharsets.UTF_8)));
      assertEquals(DataLayerException.Code.BAD_REQUEST, e.code(), bad);
    }
    assertTrue(offered.isEmpty());
  }

  @Test
  void withoutAFrontendOrAnAnswerTheGrainHearsSoAndNothingStaysBehind() {
    DataLayerException none = assertThrows(
        DataLayerException.class, () -> relay(false, Duration.ofSeconds(1)).manage("a", REQUEST));
    assertEquals(DataLayerException.Code.UNAVAILABLE, none.code());
    assertTrue(none.getMessage().contains("no frontend polls"), none.getMessage());
    ManagementRelay silent = relay(true, Duration.ofMillis(200));
    DataLayerException late =
        assertThrows(DataLayerException.class, () -> silent.manage("a", REQUEST));
    assertEquals(DataLayerException.Code.UNAVAILABLE, late.code());
    assertEquals(0, silent.pending());
    String id = offered.get(0).path("management").path("id").asText();
    assertFalse(silent.answer(id, new byte[0]), "a late answer finds nobody waiting");
  }

  @Test
  void oneApplicationHasAtMostPerAppCallsUnderWayOthersAreNotHeldUp() throws Exception {
    ManagementRelay r = relay(true, Duration.ofSeconds(5));
    List<CompletableFuture<byte[]>> waiting = new CopyOnWriteArrayList<>();
    for (int i = 0; i < ManagementRelay.PER_APP; i++) {
      waiting.add(CompletableFuture.supplyAsync(() -> r.manage("busy", REQUEST)));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (offered.size() < ManagementRelay.PER_APP && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    DataLayerException e = assertThrows(DataLayerException.class, () -> r.manage("busy", REQUEST));
    assertEquals(DataLayerException.Code.QUOTA_EXCEEDED, e.code());
    CountDownLatch stop = new CountDownLatch(1);
    answerAll(r, stop);
    try {
      assertEquals(
          "{\"status\":\"success\",\"data\":{\"app\":\"other\"}}",
          new String(r.manage("other", REQUEST), StandardCharsets.UTF_8));
      for (CompletableFuture<byte[]> w : waiting) {
        w.get(5, TimeUnit.SECONDS);
      }
      r.manage("busy", REQUEST); // its calls ended: it may call again
    } finally {
      stop.countDown();
    }
  }
}
