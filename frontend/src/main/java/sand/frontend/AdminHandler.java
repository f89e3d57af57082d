package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.AppHostState;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.HostLoads;
import sand.cluster.HostSchedules.HostSchedule;
import sand.contracts.ElasticPlacement;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * The operator's API, {@code /api/v1/admin/...}, for the admin key only (no key: 401; a developer's key: 403):
 * every application of every account, the hosts, undeploying any application, disabling an account. Every
 * action is logged with who asked (the admin key's fingerprint and the caller's address).
 */
public final class AdminHandler {
  private static final Logger LOG = LoggerFactory.getLogger(AdminHandler.class);
  private static final Duration EVER = Duration.ofDays(365L * 100);
  static final int REASON_MAX = 500;

  private final ClusterStore store;
  private final AppsHandler apps;
  private final DeploymentsHandler deployments;
  private final DisabledAccounts disabled;
  private final Clock clock;
  private final Duration hostMaxAge;

  AdminHandler(
      ClusterStore store,
      AppsHandler apps,
      DeploymentsHandler deployments,
      DisabledAccounts disabled,
      Clock clock,
      Duration hostMaxAge) {
    this.store = store;
    this.apps = apps;
    this.deployments = deployments;
    this.disabled = disabled;
    this.clock = clock;
    this.hostMaxAge = hostMaxAge;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/admin/apps", false, c -> listApps(admin(c)));
    r.add("GET", "/api/v1/admin/hosts", false, c -> listHosts(admin(c)));
    r.add("POST", "/api/v1/admin/apps/{app}/undeploy", false, c -> undeploy(admin(c)));
    r.add("POST", "/api/v1/admin/accounts/{account}/disable", false, c -> disable(admin(c)));
    r.add("POST", "/api/v1/admin/accounts/{account}/enable", false, c -> enable(admin(c)));
  }

  /** The call, if it carries the admin key. */
  static Call admin(Call c) {
    if (c.isAdmin()) {
      return c;
    }
    if (c.account() == null) {
      throw new ApiException(
          401,
          "unauthorized",
          "this call needs the operator's admin key: send 'Authorization: "
              + "Bearer <admin key>' (make up writes it to $SAND_HOME/admin-key)");
    }
    throw new ApiException(
        403,
        "forbidden",
        "only the operator's admin key may do this; '" + c.account()
            + "' is a developer's account");
  }

  Reply listApps(Call call) {
    ObjectNode out = Json.object();
    var arr = out.putArray("apps");
    for (ApplicationRecord app : store.applications()) {
      AppName n =
          store.appName(app.name()).orElse(new AppName(app.name(), app.appId(), app.owner(), 0));
      ObjectNode a = apps.describe(n, app);
      a.put("owner", app.owner());
      a.remove("workflow");
      arr.add(a);
    }
    return Reply.ok(out);
  }

