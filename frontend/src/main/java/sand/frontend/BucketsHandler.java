package sand.frontend;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import sand.cluster.BucketTables.Bucket;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.contracts.Rules;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code /api/v1/buckets} (docs/data-triggers.md): an account's triggerable buckets and the applications a write
 * into each starts. A bucket belongs to the account that created it: another account's bucket is not there for the
 * caller (404), and only the caller's own deployed applications can be targets (another's: 404, undeployed: 409).
 * Every change is announced on {@code sand.control} ({@code {"type": "buckets", "owner"}}) so host agents read the
 * account's buckets again at once (else within 5 s).
 */
public final class BucketsHandler {
  /** Most buckets of one account. */
  public static final int MAX_BUCKETS = 100;
  /** Most applications one bucket starts. */
  public static final int MAX_TARGETS = 16;

  private static final Pattern NAME = Pattern.compile(Rules.BUCKET_NAME_PATTERN);

  private final ClusterStore store;
  private final Consumer<String> changed;
  private final Clock clock;

  /** @param changed told the account whose buckets changed (sends the control event) */
  public BucketsHandler(ClusterStore store, Consumer<String> changed, Clock clock) {
    this.store = store;
    this.changed = changed;
    this.clock = clock;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/buckets", true, this::list);
    r.add("PUT", "/api/v1/buckets/{bucket}", true, this::put);
    r.add("GET", "/api/v1/buckets/{bucket}", true, this::get);
    r.add("DELETE", "/api/v1/buckets/{bucket}", true, this::delete);
    r.add("PUT", "/api/v1/buckets/{bucket}/targets/{app}", true, this::putTarget);
    r.add("DELETE", "/api/v1/buckets/{bucket}/targets/{app}", true, this::deleteTarget);
  }

  // ---- the operations, shared with the KNIX door (KnixBuckets)

  /** Create {@code name} for {@code owner}; false when it existed. */
  public boolean create(String owner, String name) {
    checkName(name);
    if (store.buckets().bucket(owner, name).isPresent()) {
      return false;
    }
    if (store.buckets().buckets(owner).size() >= MAX_BUCKETS) {
      throw new ApiException(
          409,
          "too_many_buckets",
          "your account has " + MAX_BUCKETS
              + " triggerable buckets, the most it may have; delete one with "
              + "DELETE /api/v1/buckets/{bucket}");
    }
    boolean created =
        store.buckets().createBucket(new Bucket(owner, name, List.of(), clock.instant()));
    changed.accept(owner);
    return created;
  }

  public Bucket bucket(String owner, String name) {
    checkName(name);
    return store.buckets().bucket(owner, name).orElseThrow(() -> noBucket(name));
  }

  /**
   * Make a write into {@code name} start {@code appName}. With {@code mustBeDeployed} an undeployed application is
   * refused (409); else (the KNIX door, which queues such an association) it is kept and fires once deployed.
   */
  public Bucket addTarget(String owner, String name, String appName, boolean mustBeDeployed) {
    Bucket b = bucket(owner, name);
    ApplicationRecord app = ownApplication(owner, appName);
    if (mustBeDeployed && !HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())) {
      throw ApiException.conflict("application '" + appName
          + "' is not deployed, so a write into bucket '" + name
          + "' could not start it; deploy it first with POST /api/v1/apps/" + appName + "/deploy");
    }
    if (b.targets().contains(app.appId())) {
      return b;
    }
    if (b.targets().size() >= MAX_TARGETS) {
      throw new ApiException(
          409,
          "too_many_targets",
          "bucket '" + name + "' starts " + MAX_TARGETS
              + " applications, the most it may; remove one with " + "DELETE /api/v1/buckets/"
              + name + "/targets/{app}");
    }
    List<String> targets = new ArrayList<>(b.targets());
    targets.add(app.appId());
    store.buckets().setTargets(owner, name, targets);
    changed.accept(owner);
    return new Bucket(owner, name, targets, b.created());
  }

  public Bucket removeTarget(String owner, String name, String appName) {
    Bucket b = bucket(owner, name);
    ApplicationRecord app = ownApplication(owner, appName);
    if (!b.targets().contains(app.appId())) {
      throw ApiException.notFound("bucket '" + name + "' does not start application '" + appName
          + "'; its targets are at GET /api/v1/buckets/" + name);
    }
    List<String> targets = new ArrayList<>(b.targets());
    targets.remove(app.appId());
    store.buckets().setTargets(owner, name, targets);
    changed.accept(owner);
    return new Bucket(owner, name, targets, b.created());
  }

  public void remove(String owner, String name) {
    bucket(owner, name);
    store.buckets().deleteBucket(owner, name);
    changed.accept(owner);
  }

  /** The names of the buckets of {@code owner} whose writes start {@code appId} (GET /api/v1/apps/{app}). */
  public List<String> bucketsStarting(String owner, String appId) {
    return store.buckets().buckets(owner).stream()
        .filter(b -> b.targets().contains(appId))
        .map(Bucket::name)
        .toList();
  }

  /** The bucket as the API shows it: each target's name and whether it is deployed (only those fire). */
  public ObjectNode describe(Bucket b) {
    ObjectNode o = Json.object().put("name", b.name());
    ArrayNode targets = o.putArray("targets");
    for (String appId : b.targets()) {
      Optional<ApplicationRecord> app = store.application(appId);
      targets.add(Json.object()
          .put("app", app.map(ApplicationRecord::name).orElse(null))
          .put("id", appId)
          .put(
              "deployed",
              app.map(a -> HostAgentTables.DESIRED_DEPLOYED.equals(a.desired())).orElse(false)));
    }
    o.put("created", b.created() == null ? null : b.created().toString());
    return o;
  }

  private ApplicationRecord ownApplication(String owner, String appName) {
    Optional<AppName> n = store.appName(appName).filter(x -> x.owner().equals(owner));
    return n.flatMap(x -> store.application(x.appId()))
        .orElseThrow(() -> AppsHandler.notFound(appName));
  }

  private static void checkName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw ApiException.badRequest(
          "bucket name '" + name + "' is invalid: it must match " + Rules.BUCKET_NAME_PATTERN);
    }
  }

  private static ApiException noBucket(String name) {
    return ApiException.notFound("no triggerable bucket '" + name
        + "' in your account; create it with " + "PUT /api/v1/buckets/" + name);
  }

  // ---- the routes

  Reply list(Call call) {
    ArrayNode arr = Json.MAPPER.createArrayNode();
    store.buckets().buckets(call.account()).forEach(b -> arr.add(describe(b)));
    ObjectNode out = Json.object();
    out.set("buckets", arr);
    return Reply.ok(out);
  }

  Reply put(Call call) {
    String name = call.param("bucket");
    boolean created = create(call.account(), name);
    return Reply.json(created ? 201 : 200, describe(bucket(call.account(), name)));
  }

  Reply get(Call call) {
    return Reply.ok(describe(bucket(call.account(), call.param("bucket"))));
  }

  Reply delete(Call call) {
    String name = call.param("bucket");
    remove(call.account(), name);
    return Reply.ok(Json.object().put("deleted", name));
  }

  Reply putTarget(Call call) {
    AppsHandler.appName(call);
    return Reply.ok(describe(addTarget(
        call.account(), call.param("bucket"), call.param("app"), !call.flag("when_deployed"))));
  }

  Reply deleteTarget(Call call) {
    AppsHandler.appName(call);
    return Reply.ok(
        describe(removeTarget(call.account(), call.param("bucket"), call.param("app"))));
  }
}
