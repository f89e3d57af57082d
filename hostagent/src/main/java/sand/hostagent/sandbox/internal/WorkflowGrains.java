package sand.hostagent.sandbox.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The grains of a workflow and the code resource each runs: what the sandbox needs to know to start
 * one grain worker per grain. The grain worker validates the whole workflow itself
 * ({@code grainworker/workflow.py}); this reads only names and resources.
 */
public record WorkflowGrains(String name, String entry, Map<String, String> resourceByGrain) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static WorkflowGrains parse(String workflowJson) {
    JsonNode doc;
    try {
      doc = JSON.readTree(workflowJson);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("the workflow is not valid JSON: " + e.getOriginalMessage());
    }
    if (doc == null || !doc.isObject() || !doc.path("functions").isArray() || doc.path("functions").isEmpty()) {
      throw new IllegalArgumentException("the workflow must be an object with a non-empty 'functions' list");
    }
    Map<String, String> grains = new LinkedHashMap<>();
    int i = 0;
    for (JsonNode f : doc.path("functions")) {
      String name = f.path("name").asText("");
      if (name.isEmpty() || name.equals("end")) {
        throw new IllegalArgumentException("workflow functions[" + i + "] has no valid 'name'");
      }
      String resource = f.path("resource").asText("");
      grains.put(name, resource.isEmpty() ? name : resource);
      i++;
    }
    String entry = doc.path("entry").asText("");
    if (!grains.containsKey(entry)) {
      throw new IllegalArgumentException("workflow entry '" + entry + "' is not one of its grains " + grains.keySet());
    }
    return new WorkflowGrains(doc.path("name").asText(""), entry, grains);
  }
}
