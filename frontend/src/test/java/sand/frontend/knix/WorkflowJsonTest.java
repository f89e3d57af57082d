package sand.frontend.knix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import sand.contracts.Workflow;
import sand.contracts.asl.KnixDialect;
import sand.frontend.internal.Json;

/** A machine through the KNIX door speaks KNIX's dialect; the same machine through SAND's API does not. */
class WorkflowJsonTest {
  private static final String MACHINE =
      "{\"StartAt\": \"F\", \"EnableCheckpoints\": false, \"States\": {\"F\": "
          + "{\"Type\": \"Task\", \"Resource\": \"f\", \"End\": true, \"Catch\": [{\"ErrorEquals\": "
          + "[\"States.All\"], \"Next\": \"G\"}]}, \"G\": {\"Type\": \"Pass\", \"End\": true}}}";

  @Test
  void theKnixDoorMarksAnAslMachineAsKnixsDialect() throws Exception {
    JsonNode doc = Json.MAPPER.readTree(MACHINE);
    JsonNode sand = WorkflowJson.toSand(doc, "app1");
    assertEquals("knix", sand.path(KnixDialect.FIELD).asText());
    assertTrue(KnixDialect.isKnix(sand));
    Workflow.parse(sand); // accepted: States.All is a name, EnableCheckpoints KNIX's
    assertFalse(KnixDialect.isKnix(doc));
  }

  @Test
  void throughSandsOwnApiTheSameMachineFollowsTheSpecification() throws Exception {
    Workflow.Invalid e = org.junit.jupiter.api.Assertions.assertThrows(
        Workflow.Invalid.class, () -> Workflow.parse(Json.MAPPER.readTree(MACHINE)));
    assertTrue(e.getMessage().startsWith("EnableCheckpoints: unknown field"), e.getMessage());
  }

  @Test
  void aNativeWorkflowThroughTheDoorCarriesKnixsDialect() throws Exception {
    JsonNode doc = Json.MAPPER.readTree(
        "{\"name\": \"w\", \"entry\": \"a\", \"functions\": [{\"name\": \"a\", \"next\": [\"end\"]}]}");
    JsonNode sand = WorkflowJson.toSand(doc, "app1");
    assertEquals("knix", sand.path(KnixDialect.FIELD).asText());
    Workflow.parse(sand);
    Workflow.Invalid e = org.junit.jupiter.api.Assertions.assertThrows(
        Workflow.Invalid.class,
        () -> Workflow.parse(((com.fasterxml.jackson.databind.node.ObjectNode) sand.deepCopy())
            .put(KnixDialect.FIELD, "aws")));
    assertTrue(e.getMessage().startsWith("SandDialect: \"aws\" is not a dialect"), e.getMessage());
  }
}
