package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ApplicationRecords.AppRecord;
import sand.cluster.ClusterStore;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.Alias;

/**
 * {@code /api/v1/apps/{app}/aliases}: an application's aliases (docs/api.md "Aliases"), names such as {@code prod}
 * that {@code POST /app/{app}@{alias}} runs, each pointing at a kept version, optionally with a second version
 * taking a share of the requests. This frontend's invocations see a change at once, other frontends' within
 * their application cache's age. Another account's application answers 404, as every app route does.
 */
public final class AliasesHandler {
  private static final Logger LOG = LoggerFactory.getLogger(AliasesHandler.class);
  /** The control event's type: frontends forget the application (host agents skip it). */
  static final String ALIAS_EVENT = "alias";

  private final ClusterStore store;
  private final AppsHandler apps;
  private final Versions versions;
  private final ControlEvents events;

  public AliasesHandler(ClusterStore store, AppsHandler apps, ControlEvents events) {
    this.store = store;
    this.apps = apps;
    this.versions = new Versions(store);
    this.events = events;
  }

  /** This frontend and, through sand.control, the others read the application's aliases again at once. */
  private void changed(AppsHandler.Owned o) {
    apps.changed(o.name().name());
    try {
      events.publish(ALIAS_EVENT, o.app().appId(), List.of());
    } catch (ApiException e) {
      // recorded; the other frontends see it when their cached entry is read again (seconds)
      LOG.warn("[app {}] alias change not announced: {}", o.name().name(), e.getMessage());
    }
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps/{app}/aliases", true, this::list);
    r.add("PUT", "/api/v1/apps/{app}/aliases/{alias}", true, this::put);
    r.add("DELETE", "/api/v1/apps/{app}/aliases/{alias}", true, this::delete);
  }

  Reply put(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String appId = o.app().appId();
    Alias alias;
    try {
      alias = Alias.of(Alias.checkName(call.param("alias")), call.json("an alias"));
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(e.getMessage());
    }
    Set<Integer> kept =
        versions.list(appId).stream().map(Versions.Snapshot::version).collect(Collectors.toSet());
    for (int v : alias.versions()) {
      if (!kept.contains(v)) {
        throw ApiException.badRequest(
            "application '" + o.name().name() + "' has no version " + v + " (the newest "
                + Versions.KEPT + " are kept; sand versions " + o.name().name() + ")");
      }
    }
    List<AppRecord> existing = store.appRecords(appId, Alias.KIND);
    boolean replaces = existing.stream().anyMatch(r -> r.id().equals(alias.name()));
    if (!replaces && existing.size() >= Alias.MAX_PER_APP) {
      throw ApiException.badRequest("application '" + o.name().name() + "' has "
          + existing.size() + " aliases: at most " + Alias.MAX_PER_APP
          + "; delete one first (sand alias delete)");
    }
    store.putAppRecord(new AppRecord(appId, Alias.KIND, alias.name(), alias.encode()));
    changed(o);
    return Reply.ok(describe(alias, o));
  }

  Reply list(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    ObjectNode out =
        Json.object().put("app", o.name().name()).put("running_version", o.app().version());
    var arr = out.putArray("aliases");
    store
        .appRecords(o.app().appId(), Alias.KIND)
        .forEach(r -> arr.add(describe(Alias.decode(r.id(), r.value()), o)));
    return Reply.ok(out);
  }

  Reply delete(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = call.param("alias");
    boolean valid =
        Alias.NAME.matcher(name).matches(); // a name no alias may have is simply not there
    if (!valid || store.appRecord(o.app().appId(), Alias.KIND, name).isEmpty()) {
      throw ApiException.notFound("application '" + o.name().name() + "' has no alias "
          + (valid ? "'" + name + "'" : "of that name") + " (sand alias list "
          + o.name().name() + ")");
    }
    store.deleteAppRecord(o.app().appId(), Alias.KIND, name);
    changed(o);
    return Reply.ok(
        Json.object().put("app", o.name().name()).put("name", name).put("deleted", true));
  }

  /** The alias as the API shows it, with whether {@code POST /app/{app}@{alias}} can run it now. */
  private static ObjectNode describe(Alias a, AppsHandler.Owned o) {
    int running = o.app().version();
    boolean serves = true;
    for (int v : a.versions()) {
      serves &= v == running;
    }
    return a.json()
        .put("app", o.name().name())
        .put("invoke", "/app/" + o.name().name() + "@" + a.name())
        .put("serves", serves)
        .put(
            "note",
            serves
                ? "requests to /app/" + o.name().name() + "@" + a.name() + " run version " + running
                : "answers 409 until the versions it names run: only the running version " + running
                    + " answers (running a second version beside it is not built yet)");
  }
}