  Reply listHosts(Call call) {
    Instant now = clock.instant();
    Map<String, List<ObjectNode>> byHost =
        new HashMap<>(); // each application's per-host states, read once
    Map<String, HostUse> use = new HashMap<>();
    for (ApplicationRecord app : store.applications()) {
      HostUse.Cost cost = null; // parsed once per application, and only if it runs somewhere
      boolean elastic = ElasticPlacement.of(app.settings()).isPresent();
      for (AppHostState s : store.appHostStates(app.appId())) {
        if (!HostAgentTables.HOST_UNDEPLOYED.equals(s.status())) {
          cost = cost == null ? HostUse.Cost.of(app) : cost;
          HostUse u = use.computeIfAbsent(s.hostId(), h -> new HostUse());
          if (HostAgentTables.HOST_IDLE.equals(s.status())) {
            u.idle(); // scaled to zero: no sandbox there now
          } else {
            u.add(cost);
          }
          byHost
              .computeIfAbsent(s.hostId(), h -> new ArrayList<>())
              .add(Json.object()
                  .put("app", app.name())
                  .put("owner", app.owner())
                  .put("status", s.status())
                  .put("error", s.error())
                  // the scheduler places it: a drain moves it for good (a rolling upgrade does not
                  // wait for it)
                  .put("placed_by_scheduler", elastic));
        }
      }
    }
    ObjectNode out = Json.object();
    var arr = out.putArray("hosts");
    Map<String, HostSchedule> schedules = store.hostSchedules().all();
    Map<String, HostLoads.HostLoad> loads = store.hostLoads().all();
    for (HostInfo h : store.liveHosts(now, EVER)) {
      List<ObjectNode> sandboxes = byHost.getOrDefault(h.hostId(), List.of());
      ObjectNode o = arr.addObject()
          .put("host", h.hostId())
          .put("alive", h.heartbeat() != null && h.heartbeat().isAfter(now.minus(hostMaxAge)))
          .put("heartbeat", AppStatus.iso(h.heartbeat()))
          .put("started", AppStatus.iso(h.started()))
          .put("capacity", h.capacity())
          .put("bus", h.busAddress())
          .put("data", h.dataAddress())
          .put("gate", h.gateAddress());
      HostsAdmin.schedule(o, schedules.get(h.hostId()), sandboxes);
      use.getOrDefault(h.hostId(), new HostUse()).put(o, h);
      HostLoads.HostLoad load = loads.get(h.hostId());
      if (load
          != null) { // what its host agent last measured (none: not reported for HostLoads.TTL)
        o.set("load", Json.stored(load.load()));
        o.put("load_at", AppStatus.iso(load.at()));
      }
      o.putArray("sandboxes").addAll(sandboxes);
    }
    return Reply.ok(out);
  }

  Reply undeploy(Call call) {
    String name = call.param("app");
    AppName n = store
        .appName(name)
        .orElseThrow(() -> ApiException.notFound("no application '" + name + "'"));
    ApplicationRecord app = store
        .application(n.appId())
        .orElseThrow(() -> ApiException.notFound("no application '" + name + "'"));
    deployments.undeploy(app, who(call) + " (owner " + app.owner() + ")");
    ObjectNode out = apps.describe(n, store.application(app.appId()).orElseThrow());
    out.put("owner", app.owner());
    return Reply.json(202, out);
  }

  /** Refuse the account's keys (403 on every frontend within 30 s, here at once) and undeploy its applications. */
  Reply disable(Call call) {
    String account = existing(call);
    String reason = reason(call, "disable");
    disabled.set(account, reason);
    ObjectNode out =
        Json.object().put("account", account).put("disabled", true).put("reason", reason);
    var undeployed = out.putArray("undeployed");
    for (ApplicationRecord app : store.applications()) {
      if (app.owner().equals(account) && HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())) {
        deployments.undeploy(app, who(call) + " (account " + account + " disabled)");
        undeployed.add(app.name());
      }
    }
    LOG.warn(
        "[admin] account {} disabled by {}: {}; undeployed {}",
        account,
        who(call),
        reason,
        undeployed);
    return Reply.ok(out);
  }

  Reply enable(Call call) {
    String account = existing(call);
    disabled.set(account, null);
    LOG.warn("[admin] account {} enabled by {}", account, who(call));
    return Reply.ok(Json.object().put("account", account).put("disabled", false));
  }

  private String existing(Call call) {
    String account = call.param("account");
    if (store.account(account).isEmpty()) {
      throw ApiException.notFound("no account '" + account + "'");
    }
    return account;
  }

  /** The optional {"reason": "..."} of a disable, a cordon or a drain ({@code what}). */
  static String reason(Call call, String what) {
    if (call.body().length == 0) {
      return "no reason given";
    }
    JsonNode body = call.json(what);
    JsonNode r = body.path("reason");
    if (!body.isObject()
        || !(r.isMissingNode() || r.isTextual())
        || r.asText().length() > REASON_MAX) {
      throw ApiException.badRequest("the body of a " + what
          + " is optional: {\"reason\": \"<text, at most " + REASON_MAX + " characters>\"}");
    }
    return r.isMissingNode() || r.asText().isBlank() ? "no reason given" : r.asText();
  }

  /** Who asked, for the log: the admin key's fingerprint (never the key) and the caller's address. */
  static String who(Call call) {
    String key = call.header("Authorization");
    String fingerprint =
        key == null ? "?" : AuthHandler.sha256(key.substring(7).trim()).substring(0, 12);
    return "admin key sha256:" + fingerprint + " from " + call.origin();
  }
}
