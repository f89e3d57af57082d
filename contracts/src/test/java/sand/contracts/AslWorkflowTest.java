package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** ASL machines as grains: the same names as grainworker/workflow.py (both run asl-grains.json). */
class AslWorkflowTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void theSharedCasesGiveTheirGrainsInOrder() throws Exception {
    JsonNode cases;
    try (var in = AslWorkflowTest.class.getResourceAsStream("/asl-grains.json")) {
      cases = JSON.readTree(in).path("cases");
    }
    assertTrue(cases.size() >= 3);
    for (JsonNode c : cases) {
      Workflow w = Workflow.parse(c.get("doc"));
      assertEquals(c.get("entry").asText(), w.entry(), c.toString());
      List<List<String>> grains = new ArrayList<>();
      w.grains().forEach((g, r) -> grains.add(List.of(g, r)));
      List<List<String>> expected = new ArrayList<>();
      c.get("grains")
          .forEach(p -> expected.add(List.of(p.get(0).asText(), p.get(1).asText())));
      assertEquals(expected, grains, c.toString());
    }
  }

  @Test
  void builtInStatesRunNoResourceAndBadStructureSaysWhere() throws Exception {
    Workflow w =
        Workflow.parse("{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"Next\":\"T\"},"
            + "\"T\":{\"Type\":\"Task\",\"Resource\":\"fn\",\"End\":true}}}");
    assertEquals(Set.of("fn"), w.resources());
    assertEquals("asl", w.name());
    assertEquals(
        "StartAt: \"X\" is not a state of States",
        assertThrows(
                Workflow.Invalid.class,
                () -> Workflow.parse(
                    "{\"StartAt\":\"X\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"))
            .getMessage());
    assertEquals(
        "States.T.Resource: must name an uploaded grain (letters, digits, '_', '.', '-'), got \"bad name\"",
        assertThrows(
                Workflow.Invalid.class,
                () -> Workflow.parse("{\"StartAt\":\"T\",\"States\":{\"T\":{"
                    + "\"Type\":\"Task\",\"Resource\":\"bad name\",\"End\":true}}}"))
            .getMessage());
    assertTrue(assertThrows(
            Workflow.Invalid.class,
            () -> Workflow.parse("{\"StartAt\":\"P\",\"States\":{\"P\":{"
                + "\"Type\":\"Parallel\",\"End\":true,\"Branches\":[]}}}"))
        .getMessage()
        .startsWith("States.P.Branches:"));
  }
}
