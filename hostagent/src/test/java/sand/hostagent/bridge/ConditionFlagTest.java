package sand.hostagent.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import sand.datalayer.DataKind;
import sand.datalayer.DataMetadata;
import sand.hostagent.bridge.ConditionFlag.Flag;

/** The record format of docs/host-agent.md: key the event id, JSON value with the flag. */
class ConditionFlagTest {
  private final ObjectNode event = TestHost.event("e1", TestHost.RESIZE);

  @Test
  void everyFlagRoundTrips() throws Exception {
    DataMetadata md = new DataMetadata(DataKind.KV, "photo", 3, "abc");
    for (ConditionFlag f : List.of(ConditionFlag.newEvent(event, ""), ConditionFlag.processing(event, "h1"),
        ConditionFlag.data("e1", List.of(md), "h1"), ConditionFlag.finished("e1", "h1"))) {
      ConditionFlag back = ConditionFlag.parse("e1", f.value());
      assertEquals(f, back);
      JsonNode json = ConditionFlag.JSON.readTree(f.value());
      assertEquals(f.flag().wireName(), json.get("flag").asText());
    }
    JsonNode data = ConditionFlag.JSON.readTree(ConditionFlag.data("e1", List.of(md), "h1").value());
    assertEquals("{\"kind\":\"kv\",\"name\":\"photo\",\"size\":3,\"sha256\":\"abc\"}", data.get("data").get(0).toString());
    assertEquals(event, ConditionFlag.JSON.readTree(ConditionFlag.processing(event, "h1").eventBytes()));
  }

  @Test
  void theKeyIsTheEventId() {
    ProducerRecord<String, byte[]> r = ConditionFlag.finished("e1", "h1").toRecord("sand.shop.resize", 1);
    assertEquals("e1", r.key());
    assertEquals(1, r.partition());
    assertNull(ConditionFlag.finished("e1", "h1").toRecord("t", null).partition());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ConditionFlag.parse("other", ConditionFlag.newEvent(event, "").value()));
    assertTrue(e.getMessage().contains("not the id of its event"), e.getMessage());
  }

  @Test
  void unreadableRecordsSayWhy() {
    assertThrows(IllegalArgumentException.class, () -> ConditionFlag.parse("e1", TestHost.bytes("nope")));
    assertThrows(IllegalArgumentException.class, () -> ConditionFlag.parse("e1", TestHost.bytes("[1]")));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ConditionFlag.parse("e1", TestHost.bytes("{\"flag\":\"done\"}")));
    assertTrue(e.getMessage().contains("unknown flag"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ConditionFlag.parse("e1", TestHost.bytes("{\"flag\":\"new\"}")));
    assertEquals(Flag.FINISHED, ConditionFlag.parse("e1", TestHost.bytes("{\"flag\":\"finished\"}")).flag());
  }
}
