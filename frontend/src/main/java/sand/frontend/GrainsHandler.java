package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.GrainVersion;
import sand.cluster.HostAgentTables;
import sand.contracts.TopicNames;
import sand.contracts.Workflow;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * A developer's grains (their code), in two scopes. {@code /api/v1/apps/{app}/grains}: an application's own grains
 * (what {@code sand deploy} uploads), which no other application runs; {@code /api/v1/grains}: the account's
 * shared grains, which every application of the account that names them and has no grain of its own by that
 * name runs (like KNIX's shared resources). Every upload is a new version; deploy copies the newest version of
 * each grain a workflow names, the application's own first, into the application. One account never sees
 * another's (an unknown or foreign grain is 404 alike).
 */
public final class GrainsHandler {
  private final ClusterStore store;
  private final AppsHandler apps;
  private final Clock clock;
  private final long maxUnpacked;
  private final boolean requirementsAllowUrls;

  public GrainsHandler(
      ClusterStore store,
      AppsHandler apps,
      Clock clock,
      long maxUnpacked,
      boolean requirementsAllowUrls) {
    this.apps = apps;
    this.requirementsAllowUrls = requirementsAllowUrls;
    this.store = store;
    this.clock = clock;
    this.maxUnpacked = maxUnpacked;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/grains", true, this::list);
    r.add("PUT", "/api/v1/grains/{grain}", true, this::upload);
    r.add("GET", "/api/v1/grains/{grain}", true, this::get);
    r.add("DELETE", "/api/v1/grains/{grain}", true, this::delete);
    r.add("GET", "/api/v1/apps/{app}/grains", true, c -> list(c, appScope(c)));
    r.add("PUT", "/api/v1/apps/{app}/grains/{grain}", true, c -> upload(c, appScope(c)));
    r.add("GET", "/api/v1/apps/{app}/grains/{grain}", true, c -> get(c, appScope(c)));
    r.add("DELETE", "/api/v1/apps/{app}/grains/{grain}", true, c -> deleteOwn(c, apps.owned(c)));
  }

  private volatile Quotas quotas = Quotas.DEFAULTS;

  void useQuotas(Quotas quotas) {
    this.quotas = quotas;
  }

  /** Where an application's own grains are kept: a scope no account name can be (':' is not in one). */
  static String appScope(String appId) {
    return "app:" + appId;
  }

  private String appScope(Call call) {
    return appScope(apps.owned(call).app().appId());
  }

  static String grainName(Call call) {
    String name = call.param("grain");
    if (!TopicNames.validGrain(name)) {
      throw ApiException.badRequest(
          "grain name '" + name + "' is invalid: it must match " + TopicNames.GRAIN_FORM);
    }
    return name;
  }

  Reply upload(Call call) {
    return upload(call, call.account());
  }

  Reply upload(Call call, String scope) {
    String name = grainName(call);
    byte[] code = call.body();
    GrainUpload.Checked checked =
        GrainUpload.check(name, call.contentType(), code, maxUnpacked, requirementsAllowUrls);
    String sha = AuthHandler.sha256(code);
    if (store.latestGrain(scope, name).isEmpty()) {
      int kept = store.grains(scope).size();
      if (kept >= quotas.grainsPerScope()) {
        throw Quotas.exceeded(
            (scope.equals(call.account())
                    ? "account '" + scope + "' shares "
                    : "the application " + "has ")
                + kept + " grains",
            quotas.grainsPerScope(),
            "delete one first");
      }
    }
    // Versions are claimed with IF NOT EXISTS: two uploads racing get different numbers.
    for (int attempt = 0; attempt < 10; attempt++) {
      int version = store.latestGrain(scope, name).map(GrainVersion::version).orElse(0) + 1;
      GrainVersion g = new GrainVersion(
          scope, name, version, code, checked.kind(), sha, code.length, clock.instant());
      if (store.putGrainVersion(g)) {
        ObjectNode out = meta(g);
        if (scope.equals(call.account())) { // a shared grain: who runs it from their next deploy on
          var users = out.putArray("used_by");
          sharedUsers(call.account(), name).forEach(a -> users.add(a.name()));
        }
        return Reply.ok(out);
      }
    }
    throw ApiException.conflict("grain " + name + ": too many concurrent uploads; try again");
  }

  Reply list(Call call) {
    return list(call, call.account());
  }

  Reply list(Call call, String scope) {
    ObjectNode out = Json.object();
    var arr = out.putArray("grains");
    store.grains(scope).forEach(g -> arr.add(meta(g)));
    return Reply.ok(out);
  }

  Reply get(Call call) {
    return get(call, call.account());
  }

  Reply get(Call call, String scope) {
    String name = grainName(call);
    GrainVersion g = store.latestGrain(scope, name).orElseThrow(() -> notFound(name));
    if (call.flag("code")) {
      return new Reply(
          200,
          "zip".equals(g.kind()) ? "application/zip" : "text/x-python; charset=utf-8",
          g.code(),
          Map.of("X-Sand-Grain-Version", Integer.toString(g.version())));
    }
    return Reply.ok(meta(g));
  }

  /**
   * Delete a shared grain. A deployed application runs the copy its deploy made (its application code), so deleting
   * the grain cannot stop it; it is refused anyway unless {@code keep_deployed} is set, because that application
   * could then not be deployed again until the grain is uploaded again: the caller says it knows (KNIX's door does,
   * as KNIX lets a function go while workflows that run it stay deployed).
   */
  Reply delete(Call call) {
    String name = grainName(call);
    boolean keepDeployed = call.flag("keep_deployed");
    store.latestGrain(call.account(), name).orElseThrow(() -> notFound(name));
    for (var app : keepDeployed
        ? List.<HostAgentTables.ApplicationRecord>of()
        : sharedUsers(call.account(), name)) {
      if (HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())) {
        throw ApiException.conflict(
            "grain " + name + " is used by deployed application '"
                + app.name() + "'; undeploy it first (POST /api/v1/apps/" + app.name()
                + "/undeploy), or delete "
                + "with ?keep_deployed=1 to let it run the copy it was deployed with (its next deploy needs the grain)");
      }
    }
    store.deleteGrain(call.account(), name);
    return Reply.ok(Json.object().put("name", name).put("deleted", true));
  }

  /** Delete one of an application's own grains; not while the application is deployed and its workflow names it. */
  Reply deleteOwn(Call call, AppsHandler.Owned o) {
    String name = grainName(call);
    String scope = appScope(o.app().appId());
    store.latestGrain(scope, name).orElseThrow(() -> notFound(name));
    if (HostAgentTables.DESIRED_DEPLOYED.equals(o.app().desired())
        && Workflow.parse(Json.stored(o.app().workflow())).resources().contains(name)) {
      throw ApiException.conflict(
          "grain " + name + " is used by application '" + o.app().name() + "', which is "
              + "deployed; undeploy it first (POST /api/v1/apps/" + o.app().name() + "/undeploy)");
    }
    store.deleteGrain(scope, name);
    return Reply.ok(Json.object().put("name", name).put("deleted", true));
  }

  /** The account's applications that name grain {@code name} and have no grain of their own by that name. */
  List<HostAgentTables.ApplicationRecord> sharedUsers(String account, String name) {
    return store.applications().stream()
        .filter(a -> a.owner().equals(account)
            && Workflow.parse(Json.stored(a.workflow())).resources().contains(name)
            && store.latestGrain(appScope(a.appId()), name).isEmpty())
        .toList();
  }

  static ApiException notFound(String name) {
    return ApiException.notFound(
        "no grain '" + name + "' in your account; upload it with PUT /api/v1/grains/" + name);
  }

  static ObjectNode meta(GrainVersion g) {
    return Json.object()
        .put("name", g.name())
        .put("version", g.version())
        .put("kind", g.kind())
        .put("sha256", g.sha256())
        .put("size", g.size())
        .put("created", g.created() == null ? null : g.created().toString());
  }
}
