package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.internal.Throttle;

/**
 * The KNIX door (docs/knix.md): {@code POST /management} with KNIX MicroFunctions' {@code {"action", "data"}}
 * requests, so that KNIX's SDK and CLI ({@code mfn-sdk}, {@code mfn-cli} 0.8.9) work against SAND unchanged.
 *
 * <p>It is a second door into the same rooms: a KNIX function is a SAND grain of the caller's account, a KNIX
 * workflow a SAND application, a KNIX token the account's API key. Every change is made through SAND's own REST
 * API with that key ({@link LoopbackApi}), so the API's checks apply as they do to any client. What KNIX has and
 * SAND does not keep is kept here as {@link KnixRecord}s: logins by e-mail, the KNIX ids of functions and
 * workflows, the pieces of an uploaded function (text code, zip chunks, requirements) and of a workflow (its JSON).
 *
 * <p>Replies are KNIX's: HTTP 200 with {@code {"status": "success", "data": {...}}} or {@code {"status": "failure",
 * "data": {"message": ...}}}. Each action is a handler in {@link KnixActions}: accounts ({@link KnixAccounts}),
 * functions ({@link KnixFunctions}), workflows ({@link KnixWorkflows}), storage ({@link KnixStorage}); a workflow's
 * executions have their own endpoint ({@link KnixExecutions}).
 */
public final class KnixManagement {
  private static final Logger LOG = LoggerFactory.getLogger(KnixManagement.class);
  static final String VERSION = "SAND (KNIX management API as of mfn-sdk 0.8.9)";
  /** Where the execution endpoint of a KNIX workflow is, under its application's path. */
  static final String ENDPOINT_SUFFIX = "/knix";
  /** What a zip holds at most unless {@link #limitZips} says otherwise (the frontend's default body limit). */
  private static final long DEFAULT_MAX_ZIP_BYTES = KnixFunctions.DEFAULT_MAX_ZIP_BYTES;
  /** Logins that may wait for a password derivation slot, per slot; more answer 503 busy at once. */
  public static final int WAITERS_PER_SLOT = KnixAccounts.WAITERS_PER_SLOT;

  /** A request KNIX answers with {@code status: failure}. */
  public static final class Failure extends RuntimeException {
    Failure(String message) {
      super(message);
    }
  }

  /** The account of an API key, or an {@link ApiException} saying why there is none (the API's own check). */
  @FunctionalInterface
  public interface Keys {
    String account(String key);
  }

  private final Keys keys;
  private final KnixAccounts accounts;
  private final KnixFunctions functions;
  private final KnixActions actions;

  public KnixManagement(
      ClusterStore store,
      Keys keys,
      LoopbackApi.Api api,
      KnixStorage storage,
      Clock clock,
      int iterations) {
    this.keys = keys;
    this.accounts = new KnixAccounts(store, api, iterations);
    this.functions = new KnixFunctions(store, api, clock);
    KnixBuckets buckets = new KnixBuckets(store, api);
    this.actions = new KnixActions(
        accounts,
        functions,
        new KnixWorkflows(store, api, clock, buckets),
        storage,
        new KnixTriggers(store, api),
        buckets);
  }

  /**
   * Limits on strangers' attempts (issue 26, finding 8): sign-ups per client address, logins per client address and
   * per e-mail; at most {@code hashSlots} password derivations at once (a few more wait up to a few seconds; the
   * rest answer 503 busy at once).
   */
  public KnixManagement limitLogins(
      Throttle signUps, Throttle loginsByAddress, Throttle loginsByEmail, int hashSlots) {
    accounts.limitLogins(signUps, loginsByAddress, loginsByEmail, hashSlots);
    return this;
  }

  /**
   * A function's uploaded zip (its chunks together) is at most {@code maxZipBytes}, and unpacks to at most
   * {@code maxUnpackedBytes} in at most {@link sand.frontend.GrainUpload#MAX_ENTRIES} entries: what the grain API
   * takes.
   */
  public KnixManagement limitZips(long maxZip, long maxUnpacked) {
    functions.limitZips(maxZip, maxUnpacked);
    return this;
  }

  public void routes(Router r) {
    r.add("POST", "/management", false, this::handle);
  }

  /** The grain's zip: {@code base}'s entries, {@code code} as {@code <name>.py}, {@code req} as requirements.txt. */
  public static byte[] zip(String name, byte[] base, byte[] code, byte[] req, long maxUnpacked) {
    return ZipAssembly.zip(name, base, code, req, maxUnpacked);
  }

  Reply handle(Call call) {
    if (call.body().length == 0) { // not KNIX's client at all: the API's own 400
      throw ApiException.badRequest(
          "the management API needs a JSON body {\"action\": ..., \"data\": {...}} "
              + "(KNIX MicroFunctions' actions, docs/knix.md)");
    }
    JsonNode req;
    try {
      req = call.json("management request");
    } catch (ApiException e) {
      return failure(e.getMessage());
    }
    String action = req.path("action").asText("");
    JsonNode data = req.path("data");
    try {
      KnixActions.Open open = actions.open(action);
      if (open != null) {
        return success(open.run(data, call));
      }
      Caller caller = caller(data, call);
      return success(actions.authenticated(action).run(data, caller));
    } catch (Failure e) {
      return failure(e.getMessage());
    } catch (ApiException e) {
      if (e.status() == 429
          || e.code().equals("busy")) { // HTTP's own answer, with Retry-After, as the API gives it
        throw e;
      }
      if (e.status() >= 500) {
        LOG.warn("[knix {}] {}", action, e.getMessage());
      }
      return failure(e.getMessage());
    }
  }

  /** The caller of an action that needs a token: checked before the action is looked up, as KNIX does. */
  private Caller caller(JsonNode data, Call call) {
    String token = data.path("user").path("token").asText("");
    if (token.isEmpty()) {
      throw new Failure("User verification failed: no token (log in first: action logIn)");
    }
    try {
      return new Caller(keys.account(token), token, call);
    } catch (ApiException e) {
      throw new Failure("User verification failed: " + e.getMessage());
    }
  }

  /** What a function may not do as its owner: end the account (only its owner does, with the password). */
  static final java.util.Set<String> NOT_FROM_A_GRAIN = java.util.Set.of("deleteAccount");

  /**
   * A grain's management request ({@link GrainManagement}), run as {@code account} with a key acting for it: KNIX's
   * reply. Only the actions of an account's own things: a grain signs nobody up, logs nobody in, deletes no account.
   */
  ObjectNode forGrain(String account, String key, JsonNode request) {
    String action = request.path("action").asText("");
    try {
      if (actions.open(action) != null || NOT_FROM_A_GRAIN.contains(action)) {
        throw new Failure(
            "action '" + action + "' cannot be called from a function: a function acts "
                + "as its workflow's owner for the owner's functions, workflows, triggers, buckets and data");
      }
      return successJson(
          actions.authenticated(action).run(request.path("data"), new Caller(account, key, null)));
    } catch (Failure | ApiException e) {
      return failureJson(e.getMessage());
    }
  }

  private static ObjectNode successJson(ObjectNode data) {
    return Json.object().put("status", "success").set("data", data);
  }

  static ObjectNode failureJson(String message) {
    ObjectNode data = Json.object().put("message", message);
    return Json.object().put("status", "failure").set("data", data);
  }

  private static Reply success(ObjectNode data) {
    return Reply.ok(successJson(data));
  }

  static Reply failure(String message) {
    return Reply.ok(failureJson(message));
  }
}
