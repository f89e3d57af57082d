package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.GrainVersion;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.GrainCode;
import sand.contracts.ApplicationSettings;
import sand.contracts.ElasticPlacement;
import sand.contracts.Workflow;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code POST /api/v1/apps/{app}/deploy} and {@code /undeploy} (202: the host agents do the work and
 * report per host in app_hosts; GET the application to follow its status).
 *
 * <p>Deploy copies the newest version of every grain the workflow names into application_code, gathers
 * the zips' requirements.txt into the application's requirements, bumps the version (the agents redeploy
 * when it changes), resets the target hosts' states to 'deploying', sets desired = deployed, and then
 * tells the agents on {@code sand.control}.
 */
public final class DeploymentsHandler {
  private static final Logger LOG = LoggerFactory.getLogger(DeploymentsHandler.class);

  private final ClusterStore store;
  private final AppsHandler apps;
  private final ControlEvents control;
  private final Clock clock;
  private final Versions versions;

  public DeploymentsHandler(
      ClusterStore store, AppsHandler apps, ControlEvents control, Clock clock) {
    this.store = store;
    this.apps = apps;
    this.control = control;
    this.clock = clock;
    this.versions = new Versions(store);
  }

  public void routes(Router r) {
    r.add("POST", "/api/v1/apps/{app}/deploy", true, this::deploy);
    r.add("POST", "/api/v1/apps/{app}/undeploy", true, this::undeploy);
    r.add("POST", "/api/v1/apps/{app}/update", true, this::update);
    r.add("GET", "/api/v1/apps/{app}/versions", true, this::versions);
    r.add("GET", "/api/v1/apps/{app}/versions/{version}", true, this::version);
    r.add("POST", "/api/v1/apps/{app}/rollback", true, this::rollback);
  }

  /** {@code GET /api/v1/apps/{app}/versions}: the kept versions, newest first, which one runs. */
  Reply versions(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    int running =
        HostAgentTables.DESIRED_DEPLOYED.equals(o.app().desired()) ? o.app().version() : -1;
    var out =
        Json.object().put("app", o.name().name()).put("running", running < 0 ? null : running);
    var arr = out.putArray("versions");
    versions.list(o.app().appId()).forEach(v -> arr.add(Versions.describe(v, running)));
    return Reply.ok(out);
  }

  Reply version(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    Versions.Snapshot v = snapshot(o, call.param("version"));
    int running =
        HostAgentTables.DESIRED_DEPLOYED.equals(o.app().desired()) ? o.app().version() : -1;
    var out = Versions.describe(v, running);
    out.set("workflow", Json.stored(v.workflow()));
    out.set(
        "settings",
        Json.stored(v.settings() == null || v.settings().isBlank() ? "{}" : v.settings()));
    return Reply.ok(out);
  }

