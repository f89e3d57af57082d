package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.Map;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.GrainVersion;
import sand.cluster.HostAgentTables;
import sand.contracts.TopicNames;
import sand.contracts.Workflow;

/**
 * {@code /api/v1/grains}: a developer's grains (their code). Every upload is a new version; deploy copies
 * the newest version of each grain a workflow names into the application. Grains are per account: one
 * account never sees another's (an unknown or foreign grain is 404 alike).
 */
public final class GrainsHandler {
  private final ClusterStore store;
  private final Clock clock;
  private final long maxUnpacked;
  private final boolean requirementsAllowUrls;

  public GrainsHandler(ClusterStore store, Clock clock, long maxUnpacked, boolean requirementsAllowUrls) {
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
  }

  static String grainName(Call call) {
    String name = call.param("grain");
    if (!TopicNames.validGrain(name)) {
      throw ApiException.badRequest("grain name '" + name + "' is invalid: it must match " + TopicNames.GRAIN_FORM);
    }
    return name;
  }

  Reply upload(Call call) {
    String name = grainName(call);
    byte[] code = call.body();
    GrainUpload.Checked checked = GrainUpload.check(name, call.contentType(), code, maxUnpacked,
        requirementsAllowUrls);
    String sha = AuthHandler.sha256(code);
    // Versions are claimed with IF NOT EXISTS: two uploads racing get different numbers.
    for (int attempt = 0; attempt < 10; attempt++) {
      int version = store.latestGrain(call.account(), name).map(GrainVersion::version).orElse(0) + 1;
      GrainVersion g = new GrainVersion(call.account(), name, version, code, checked.kind(), sha, code.length,
          clock.instant());
      if (store.putGrainVersion(g)) {
        return Reply.ok(meta(g));
      }
    }
    throw ApiException.conflict("grain " + name + ": too many concurrent uploads; try again");
  }

  Reply list(Call call) {
    ObjectNode out = Json.object();
    var arr = out.putArray("grains");
    store.grains(call.account()).forEach(g -> arr.add(meta(g)));
    return Reply.ok(out);
  }

  Reply get(Call call) {
    String name = grainName(call);
    GrainVersion g = store.latestGrain(call.account(), name).orElseThrow(() -> notFound(name));
    if (call.flag("code")) {
      return new Reply(200, "zip".equals(g.kind()) ? "application/zip" : "text/x-python; charset=utf-8", g.code(),
          Map.of("X-Sand-Grain-Version", Integer.toString(g.version())));
    }
    return Reply.ok(meta(g));
  }

  Reply delete(Call call) {
    String name = grainName(call);
    store.latestGrain(call.account(), name).orElseThrow(() -> notFound(name));
    for (var app : store.applications()) {
      if (app.owner().equals(call.account()) && HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())
          && Workflow.parse(Json.stored(app.workflow())).resources().contains(name)) {
        throw ApiException.conflict("grain " + name + " is used by deployed application '" + app.name()
            + "'; undeploy it first (POST /api/v1/apps/" + app.name() + "/undeploy)");
      }
    }
    store.deleteGrain(call.account(), name);
    return Reply.ok(Json.object().put("name", name).put("deleted", true));
  }

  static ApiException notFound(String name) {
    return ApiException.notFound("no grain '" + name + "' in your account; upload it with PUT /api/v1/grains/"
        + name);
  }

  static ObjectNode meta(GrainVersion g) {
    return Json.object().put("name", g.name()).put("version", g.version()).put("kind", g.kind())
        .put("sha256", g.sha256()).put("size", g.size())
        .put("created", g.created() == null ? null : g.created().toString());
  }
}
