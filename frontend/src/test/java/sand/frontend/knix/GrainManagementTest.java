package sand.frontend.knix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.InMemoryClusterStore;
import sand.frontend.AuthHandler.Delegation;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;

/** A grain's management request runs as its application's owner, with a key that lives for the call only. */
class GrainManagementTest {
  private static final String WORKFLOW =
      "{\"name\":\"shop\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\",\"next\":[\"end\"]}]}";

  private final InMemoryClusterStore store = new InMemoryClusterStore();
  private final List<String> keysUsed = new ArrayList<>();
  private final List<String> open = new ArrayList<>();
  private final LoopbackApi.Api api = (method, path, key, type, body) -> {
    keysUsed.add(key);
    return new LoopbackApi.Answer(404, null);
  };
  private final KnixManagement knix =
      new KnixManagement(store, k -> "unused", api, new KnixStorage(null), Clock.systemUTC(), 1);
  private final GrainManagement grains = new GrainManagement(
      store,
      account -> {
        String key = "delegated-for-" + account;
        open.add(key);
        return new Delegation(key, () -> open.remove(key));
      },
      knix);

  private void app(String appId, String owner, String desired) {
    store.putApplication(
        new ApplicationRecord(appId, "shop", owner, WORKFLOW, "", "{}", 1, desired, List.of()),
        Map.of());
  }

  private JsonNode run(String appId, String request) {
    return Json.parse(grains.run(appId, Json.parse(request.getBytes(), "t")), "reply");
  }

  @Test
  void theRequestRunsAsTheOwnerAndTheKeyEndsWithIt() {
    app("a1", "alice", "deployed");
    JsonNode r = run("a1", "{\"action\":\"getTriggerDetails\",\"data\":{}}");
    assertEquals("success", r.path("status").asText(), r.toString());
    JsonNode w = run("a1", "{\"action\":\"getWorkflows\",\"data\":{}}");
    assertEquals("success", w.path("status").asText(), w.toString());
    assertTrue(keysUsed.isEmpty() || keysUsed.stream().allMatch("delegated-for-alice"::equals));
    assertTrue(open.isEmpty(), "a delegation outlives its call: " + open);
  }

  @Test
  void noSignUpNoLoginNoAccountDeletionFromAFunction() {
    app("a1", "alice", "deployed");
    for (String action : List.of("signUp", "logIn", "deleteAccount")) {
      JsonNode r = run("a1", "{\"action\":\"" + action + "\",\"data\":{}}");
      assertEquals("failure", r.path("status").asText(), action);
      assertTrue(
          r.path("data").path("message").asText().contains("cannot be called from a function"),
          r.toString());
    }
  }

  @Test
  void anUndeployedOrUnknownApplicationGetsNothingDone() {
    app("a1", "alice", "undeployed");
    for (String appId : List.of("a1", "nope")) {
      JsonNode r = run(appId, "{\"action\":\"getWorkflows\",\"data\":{}}");
      assertEquals("failure", r.path("status").asText());
      assertTrue(r.path("data").path("message").asText().contains("not deployed"), r.toString());
    }
    assertTrue(keysUsed.isEmpty() && open.isEmpty());
  }
}