  private Versions.Snapshot snapshot(AppsHandler.Owned o, String n) {
    int version;
    try {
      version = Integer.parseInt(n);
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "version '" + n + "' is not a number: versions are 1, 2, 3, ...");
    }
    return versions
        .get(o.app().appId(), version)
        .orElseThrow(() -> ApiException.notFound("application '" + o.name().name()
            + "' has no version " + version + " (the newest " + Versions.KEPT
            + " are kept; GET /api/v1/apps/" + o.name().name() + "/versions lists them)"));
  }

  /**
   * {@code POST /api/v1/apps/{app}/rollback} {@code {"version": k}} (default: the version before the running one):
   * a new version that runs version k's code, workflow, settings and requirements. The hosts build nothing new
   * when k's requirements are the running ones' (the sandbox image is the same), so it takes seconds.
   */
  Reply rollback(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    JsonNode body = call.body().length == 0 ? Json.object() : call.json("rollback");
    JsonNode k = body.path("version");
    String target;
    if (k.isMissingNode() || k.isNull()) {
      target = Integer.toString(versions.list(o.app().appId()).stream()
          .mapToInt(Versions.Snapshot::version)
          .filter(v -> v < o.app().version())
          .max()
          .orElseThrow(() -> ApiException.conflict("application '" + o.name().name()
              + "' has no version before " + o.app().version() + " to roll back to")));
    } else if (k.canConvertToInt()) {
      target = Integer.toString(k.asInt());
    } else {
      throw ApiException.badRequest(
          "the body must be {\"version\": <number>} (or empty: the version before)");
    }
    Versions.Snapshot v = snapshot(o, target);
    if (o.name().requestTimeoutS() != v.requestTimeoutS()) {
      store.setRequestTimeout(o.name().name(), v.requestTimeoutS());
    }
    ApplicationRecord app = o.app();
    ApplicationRecord as = new ApplicationRecord(
        app.appId(),
        app.name(),
        app.owner(),
        v.workflow(),
        v.requirements(),
        v.settings(),
        app.version(),
        app.desired(),
        v.hosts());
    AppsHandler.Owned now = new AppsHandler.Owned(store.appName(o.name().name()).orElseThrow(), as);
    return apply(now, as, v.code(), v.requirements(), "rollback to version " + v.version());
  }

  Reply deploy(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    return deploy(call, o, o.app(), Workflow.parse(Json.stored(o.app().workflow())), null);
  }

  /**
   * {@code POST /api/v1/apps/{app}/update} {@code {"grains": [...]}}: a deployed application runs the newest code of
   * those grains, everything else as deployed. The host agents see that only some .py grains' code changed and
   * restart only those grain workers in the running sandbox (docs/api.md "Updating one grain"); a change that
   * needs pip (a zip grain's requirements) is refused, as it needs a new sandbox: deploy.
   */
  Reply update(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    ApplicationRecord app = o.app();
    if (!HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())) {
      throw ApiException.conflict(
          "application '" + o.name().name() + "' is not deployed: an update swaps code in its "
              + "running sandboxes; deploy it instead (sand deploy)");
    }
    Workflow wf = Workflow.parse(Json.stored(app.workflow()));
    JsonNode body = call.json("update");
    JsonNode names = body.path("grains");
    if (!names.isArray() || names.isEmpty()) {
      throw ApiException.badRequest(
          "the body must be {\"grains\": [\"<grain>\", ...]}: the grains whose newest "
              + "code the application should run");
    }
    Set<String> only = new LinkedHashSet<>();
    for (JsonNode n : names) {
      String resource = n.isTextual() ? wf.grains().getOrDefault(n.asText(), n.asText()) : null;
      if (resource == null || !wf.resources().contains(resource)) {
        throw ApiException.badRequest("application '" + o.name().name() + "' has no grain " + n
            + " (its grains: " + wf.grains().keySet() + ")");
      }
      only.add(resource);
    }
    if (body.path("dry_run").asBoolean(false)) {
      return checkUpdate(o, app, wf, only, body.path("requirements"));
    }
    return deploy(call, o, app, wf, only);
  }

  /**
   * {@code "dry_run": true}: would an update of {@code only} be accepted if their code had the requirements
   * given per grain in {@code proposed} ({@code {"<grain>": "<requirements.txt>"}}, missing = none)? Nothing is
   * stored: {@code sand update} asks this before it uploads the grains' code, so a refused update leaves no new
   * grain version behind.
   */
  private Reply checkUpdate(
      AppsHandler.Owned o,
      ApplicationRecord app,
      Workflow wf,
      Set<String> only,
      JsonNode proposed) {
    if (!proposed.isMissingNode() && !proposed.isNull() && !proposed.isObject()) {
      throw ApiException.badRequest(
          "requirements must be an object {\"<grain>\": \"<requirements.txt text>\"}");
    }
    Map<String, GrainCode> deployed = store.applicationCode(app.appId());
    List<String> lines = new ArrayList<>();
    for (String resource : wf.resources()) {
      if (only.contains(resource)) {
        lines.addAll(requirementLines(proposed.path(resource).asText("")));
        continue;
      }
      GrainCode kept = deployed.get(resource);
      if (kept == null) {
        throw noDeployedCode(o, resource);
      }
      if ("zip".equals(kept.kind())) {
        lines.addAll(requirementLines(requirementsOf(kept.code())));
      }
    }
    if (!lines.equals(requirementLines(app.requirements() == null ? "" : app.requirements()))) {
      throw requirementsChanged(only);
    }
    var out = Json.object().put("name", o.name().name()).put("dry_run", true).put("accepted", true);
    only.forEach(out.putArray("grains")::add);
    return Reply.ok(out);
  }

  private static ApiException noDeployedCode(AppsHandler.Owned o, String resource) {
    return ApiException.conflict("application '" + o.name().name()
        + "' has no deployed code of grain '" + resource + "': deploy it (sand deploy)");
  }

  private static ApiException requirementsChanged(Set<String> only) {
    return ApiException.conflict(
        "the requirements of grain " + only + " changed: they are installed with a new "
            + "sandbox; deploy the application instead (sand deploy)");
  }

  /**
   * Deploy the application: every grain's newest code, or with {@code only} those grains' newest code and the others'
   * as deployed.
   */
  private Reply deploy(
      Call call, AppsHandler.Owned o, ApplicationRecord app, Workflow wf, Set<String> only) {
    Map<String, GrainCode> deployed = only == null ? Map.of() : store.applicationCode(app.appId());
    Map<String, GrainCode> code = new LinkedHashMap<>();
    StringBuilder requirements = new StringBuilder();
    for (String resource : wf.resources()) {
      GrainCode kept = only == null || only.contains(resource) ? null : deployed.get(resource);
      if (only != null && !only.contains(resource) && kept == null) {
        throw noDeployedCode(o, resource);
      }
      GrainCode c;
      String version;
      if (kept != null) { // an update keeps this grain's code as the hosts run it
        c = kept;
        version = "as deployed";
      } else { // the application's own grain, else the account's shared one
        GrainVersion g = store
            .latestGrain(GrainsHandler.appScope(app.appId()), resource)
            .or(() -> store.latestGrain(call.account(), resource))
            .orElseThrow(() -> new ApiException(
                400,
                "missing_grain",
                "application '" + app.name() + "' needs grain '" + resource
                    + "', which it does not "
                    + "have; upload it with PUT /api/v1/apps/" + app.name() + "/grains/" + resource
                    + " (or share one across "
                    + "your applications with PUT /api/v1/grains/" + resource + ")"));
        c = new GrainCode(resource, g.code(), g.kind(), g.sha256());
        version = "v" + g.version();
      }
      code.put(resource, c);
      if ("zip".equals(c.kind())) {
        String req = requirementsOf(c.code());
        if (!req.isBlank()) {
          requirements
              .append("# from grain ")
              .append(resource)
              .append(' ')
              .append(version)
              .append('\n')
              .append(req)
              .append(req.endsWith("\n") ? "" : "\n");
        }
      }
    }
    String deployedRequirements = app.requirements() == null ? "" : app.requirements();
    if (only != null
        && requirementLines(requirements.toString())
            .equals(requirementLines(deployedRequirements))) {
      requirements = new StringBuilder(
          deployedRequirements); // the same requirements, as the hosts installed them
    } else if (only != null) {
      throw requirementsChanged(only);
    }
    return apply(
        o,
        app,
        code,
        requirements.toString(),
        only == null ? "deploy" : "update of " + String.join(", ", only));
  }

  /**
   * Make {@code app} (with the workflow, settings and hosts to run) run {@code code} with {@code requirements} as a
   * new version: checks, placement, the host states, the record the agents read, the version's snapshot, the
   * control event.
   */
  private Reply apply(
      AppsHandler.Owned o,
      ApplicationRecord app,
      Map<String, GrainCode> code,
      String requirements,
      String description) {
    Workflow wf = Workflow.parse(Json.stored(app.workflow()));
    try { // the caps may have changed since the application was saved
      apps.limits()
          .check(ApplicationSettings.fromJson(app.settings()), wf.grains().size(), 0);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(
          "application '" + app.name() + "' cannot be deployed: " + e.getMessage());
    }
    int hostsMax = apps.limits().hostsMax();
    Optional<ElasticPlacement> elastic =
        ElasticPlacement.of(app.settings()).map(p -> p.capped(hostsMax));
    List<String> hosts;
    if (elastic.isPresent()) { // where the scheduler placed it, else its first min_hosts hosts
      hosts = app.hosts().isEmpty() || app.hosts().size() > elastic.get().maxHosts()
          ? rendezvous(
              app.appId(), apps.deployTargets(app.appId()), elastic.get().minHosts())
          : app.hosts();
    } else {
      hosts = app.hosts().isEmpty() || (hostsMax > 0 && app.hosts().size() > hostsMax)
          ? placement(app.appId(), apps.deployTargets(app.appId()), hostsMax)
          : app.hosts();
    }
    List<String> targets = hosts.isEmpty() ? List.copyOf(apps.deployTargets(app.appId())) : hosts;
    store.replaceApplicationCode(app.appId(), code);
    store.clearAppHostStates(app.appId());
    for (String h : targets) {
      store.setAppHostState(app.appId(), h, HostAgentTables.HOST_DEPLOYING, null, clock.instant());
    }
    ApplicationRecord next = new ApplicationRecord(
        app.appId(),
        app.name(),
        app.owner(),
        app.workflow(),
        requirements,
        app.settings(),
        app.version() + 1,
        HostAgentTables.DESIRED_DEPLOYED,
        hosts);
    store.putApplication(next, Map.of());
    versions.record(next, code, o.name().requestTimeoutS(), description, clock.instant());
    apps.changed(app.name());
    LOG.info(
        "[app {} id {}] {}: version {} on {}",
        app.name(),
        app.appId(),
        description,
        next.version(),
        hosts.isEmpty() ? "every live host " + targets : targets);
    control.publish("deploy", app.appId(), hosts);
    return Reply.json(202, apps.describe(o.name(), next));
  }

  /**
   * The hosts an application that names none runs on: every live host (empty list) unless the operator caps
   * hosts per application; then {@code max} of them, chosen by rendezvous hashing on the application id, so
   * different applications spread over the cluster and one application's choice is stable.
   */
  static List<String> placement(String appId, Set<String> live, int max) {
    if (max <= 0 || live.size() <= max) {
      return List.of();
    }
    return rendezvous(appId, live, max);
  }

  /**
   * {@code n} of {@code live} (all when fewer), chosen by rendezvous hashing on the application id: the first hosts
   * of an application placed by the scheduler (docs/operations.md "Elastic placement"), and the capped placement.
   */
  static List<String> rendezvous(String appId, Set<String> live, int n) {
    return live.stream()
        .sorted(Comparator.comparingLong((String h) -> rendezvous(appId, h)).thenComparing(h -> h))
        .limit(n)
        .sorted()
        .toList();
  }

  private static long rendezvous(String appId, String host) {
    byte[] d;
    try {
      d = MessageDigest.getInstance("SHA-256")
          .digest((appId + "/" + host).getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    return ByteBuffer.wrap(d).getLong();
  }

  Reply undeploy(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    undeploy(o.app(), "its owner");
    return Reply.json(
        202, apps.describe(o.name(), store.application(o.app().appId()).orElseThrow()));
  }

  /** Set the application's desired state to undeployed and tell the host agents; {@code by} is for the log. */
  void undeploy(ApplicationRecord app, String by) {
    store.setDesired(app.appId(), HostAgentTables.DESIRED_UNDEPLOYED, app.hosts());
    apps.changed(app.name());
    LOG.info("[app {} id {}] undeploy by {}", app.name(), app.appId(), by);
    control.publish("undeploy", app.appId(), app.hosts());
  }

  /** The requirements without comments (they name grain versions). */
  private static List<String> requirementLines(String requirements) {
    return requirements
        .lines()
        .map(String::strip)
        .filter(l -> !l.isEmpty() && !l.startsWith("#"))
        .toList();
  }

  /** The top-level requirements.txt of a zip grain (checked at upload), "" if none. */
  static String requirementsOf(byte[] zip) {
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
      ZipEntry e;
      while ((e = in.getNextEntry()) != null) {
        if (e.getName().equals("requirements.txt")) {
          return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
      }
      return "";
    } catch (IOException ex) {
      throw new IllegalStateException("a stored zip grain cannot be read: " + ex.getMessage(), ex);
    }
  }
}
