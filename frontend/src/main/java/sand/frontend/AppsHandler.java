package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.FrontendTables.GrainVersion;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.HostSchedules;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.contracts.ApplicationLimits;
import sand.contracts.ApplicationSettings;
import sand.contracts.ElasticPlacement;
import sand.contracts.TopicNames;
import sand.contracts.Workflow;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.AppDirectory;
import sand.frontend.invoke.RetryPolicy;

/**
 * {@code /api/v1/apps}: applications (a workflow plus settings) of the calling account. Names are global
 * (like domain names): the first account to PUT a name owns it, another account's PUT is 409. Reading
 * or deleting another account's application answers 404, as for a name nobody holds, so names of
 * other accounts' applications do not leak through GET.
 */
public final class AppsHandler {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ClusterStore store;
  private final Clock clock;
  private final Duration hostMaxAge;
  private final ApplicationLimits limits;
  private final AppDirectory directory;

  public AppsHandler(
      ClusterStore store,
      Clock clock,
      Duration hostMaxAge,
      ApplicationLimits limits,
      AppDirectory directory) {
    this.store = store;
    this.clock = clock;
    this.hostMaxAge = hostMaxAge;
    this.limits = limits;
    this.directory = directory;
  }

  private volatile Quotas quotas = Quotas.DEFAULTS;

  private TriggersHandler triggers; // null: settings.triggers are checked but not kept (unit tests)

  private BucketsHandler buckets; // null: no bucket_triggers in the status (unit tests)

  /** Show the triggerable buckets that start an application in its status ({@code bucket_triggers}). */
  public void useBuckets(BucketsHandler buckets) {
    this.buckets = buckets;
  }

  /** Keep settings.triggers as the application's declared triggers, and show triggers in its status. */
  public void useTriggers(TriggersHandler triggers) {
    this.triggers = triggers;
  }

  void useQuotas(Quotas quotas) {
    this.quotas = quotas;
  }

  private volatile GlobalDataLayer storage;

  /** Where GET reads an application's bytes in the global data layer and its quota there (StorageQuota). */
  void useStorage(GlobalDataLayer data) {
    this.storage = data;
  }

  /** This frontend changed {@code name}: its invocations read it again. */
  void changed(String name) {
    directory.forget(name);
  }

  ApplicationLimits limits() {
    return limits;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps", true, this::list);
    r.add("PUT", "/api/v1/apps/{app}", true, this::put);
    r.add("GET", "/api/v1/apps/{app}", true, this::get);
    r.add("DELETE", "/api/v1/apps/{app}", true, this::delete);
    r.add("GET", "/api/v1/apps/{app}/logs", true, this::logs);
  }

  /** An application id: 'a' + 12 lower-case hex digits (never a reserved id). */
  static String newAppId() {
    byte[] b = new byte[6];
    RANDOM.nextBytes(b);
    return "a" + HexFormat.of().formatHex(b);
  }

  static String appName(Call call) {
    String name = call.param("app");
    if (!TopicNames.validApplication(name)) {
      throw ApiException.badRequest(
          "application name '" + name + "' is invalid: 1-63 of a-z 0-9 _ -, starting "
              + "with a letter or digit, and not " + TopicNames.RESERVED_APPS);
    }
    return name;
  }

  /** The caller's application of that name, or 404 (also when another account holds the name). */
  record Owned(AppName name, ApplicationRecord app) {}

  Owned owned(Call call) {
    String name = appName(call);
    AppName n = store
        .appName(name)
        .filter(x -> x.owner().equals(call.account()))
        .orElseThrow(() -> notFound(name));
    ApplicationRecord app = store.application(n.appId()).orElseThrow(() -> notFound(name));
    return new Owned(n, app);
  }

  static ApiException notFound(String name) {
    return ApiException.notFound(
        "no application '" + name + "' in your account; create it with PUT /api/v1/apps/" + name);
  }

