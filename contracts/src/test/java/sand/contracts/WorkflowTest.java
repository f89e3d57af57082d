package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** Same rules and messages as grainworker/workflow.py. */
class WorkflowTest {
  private static String msg(String json) {
    return assertThrows(Workflow.Invalid.class, () -> Workflow.parse(json)).getMessage();
  }

  @Test
  void aValidWorkflowKnowsItsEntryAndResources() {
    Workflow w = Workflow.parse(("{\"name\":\"w\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\","
        + "\"next\":[\"b\"],\"potentialNext\":[\"end\"]},{\"name\":\"b\",\"next\":[\"end\"],\"resource\":\"lib\"}]}"));
    assertEquals("a", w.entry());
    assertEquals(Set.of("a", "lib"), w.resources());
  }

  @Test
  void errorsSayWhatAndWhere() {
    assertEquals("workflow must be a JSON object with name, entry and functions", msg("[]"));
    assertEquals("workflow name None is missing or invalid: use letters, digits, '_', '.', '-'", msg("{}"));
    assertEquals("workflow 'functions' must be a non-empty list", msg("{\"name\":\"w\",\"functions\":[]}"));
    assertEquals("functions[0] has unknown field(s) [nxt]",
        msg("{\"name\":\"w\",\"functions\":[{\"name\":\"a\",\"nxt\":[]}]}"));
    assertEquals("functions[0].name \"end\" is invalid: letters, digits, '_', '.', '-', not 'end'",
        msg("{\"name\":\"w\",\"functions\":[{\"name\":\"end\"}]}"));
    assertEquals("functions[1]: duplicate grain name 'a'",
        msg("{\"name\":\"w\",\"functions\":[{\"name\":\"a\"},{\"name\":\"a\"}]}"));
    assertEquals("functions[0].next must be a list of grain names",
        msg("{\"name\":\"w\",\"functions\":[{\"name\":\"a\",\"next\":\"b\"}]}"));
    assertEquals("workflow 'entry' is missing: name the grain that receives the request",
        msg("{\"name\":\"w\",\"functions\":[{\"name\":\"a\"}]}"));
    assertEquals("entry 'x' is not a grain of the workflow; grains: [a]",
        msg("{\"name\":\"w\",\"entry\":\"x\",\"functions\":[{\"name\":\"a\"}]}"));
    assertEquals("functions[0] (a).potentialNext names unknown grain 'c'",
        msg("{\"name\":\"w\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\",\"potentialNext\":[\"c\"]}]}"));
  }
}
