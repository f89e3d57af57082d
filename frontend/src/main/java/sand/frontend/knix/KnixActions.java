package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * The KNIX actions SAND answers: an action's name to its handler, each handler holding only the resource it acts
 * on. {@code open} actions need no token (the version, sign-up, login); the rest are the caller's.
 */
final class KnixActions {
  /** An action anyone may call: its request's {@code data} and the call (the client's address). */
  @FunctionalInterface
  interface Open {
    ObjectNode run(JsonNode data, Call call);
  }

  /** An action of a caller whose token was checked. */
  @FunctionalInterface
  interface Action {
    ObjectNode run(JsonNode data, Caller caller);
  }

  /** A resource's handler of the member of {@code data} it reads ({@code function}, {@code workflow}). */
  @FunctionalInterface
  private interface On {
    ObjectNode run(Caller caller, JsonNode member);
  }

  private final Map<String, Open> open = new LinkedHashMap<>();
  private final Map<String, Action> authenticated = new LinkedHashMap<>();

  KnixActions(
      KnixAccounts accounts,
      KnixFunctions functions,
      KnixWorkflows workflows,
      KnixStorage storage,
      KnixTriggers triggers,
      KnixBuckets buckets) {
    open.put("version", (d, call) -> Json.object().put("message", KnixManagement.VERSION));
    open.put("signUp", (d, call) -> accounts.signUp(d.path("user"), call));
    open.put("logIn", (d, call) -> accounts.logIn(d.path("user"), call));

    authenticated.put("deleteAccount", (d, c) -> accounts.deleteAccount(c));

    authenticated.put("getFunctions", (d, c) -> functions.getFunctions(c));
    function("addFunction", functions::addFunction);
    function("modifyFunction", functions::modifyFunction);
    function("deleteFunction", functions::deleteFunction);
    function("uploadFunctionCode", functions::uploadFunctionCode);
    function("uploadFunctionZipMetadata", functions::uploadZipMetadata);
    function("getFunctionZipMetadata", functions::getZipMetadata);
    function("getFunctionCode", functions::getFunctionCode);
    function("getFunctionZip", functions::getFunctionZip);
    function("uploadFunctionRequirements", functions::uploadRequirements);
    function("getFunctionRequirements", functions::getRequirements);

    workflow("getWorkflows", workflows::getWorkflows);
    workflow("addWorkflow", workflows::addWorkflow);
    workflow("modifyWorkflow", workflows::modifyWorkflow);
    workflow("deleteWorkflow", workflows::deleteWorkflow);
    workflow("uploadWorkflowJSON", workflows::uploadWorkflowJson);
    workflow("getWorkflowJSON", workflows::getWorkflowJson);
    workflow("deployWorkflow", workflows::deployWorkflow);
    workflow("undeployWorkflow", workflows::undeployWorkflow);
    workflow("retrieveAllWorkflowLogs", workflows::workflowLogs);
    workflow("clearAllWorkflowLogs", workflows::clearLogs);
    authenticated.put("getWorkflowDetails", (d, c) -> workflows.getWorkflowDetails(d, c));

    authenticated.put("addTrigger", (d, c) -> triggers.addTrigger(d, c));
    authenticated.put("getTriggerDetails", (d, c) -> triggers.getTriggerDetails(d, c));
    authenticated.put("addTriggerForWorkflow", (d, c) -> triggers.addTriggerForWorkflow(d, c));
    authenticated.put(
        "deleteTriggerForWorkflow", (d, c) -> triggers.deleteTriggerForWorkflow(d, c));
    authenticated.put("deleteTrigger", (d, c) -> triggers.deleteTrigger(d, c));

    // triggerable buckets (docs/data-triggers.md)
    authenticated.put("addTriggerableBucket", (d, c) -> buckets.addBucket(d, c));
    authenticated.put("getTriggerableBuckets", (d, c) -> buckets.getBuckets(d, c));
    authenticated.put("deleteTriggerableBucket", (d, c) -> buckets.deleteBucket(d, c));
    authenticated.put("addStorageTriggerForWorkflow", (d, c) -> buckets.addTrigger(d, c));
    authenticated.put("deleteStorageTriggerForWorkflow", (d, c) -> buckets.deleteTrigger(d, c));

    // a workflow's data space is its application's: the storage actions name workflows by their
    // KNIX id
    authenticated.put(
        "performStorageAction",
        (d, c) -> storage.perform(c.account(), d.path("storage"), wid -> workflows.appId(c, wid)));
  }

  private void function(String action, On handler) {
    authenticated.put(action, (d, c) -> handler.run(c, d.path("function")));
  }

  private void workflow(String action, On handler) {
    authenticated.put(action, (d, c) -> handler.run(c, d.path("workflow")));
  }

  /** The action anyone may call by this name, or null: it needs a token, or there is none. */
  Open open(String action) {
    return open.get(action);
  }

  /** The caller's action of this name; none: KNIX's failure "Unsupported action". */
  Action authenticated(String action) {
    Action a = authenticated.get(action);
    if (a == null) {
      throw unsupported(action);
    }
    return a;
  }

  /** Every action this door answers. */
  Set<String> names() {
    Set<String> all = new TreeSet<>(open.keySet());
    all.addAll(authenticated.keySet());
    return all;
  }

  static Failure unsupported(String action) {
    return new Failure("Unsupported action: '" + action + "'"
        + (action.isEmpty()
            ? " (send {\"action\": " + "..., \"data\": {...}})"
            : "; SAND's KNIX door has no such action (docs/knix.md)"));
  }
}