  Set<String> liveHosts() {
    return store.liveHosts(clock.instant(), hostMaxAge).stream()
        .map(HostInfo::hostId)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * The hosts a deploy of {@code appId} may start it on: alive, not draining, and not cordoned unless it runs there
   * already (operators' {@link HostSchedules}; the host agents apply the same rule).
   */
  Set<String> deployTargets(String appId) {
    Map<String, HostSchedules.HostSchedule> schedules = store.hostSchedules().all();
    Set<String> live = liveHosts();
    if (schedules.isEmpty()) {
      return live;
    }
    Set<String> runs = store.appHostStates(appId).stream()
        .filter(s -> HostAgentTables.serves(s.status()))
        .map(HostAgentTables.AppHostState::hostId)
        .collect(Collectors.toSet());
    live.removeIf(h -> {
      HostSchedules.HostSchedule s = schedules.get(h);
      return s != null && !(HostSchedules.CORDONED.equals(s.state()) && runs.contains(h));
    });
    return live;
  }

  Reply put(Call call) {
    String name = appName(call);
    JsonNode body = call.json("workflow");
    ObjectNode workflow = body.isObject() ? ((ObjectNode) body).deepCopy() : null;
    JsonNode settingsNode =
        workflow == null ? null : workflow.remove("settings"); // beside either workflow format
    Workflow wf;
    try {
      wf = Workflow.parse(workflow == null ? body : workflow);
    } catch (Workflow.Invalid e) {
      throw new ApiException(400, "bad_workflow", e.getMessage());
    }
    Settings settings = Settings.parse(settingsNode, limits, wf.grains().size());
    AppName existing = store.appName(name).orElse(null);
    if (existing == null) {
      long owned = store.applications().stream()
          .filter(a -> a.owner().equals(call.account()))
          .count();
      if (owned >= quotas.appsPerAccount()) {
        throw Quotas.exceeded(
            "account '" + call.account() + "' has " + owned + " applications",
            quotas.appsPerAccount(),
            "delete one first (DELETE /api/v1/apps/{app})");
      }
      existing = store.claimAppName(
          new AppName(name, newAppId(), call.account(), settings.requestTimeoutS()));
    }
    if (!existing.owner().equals(call.account())) {
      throw ApiException.conflict("application name '" + name
          + "' is taken by another account; names are " + "global, choose another");
    }
    if (existing.requestTimeoutS() != settings.requestTimeoutS()) {
      store.setRequestTimeout(name, settings.requestTimeoutS());
    }
    ApplicationRecord old = store.application(existing.appId()).orElse(null);
    SecretsHandler.checkTotal(store.secrets(existing.appId()), settings.agentJson(), null, null);
    if (triggers != null) { // settings.triggers replace the ones the workflow declared before
      triggers.declare(
          existing.appId(),
          settingsNode == null ? null : settingsNode.get("triggers"),
          Json.text(workflow));
    }
    // A changed workflow takes effect at the next deploy (which copies the grains' code again).
    store.putApplication(
        new ApplicationRecord(
            existing.appId(),
            name,
            call.account(),
            Json.text(workflow),
            old == null ? "" : old.requirements(),
            settings.agentJson(),
            old == null ? 0 : old.version(),
            old == null ? HostAgentTables.DESIRED_UNDEPLOYED : old.desired(),
            // placed by the scheduler: where it runs stays until the scheduler or a deploy moves it
            old != null && ElasticPlacement.of(settings.agentJson()).isPresent()
                ? old.hosts()
                : settings.hosts()),
        Map.of());
    changed(name);
    return Reply.ok(describe(
        store.appName(name).orElseThrow(), store.application(existing.appId()).orElseThrow()));
  }

  Reply list(Call call) {
    ObjectNode out = Json.object();
    var arr = out.putArray("apps");
    Set<String> live = liveHosts();
    // by name: the cluster state's order is its partitioner's, which means nothing to a reader
    for (ApplicationRecord app : store.applications().stream()
        .sorted(Comparator.comparing(ApplicationRecord::name))
        .toList()) {
      if (call.account().equals(app.owner())) {
        AppStatus s = AppStatus.of(app, store.appHostStates(app.appId()), live);
        arr.addObject()
            .put("name", app.name())
            .put("status", s.status())
            .put("version", app.version())
            .put("error", s.error());
      }
    }
    return Reply.ok(out);
  }

  public static final int LOGS_MAX_EXECUTIONS = 100;
  /** The latest ?since= (as JavaScript's Date allows; the OpenAPI document says the same). */
  static final long SINCE_MAX_MS = 8_640_000_000_000_000L;

  /**
   * The recent executions of an application with their log lines, oldest first: those that started at or after
   * {@code ?since=} (epoch milliseconds; default an hour ago), the newest {@code ?limit=} (default 20, at most
   * 100) of them. {@code sand logs <app> --follow} asks again with the last start it saw.
   */
  Reply logs(Call call) {
    Owned o = owned(call);
    Instant since;
    int limit;
    try {
      String s = call.query("since");
      since = s == null || s.isEmpty()
          ? clock.instant().minus(Duration.ofHours(1))
          : Instant.ofEpochMilli(Long.parseLong(s));
      String l = call.query("limit");
      limit = l == null || l.isEmpty() ? 20 : Integer.parseInt(l);
    } catch (DateTimeException | ArithmeticException | NumberFormatException e) {
      throw ApiException.badRequest("since must be epoch milliseconds (e.g. " + clock.millis()
          + ") and limit a " + "number in 1.." + LOGS_MAX_EXECUTIONS);
    }
    if (since.isBefore(Instant.EPOCH) || since.toEpochMilli() > SINCE_MAX_MS) {
      throw ApiException.badRequest("since=" + since.toEpochMilli() + " is out of range: 0.."
          + SINCE_MAX_MS + " epoch milliseconds");
    }
    if (limit < 1 || limit > LOGS_MAX_EXECUTIONS) {
      throw ApiException.badRequest("limit=" + limit + " is invalid: 1.." + LOGS_MAX_EXECUTIONS);
    }
    List<String> ids = new ArrayList<>(store.recentExecutions(o.app().appId(), since, limit));
    Collections.reverse(ids);
    ObjectNode out = Json.object().put("app", o.name().name());
    var arr = out.putArray("executions");
    for (String id : ids) {
      var e = store.execution(id).orElse(null);
      if (e == null) {
        continue;
      }
      ObjectNode x = arr.addObject()
          .put("execution_id", id)
          .put("status", e.status())
          .put("started", AppStatus.iso(e.started()))
          .put("finished", AppStatus.iso(e.finished()))
          .put("error", e.error());
      // at most a page of each execution's lines; logs_next continues at GET
      // /api/v1/executions/{id}/logs?after=
      x.put(
          "logs_next",
          ExecutionsHandler.page(
              ExecutionsHandler.pageOfLogs(store, id, null, ExecutionsHandler.LOGS_DEFAULT_LINES),
              null,
              ExecutionsHandler.LOGS_DEFAULT_LINES,
              x.putArray("logs")));
    }
    return Reply.ok(out);
  }

  Reply get(Call call) {
    Owned o = owned(call);
    return Reply.ok(describe(o.name(), o.app()));
  }

  ObjectNode describe(AppName n, ApplicationRecord app) {
    var states = store.appHostStates(app.appId());
    Set<String> live = liveHosts();
    AppStatus s = AppStatus.of(app, states, live);
    ObjectNode out = Json.object()
        .put("name", app.name())
        .put("id", app.appId())
        .put("status", s.status())
        .put("error", s.error())
        .put("version", app.version());
    out.set("workflow", Json.stored(app.workflow()));
    out.set("shape", shape(app.workflow()));
    ObjectNode settings = (ObjectNode)
        Json.stored(app.settings() == null || app.settings().isBlank() ? "{}" : app.settings());
    settings.put("request_timeout_s", n.requestTimeoutS());
    if (ElasticPlacement.of(app.settings()).isEmpty()) {
      app.hosts().forEach(settings.withArray("hosts")::add);
    } else { // the scheduler's hosts, and why (docs/operations.md "Elastic placement")
      ObjectNode placed = out.putObject("placement");
      app.hosts().forEach(placed.putArray("hosts")::add);
      try {
        store
            .appRecord(app.appId(), ElasticPlacement.RECORD_KIND, ElasticPlacement.RECORD_ID)
            .ifPresent(r -> placed.setAll((ObjectNode)
                Json.stored(new String(r.value(), java.nio.charset.StandardCharsets.UTF_8))));
      } catch (RuntimeException e) {
        placed.put("reason", "unknown (the cluster state did not answer)");
      }
    }
    out.set("settings", settings);
    if (triggers != null) {
      try {
        out.set("triggers", triggers.describeAll(app.appId()));
      } catch (RuntimeException e) {
        out.putNull("triggers"); // Cassandra slow: the rest of the status still answers
      }
    }
    if (buckets != null) { // docs/data-triggers.md: the buckets whose writes start it
      try {
        var names = out.putArray("bucket_triggers");
        buckets.bucketsStarting(app.owner(), app.appId()).forEach(names::add);
      } catch (RuntimeException e) {
        out.putNull("bucket_triggers");
      }
    }
    GlobalDataLayer data = storage;
    if (data
        != null) { // what the host agents counted; max_bytes is null until one of them served the
      // application
      ObjectNode used = out.putObject("storage");
      try {
        used.put("used_bytes", data.storedBytes(app.appId()))
            .put("max_bytes", data.storageMax(app.appId()).orElse(null));
      } catch (GlobalUnavailableException e) {
        used.putNull("used_bytes")
            .putNull("max_bytes")
            .put("error", "the global data layer did not answer");
      }
    }
    // The grains this version runs, and where each came from (the application's own, or the
    // account's shared
    // one); "current" is false when a newer version was uploaded since the deploy.
    var grains = out.putArray("grains");
    new TreeMap<>(store.applicationCode(app.appId())).forEach((resource, code) -> {
      ObjectNode g = grains.addObject().put("name", resource).put("sha256", code.sha256());
      var own = store.latestGrain(GrainsHandler.appScope(app.appId()), resource);
      var shared = own.isPresent()
          ? Optional.<GrainVersion>empty()
          : store.latestGrain(app.owner(), resource);
      var newest = own.or(() -> shared);
      g.put("scope", own.isPresent() ? "application" : shared.isPresent() ? "account" : null);
      newest.ifPresent(v -> g.put("current", v.sha256().equals(code.sha256()))
          .put("version", v.sha256().equals(code.sha256()) ? v.version() : null));
    });
    var hosts = out.putArray("hosts");
    // alive: the host agent's heartbeat is recent; a host that died keeps its last state until it
    // comes back.
    states.forEach(h -> hosts
        .addObject()
        .put("host", h.hostId())
        .put("status", h.status())
        .put("error", h.error())
        .put("updated", AppStatus.iso(h.updated()))
        .put("alive", live.contains(h.hostId())));
    return out;
  }

  /**
   * What the workflow is, whichever its format: {@code {"format": "sand"|"asl", "entry", "grains": [{"name",
   * "resource"}]}} (an ASL state that runs no uploaded code has resource null), so a reader need not know
   * both formats to say where a request enters and what runs.
   */
  static ObjectNode shape(String workflowJson) {
    JsonNode doc = Json.stored(workflowJson);
    Workflow wf = Workflow.parse(doc); // validated when it was stored
    ObjectNode out =
        Json.object().put("format", Workflow.isAsl(doc) ? "asl" : "sand").put("entry", wf.entry());
    var grains = out.putArray("grains");
    wf.grains()
        .forEach((name, resource) -> grains
            .addObject()
            .put("name", name)
            .put("resource", resource.isEmpty() ? null : resource));
    return out;
  }

  Reply delete(Call call) {
    Owned o = owned(call);
    String status = status(o.app(), liveHosts());
    if (!"undeployed".equals(status)) {
      throw ApiException.conflict("application '" + o.name().name() + "' is " + status
          + "; undeploy it first " + "(POST /api/v1/apps/" + o.name().name()
          + "/undeploy) and wait for status undeployed");
    }
    remove(o.app());
    return Reply.ok(Json.object().put("name", o.name().name()).put("deleted", true));
  }

  /** The application's status as GET shows it, given the live hosts. */
  String status(ApplicationRecord app, Set<String> live) {
    return AppStatus.of(app, store.appHostStates(app.appId()), live).status();
  }

  /** Remove an undeployed application: its record and records, its own grains, its name (free again). */
  void remove(ApplicationRecord app) {
    store.deleteApplication(app.appId());
    store.deleteAppRecords(app.appId()); // its secrets, keys, versions, aliases
    String scope = GrainsHandler.appScope(app.appId());
    store.grains(scope).forEach(g -> store.deleteGrain(scope, g.name()));
    store.releaseAppName(app.name());
    changed(app.name());
  }

  /**
   * The "settings" member of a PUT body: the agent's settings (checked by the agent's own parser),
   * the hosts to run on (empty = every live host) and the frontend's request timeout (0 = default).
   */
  record Settings(String agentJson, List<String> hosts, int requestTimeoutS) {
    static Settings parse(JsonNode n, ApplicationLimits limits, int grains) {
      if (n == null || n.isNull()) {
        n = Json.object();
      }
      if (!n.isObject()) {
        throw ApiException.badRequest(
            "workflow 'settings' must be an object, e.g. {\"timeout_s\": 60}");
      }
      ObjectNode agent = ((ObjectNode) n).deepCopy();
      JsonNode hosts = agent.remove("hosts");
      JsonNode timeout = agent.remove("request_timeout_s");
      List<String> hostList = new ArrayList<>();
      if (hosts != null && !hosts.isNull()) {
        if (!hosts.isArray()) {
          throw ApiException.badRequest(
              "settings.hosts must be a list of host ids (empty = every live host)");
        }
        hosts.forEach(h -> hostList.add(h.asText()));
      }
      int t = 0;
      if (timeout != null && !timeout.isNull()) {
        // 0: the frontend's default, as GET shows it (so a GET's settings PUT back are taken)
        if (!timeout.canConvertToInt() || timeout.asInt() < 0 || timeout.asInt() > 300) {
          throw ApiException.badRequest("settings.request_timeout_s=" + timeout
              + " is invalid: must be an int in 1..300 seconds (0: the frontend's default)");
        }
        t = timeout.asInt();
      }
      try {
        RetryPolicy.parse(agent.get(RetryPolicy.SETTING));
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(e.getMessage());
      }
      TriggersHandler.parseDeclared("", agent.get("triggers"));
      try {
        limits.check(ApplicationSettings.fromJson(Json.text(agent)), grains, hostList.size());
      } catch (IllegalArgumentException e) {
        String why = e.getMessage();
        throw ApiException.badRequest(why.startsWith("settings.") ? why : "settings: " + why);
      }
      if (!hostList.isEmpty() && ElasticPlacement.of(Json.text(agent)).isPresent()) {
        throw ApiException.badRequest("settings name hosts and set " + ElasticPlacement.MAX_HOSTS
            + ": either name the hosts it runs on, or let the scheduler place it, not both");
      }
      return new Settings(Json.text(agent), List.copyOf(hostList), t);
    }
  }
}
