package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.contracts.ConditionFlag.Flag;

/** The record format of docs/host-agent.md: key the event id, JSON value with the flag. */
class ConditionFlagTest {
  private final ObjectNode event = ConditionFlag.JSON
      .createObjectNode()
      .put("id", "e1")
      .put("execution_id", "exec-e1")
      .put("app", "shop")
      .put("grain", "resize")
      .put("from", "")
      .put("frontend", "fe-1")
      .put("value", "v-e1");

  @Test
  void everyFlagRoundTrips() throws Exception {
    DataMetadata md = new DataMetadata(DataKind.KV, "photo", 3, "abc");
    for (ConditionFlag f : List.of(
        ConditionFlag.newEvent(event, ""),
        ConditionFlag.processing(event, "h1"),
        ConditionFlag.data("e1", List.of(md), "h1"),
        ConditionFlag.finished("e1", "h1"))) {
      ConditionFlag back = ConditionFlag.parse("e1", f.value());
      assertEquals(f, back);
      JsonNode json = ConditionFlag.JSON.readTree(f.value());
      assertEquals(f.flag().wireName(), json.get("flag").asText());
    }
    JsonNode data =
        ConditionFlag.JSON.readTree(ConditionFlag.data("e1", List.of(md), "h1").value());
    assertEquals(
        "{\"kind\":\"kv\",\"name\":\"photo\",\"size\":3,\"sha256\":\"abc\"}",
        data.get("data").get(0).toString());
    assertEquals(
        event, ConditionFlag.JSON.readTree(ConditionFlag.processing(event, "h1").eventBytes()));
  }

  @Test
  void theKeyIsTheEventId() {
    assertEquals("e1", ConditionFlag.finished("e1", "h1").eventId());
    IllegalArgumentException e = assertThrows(
        IllegalArgumentException.class,
        () -> ConditionFlag.parse("other", ConditionFlag.newEvent(event, "").value()));
    assertTrue(e.getMessage().contains("not the id of its event"), e.getMessage());
  }

  @Test
  void unreadableRecordsSayWhy() {
    assertThrows(IllegalArgumentException.class, () -> ConditionFlag.parse("e1", bytes("nope")));
    assertThrows(IllegalArgumentException.class, () -> ConditionFlag.parse("e1", bytes("[1]")));
    IllegalArgumentException e = assertThrows(
        IllegalArgumentException.class,
        () -> ConditionFlag.parse("e1", bytes("{\"flag\":\"done\"}")));
    assertTrue(e.getMessage().contains("unknown flag"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> ConditionFlag.parse("e1", bytes("{\"flag\":\"new\"}")));
    assertEquals(
        Flag.FINISHED,
        ConditionFlag.parse("e1", bytes("{\"flag\":\"finished\"}")).flag());
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
