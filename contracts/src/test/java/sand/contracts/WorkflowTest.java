package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Same rules and messages as grainworker/workflow.py: both run workflow-cases.json (tests/test_workflow.py). */
class WorkflowTest {
  @Test
  void theSharedCasesGiveTheirEntryOrTheirExactError() throws Exception {
    JsonNode cases;
    try (var in = WorkflowTest.class.getResourceAsStream("/workflow-cases.json")) {
      cases = new ObjectMapper().readTree(in);
    }
    assertEquals(true, cases.size() >= 20, "the shared cases are there");
    for (var c : cases) {
      if (c.has("error")) {
        assertEquals(
            c.get("error").asText(),
            assertThrows(Workflow.Invalid.class, () -> Workflow.parse(c.get("workflow")))
                .getMessage(),
            c.get("workflow").toString());
      } else {
        Workflow w = Workflow.parse(c.get("workflow"));
        assertEquals(c.get("entry").asText(), w.entry());
        List<String> resources = new ArrayList<>();
        c.get("resources").forEach(r -> resources.add(r.asText()));
        assertEquals(resources, List.copyOf(w.resources()));
      }
    }
  }

  private static String msg(String json) {
    return assertThrows(Workflow.Invalid.class, () -> Workflow.parse(json)).getMessage();
  }

  @Test
  void aValidWorkflowKnowsItsEntryAndResources() {
    Workflow w = Workflow.parse(
        ("{\"name\":\"w\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\","
            + "\"next\":[\"b\"],\"potentialNext\":[\"end\"]},{\"name\":\"b\",\"next\":[\"end\"],\"resource\":\"lib\"}]}"));
    assertEquals("a", w.entry());
    assertEquals(Set.of("a", "lib"), w.resources());
  }
}
