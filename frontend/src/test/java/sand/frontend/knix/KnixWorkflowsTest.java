package sand.frontend.knix;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.cluster.InMemoryClusterStore;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;

/** The KNIX door's workflow logs (docs/knix.md, docs/sessions.md). */
class KnixWorkflowsTest {
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");

  @Test
  void aClearHidesLinesNotTheExecutionsThatLogAfterIt() {
    List<String> paths = new ArrayList<>();
    // One execution started before the clear (a session's): a line from before it, one from after
    // it.
    JsonNode logs = Json.parse(
        ("{\"executions\": [{\"execution_id\": \"e1\", \"logs\": ["
                + "{\"time\": \"2026-01-01T11:59:59Z\", \"grain\": \"beat\", \"level\": \"STDOUT\", \"text\": \"old\"},"
                + "{\"time\": \"2026-01-01T12:00:01Z\", \"grain\": \"beat\", \"level\": \"STDOUT\", \"text\": \"new\"}]}]}")
            .getBytes(StandardCharsets.UTF_8),
        "logs");
    LoopbackApi.Api api = (method, path, key, type, body) -> {
      paths.add(path);
      return new LoopbackApi.Answer(200, logs);
    };
    InMemoryClusterStore store = new InMemoryClusterStore();
    KnixWorkflows workflows = new KnixWorkflows(
        store, api, Clock.fixed(NOW, ZoneOffset.UTC), new KnixBuckets(store, api));
    Caller c = new Caller("acct", "key", null);
    String id = workflows
        .addWorkflow(c, Json.object().put("name", "sessions"))
        .path("workflow")
        .path("id")
        .asText();
    workflows.clearLogs(c, Json.object().put("id", id));
    paths.clear();
    JsonNode out = workflows.workflowLogs(c, Json.object().put("id", id)).path("workflow");
    String log =
        new String(Base64.getDecoder().decode(out.path("log").asText()), StandardCharsets.UTF_8);
    assertEquals(
        List.of("new"),
        log.lines().map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList());
    long dayAgo = NOW.toEpochMilli() - 24 * 3600_000L;
    assertEquals(
        "/api/v1/apps/sessions-" + id.substring(0, 8) + "/logs?since=" + dayAgo + "&limit=100",
        paths.get(0),
        "executions of the last day, not only those started after the clear");
  }
}
