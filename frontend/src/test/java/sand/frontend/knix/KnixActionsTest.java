package sand.frontend.knix;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import sand.cluster.InMemoryClusterStore;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;

/** The KNIX door's table of actions: what it routes, and what it answers for an action it does not have. */
class KnixActionsTest {
  /** The management actions of KNIX's SDK and CLI (mfn-sdk 0.8.9) that SAND answers (docs/knix.md "Actions"). */
  private static final Set<String> OPEN = Set.of("version", "signUp", "logIn");

  private static final Set<String> AUTHENTICATED = Set.of(
      "deleteAccount",
      "getFunctions",
      "addFunction",
      "modifyFunction",
      "deleteFunction",
      "uploadFunctionCode",
      "uploadFunctionZipMetadata",
      "getFunctionZipMetadata",
      "getFunctionCode",
      "getFunctionZip",
      "uploadFunctionRequirements",
      "getFunctionRequirements",
      "getWorkflows",
      "addWorkflow",
      "modifyWorkflow",
      "deleteWorkflow",
      "uploadWorkflowJSON",
      "getWorkflowJSON",
      "deployWorkflow",
      "undeployWorkflow",
      "retrieveAllWorkflowLogs",
      "clearAllWorkflowLogs",
      "getWorkflowDetails",
      "performStorageAction",
      "addTrigger",
      "getTriggerDetails",
      "addTriggerForWorkflow",
      "deleteTriggerForWorkflow",
      "deleteTrigger",
      "addTriggerableBucket",
      "getTriggerableBuckets",
      "deleteTriggerableBucket",
      "addStorageTriggerForWorkflow",
      "deleteStorageTriggerForWorkflow");

  private final InMemoryClusterStore store = new InMemoryClusterStore();
  private final LoopbackApi.Api api =
      (method, path, key, type, body) -> new LoopbackApi.Answer(404, null);
  private final Clock clock = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
  private final KnixActions actions = new KnixActions(
      new KnixAccounts(store, api, 1),
      new KnixFunctions(store, api, clock),
      new KnixWorkflows(store, api, clock, new KnixBuckets(store, api)),
      new KnixStorage(null),
      new KnixTriggers(store, api),
      new KnixBuckets(store, api));

  @Test
  void everyActionOfTheSdkIsRouted() {
    for (String a : OPEN) {
      assertNotNull(actions.open(a), a);
    }
    for (String a : AUTHENTICATED) {
      assertNull(actions.open(a), a + " needs a token");
      assertNotNull(actions.authenticated(a), a);
    }
    Set<String> all = new TreeSet<>(OPEN);
    all.addAll(AUTHENTICATED);
    assertEquals(all, actions.names(), "the door answers the SDK's actions, no more");
  }

  @Test
  void anActionGoesToItsResource() {
    Caller c = new Caller("acct", "key", null);
    assertEquals(
        "Found 0 functions.",
        actions
            .authenticated("getFunctions")
            .run(Json.object(), c)
            .path("message")
            .asText());
    assertEquals(
        "Found 0 workflows.",
        actions
            .authenticated("getWorkflows")
            .run(Json.object(), c)
            .path("message")
            .asText());
    assertEquals(
        KnixManagement.VERSION,
        actions.open("version").run(Json.object(), null).path("message").asText());
  }

  @Test
  void anUnknownActionAnswersUnsupportedAsBefore() {
    KnixManagement.Failure f =
        assertThrows(KnixManagement.Failure.class, () -> actions.authenticated("frobnicate"));
    assertEquals(
        "Unsupported action: 'frobnicate'; SAND's KNIX door has no such action (docs/knix.md)",
        f.getMessage());
    f = assertThrows(KnixManagement.Failure.class, () -> actions.authenticated(""));
    assertEquals(
        "Unsupported action: '' (send {\"action\": ..., \"data\": {...}})", f.getMessage());
    assertNull(actions.open("frobnicate"));
  }
}
