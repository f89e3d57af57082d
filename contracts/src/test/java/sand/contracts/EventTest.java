package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The envelope against the examples grainworker's tests read too (contracts/src/test/resources/envelope). */
class EventTest {

  static byte[] example(String name) throws IOException {
    try (InputStream in = EventTest.class.getResourceAsStream("/envelope/" + name)) {
      return in.readAllBytes();
    }
  }

  @Test
  void theTraceStepsAreTheSharedDeclaration() throws IOException {
    JsonNode shared = Event.JSON.readTree(example("trace-steps.json"));
    Map<String, List<String>> steps = new LinkedHashMap<>();
    shared.fields().forEachRemaining(e -> {
      List<String> names = new ArrayList<>();
      e.getValue().forEach(n -> names.add(n.asText()));
      steps.put(e.getKey(), names);
    });
    assertEquals(steps, Trace.STEPS);
  }

  @Test
  void everyExampleParsesAndRoundTrips() throws IOException {
    for (String name : List.of("request.json", "output.json", "result.json")) {
      Event e = Event.parse(example(name));
      assertEquals("0f1e2d3c4b5a69788796a5b4c3d2e1f0", e.executionId());
      assertEquals("a1b2c3d4e5f60", e.app());
      assertEquals("fe-8081", e.frontend());
      assertEquals(32, e.tag().length());
      assertEquals(Event.JSON.readTree(example(name)), Event.parse(e.toBytes()).json(), name);
    }
    assertTrue(Event.parse(example("result.json")).toEnd());
    assertFalse(Event.parse(example("output.json")).toEnd());
  }

  @Test
  void aRequestIsBuiltWithItsFieldsInOrderAndAnEmptyTrace() throws IOException {
    Event r = Event.request(
            "5d1c2b0e8f3a4c6b9e7d1a2b3c4d5e6f",
            "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
            "a1b2c3d4e5f60",
            "greet",
            "fe-8081",
            Event.JSON.readTree("{\"name\": \"sand\"}"),
            1763870400000000000L,
            "9a8b7c6d5e4f30211203f4e5d6c7b8a9")
        .trace(Trace.FRONTEND, "fe-8081", 1_000_000L);
    assertEquals(
        Event.JSON.readTree(example("request.json")).toString(), r.json().toString());
    List<String> names = new ArrayList<>();
    r.json().fieldNames().forEachRemaining(names::add);
    assertEquals(Event.FIELDS, names);
  }

  @Test
  void theTimelineNamesEveryStepWithTimesFromTheFirst() throws IOException {
    ArrayNode t = Event.parse(example("result.json")).trace().timeline();
    assertEquals(1 + 2 + 5 + 5 + 2, t.size());
    assertEquals("frontend: request received", t.get(0).path("step").asText());
    assertEquals("greet: handler started", t.get(5).path("step").asText());
    assertEquals(1.2, t.get(5).path("at_ms").asDouble());
    assertEquals(0.05, t.get(5).path("delta_ms").asDouble());
    assertEquals("host agent: result sent", t.get(t.size() - 1).path("step").asText());
  }

  @Test
  void aBrokenEventSaysWhichField() {
    IllegalArgumentException e = assertThrows(
        IllegalArgumentException.class,
        () -> Event.parse("{\"id\": \"x\", \"app\": \"a\"}".getBytes()));
    assertEquals("event field 'execution_id' is missing", e.getMessage());
  }
}
