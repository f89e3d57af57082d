package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A fan-out's timeline as rows of grain instances, each with its parent (issue 29, aslrun._merge_traces). */
class TraceInstancesTest {
  private static JsonNode rows(String trace) throws Exception {
    return Trace.of(new ObjectMapper().readTree(trace)).instances();
  }

  private static String grain(String where, long ms) {
    long t = ms * 1_000_000;
    return "[\"grain\",\"" + where + "\"," + t + "," + t + "," + t + "," + t + "," + (t + 1_000_000)
        + "]";
  }

  @Test
  void everyItemAndBranchIsARowWithItsParent() throws Exception {
    List<String> e = new ArrayList<>(
        List.of("[\"frontend\",\"f\",0]", "[\"agent.in\",\"h1\",1,2]", grain("Fan", 10)));
    for (int i = 0; i < 3; i++) {
      e.add(grain("Fan.it.Dbl [Fan item " + i + "]", 20 + i));
    }
    e.add(grain("Fan.it.Dbl", 30)); // the instance that joined, going on as the Map
    for (int b = 0; b < 2; b++) {
      e.add(grain("Par.b" + b + ".B [Par branch " + b + "]", 40 + b));
      if (b == 1) {
        e.add("[\"agent.in\",\"h2\",1,2]"); // branch 1's second state ran on another host
      }
      e.add(grain("Par.b" + b + ".C [Par branch " + b + "]", 50 + b));
      e.add(grain("In.x [In item 0] [Par branch " + b + "]", 60 + b)); // a Map inside the branch
    }
    JsonNode r = rows("[" + String.join(",", e) + "]");
    assertEquals(11, r.size(), r.toString());
    assertTrue(r.get(0).get("parent").isNull());
    for (int i = 1; i <= 3; i++) {
      assertEquals("Fan.it.Dbl", r.get(i).get("grain").asText());
      assertEquals("Fan", r.get(i).get("state").asText());
      assertEquals(i - 1, r.get(i).get("item").asInt());
      assertEquals(0, r.get(i).get("parent").asInt(), "an item's parent is the fan-out's instance");
    }
    assertEquals(0, r.get(4).get("parent").asInt());
    assertEquals(
        4, r.get(5).get("parent").asInt(), "branch 0 starts from the instance that fanned Par out");
    assertEquals(1, r.get(8).get("branch").asInt());
    assertEquals(5, r.get(6).get("parent").asInt(), "the next state of a branch follows its first");
    assertEquals(
        6, r.get(7).get("parent").asInt(), "a nested Map's item starts from its branch's instance");
    assertEquals("In", r.get(7).get("state").asText());
    assertEquals("h1", r.get(3).get("host").asText(), "an item on its fan-out's host");
    assertEquals("h1", r.get(8).get("host").asText());
    assertEquals("h2", r.get(9).get("host").asText(), "after an agent.in: that host");
    assertEquals("h2", r.get(10).get("host").asText(), "its next instance over the local bus");
    assertTrue(r.get(0).has("host"));
    assertEquals(30.0, r.get(4).get("polled_ms").asDouble(), 1e-9);
    assertEquals(31.0, r.get(4).get("ended_ms").asDouble(), 1e-9);
  }

  @Test
  void aTraceWithoutGrainsHasNoRows() throws Exception {
    assertEquals(0, rows("[[\"frontend\",\"f\",0],[\"bad\"]]").size());
  }
}
