package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.frontend.AuthHandler.Delegation;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;
import sand.frontend.invoke.AgentGates;

/**
 * A grain's management request, as KNIX's functions make them ({@code context.addTrigger},
 * {@code addStorageTriggerForWorkflow}, {@code _invoke_management_api}...; docs/knix.md "From a grain"): the
 * request came from the host agent running the grain (through its gate, which names the grain's application), and
 * runs here as a KNIX door action of that application's owner, with a key acting for the owner in this frontend
 * only. So a function can do what its owner may, through the same checks, and nothing of another account.
 */
public final class GrainManagement implements AgentGates.Management {
  private static final Logger LOG = LoggerFactory.getLogger(GrainManagement.class);

  private final ClusterStore store;
  private final Function<String, Delegation> delegate;
  private final KnixManagement knix;

  /** @param delegate a key acting for an account, until closed (AuthHandler.delegate) */
  public GrainManagement(
      ClusterStore store, Function<String, Delegation> delegate, KnixManagement knix) {
    this.store = store;
    this.delegate = delegate;
    this.knix = knix;
  }

  /** KNIX's reply ({"status", "data"}) to {@code request} from a grain of application {@code appId}. */
  ObjectNode reply(String appId, JsonNode request) {
    Optional<ApplicationRecord> app;
    try {
      app = store.application(appId);
    } catch (RuntimeException e) {
      LOG.warn(
          "[app {}] a grain's management request: cluster state unreadable: {}",
          appId,
          e.toString());
      return KnixManagement.failureJson("the platform's state could not be read; call again");
    }
    if (app.isEmpty() || !HostAgentTables.DESIRED_DEPLOYED.equals(app.get().desired())) {
      return KnixManagement.failureJson("the function's workflow is not deployed any more");
    }
    if (!request.isObject()) {
      return KnixManagement.failureJson(
          "a management request is {\"action\": ..., \"data\": {...}}");
    }
    String owner = app.get().owner();
    try (Delegation d = delegate.apply(owner)) {
      ObjectNode reply = knix.forGrain(owner, d.key(), request);
      LOG.info(
          "[app {}] a grain's management request {}: {}",
          appId,
          request.path("action").asText("?"),
          reply.path("status").asText());
      return reply;
    } catch (ApiException e) {
      return KnixManagement.failureJson(e.getMessage());
    }
  }

  @Override
  public byte[] run(String appId, JsonNode request) {
    return Json.bytes(reply(appId, request));
  }

  @Override
  public byte[] refusal(String why) {
    return Json.bytes(KnixManagement.failureJson(why));
  }
}
