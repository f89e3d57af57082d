package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import sand.cluster.ApplicationRecords.AppRecord;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.GrainCode;
import sand.frontend.internal.Json;

/**
 * An application's versions (docs/api.md "Versions and rollback"): every deploy, update and rollback makes a new,
 * immutable, numbered version, the number the host agents deploy ({@link ApplicationRecord#version()}). A version
 * records what ran: the workflow, the settings, the requirements and each grain's code; a rollback to version K
 * makes a new version with K's content (as Heroku's releases do), so the numbers only go up and the history says
 * what happened. The code is kept once per content (kind {@value #CODE}, by sha256), shared by the versions that
 * ran it; the newest {@link #KEPT} versions are kept, older ones and code no kept version runs are deleted.
 */
final class Versions {
  static final String VERSION = "version";
  static final String CODE = "code";
  /** How many versions of an application are kept (older ones cannot be rolled back to). */
  static final int KEPT = 20;

  /** What a version ran. {@code code}: resource -> its code (bytes loaded only where needed). */
  record Snapshot(
      int version,
      Instant created,
      String description,
      String workflow,
      String settings,
      String requirements,
      List<String> hosts,
      int requestTimeoutS,
      Map<String, GrainCode> code) {}

  private final ClusterStore store;

  Versions(ClusterStore store) {
    this.store = store;
  }

  /** The record id of version {@code n}: zero-padded, so the records' id order is the numbers' order. */
  static String id(int n) {
    return String.format("%09d", n);
  }

  /** Record what {@code app} (just written with its new version number) runs, and prune old versions. */
  void record(
      ApplicationRecord app,
      Map<String, GrainCode> code,
      int requestTimeoutS,
      String description,
      Instant now) {
    ObjectNode v = Json.object()
        .put("version", app.version())
        .put("created", now.toString())
        .put("description", description)
        .put("workflow", app.workflow())
        .put("settings", app.settings())
        .put("requirements", app.requirements() == null ? "" : app.requirements())
        .put("request_timeout_s", requestTimeoutS);
    app.hosts().forEach(v.putArray("hosts")::add);
    ObjectNode grains = v.putObject("grains");
    code.forEach((resource, c) -> {
      grains.putObject(resource).put("kind", c.kind()).put("sha256", c.sha256());
      if (store.appRecord(app.appId(), CODE, c.sha256()).isEmpty()) {
        store.putAppRecord(new AppRecord(app.appId(), CODE, c.sha256(), c.code()));
      }
    });
    store.putAppRecord(new AppRecord(app.appId(), VERSION, id(app.version()), Json.bytes(v)));
    prune(app.appId());
  }

  /** The application's versions, newest first, without their code. */
  List<Snapshot> list(String appId) {
    List<AppRecord> records = new java.util.ArrayList<>(store.appRecords(appId, VERSION));
    java.util.Collections.reverse(records);
    return records.stream().map(r -> parse(r, false, appId)).toList();
  }

  /** Version {@code n} with its code, if it is kept. */
  Optional<Snapshot> get(String appId, int n) {
    return store.appRecord(appId, VERSION, id(n)).map(r -> parse(r, true, appId));
  }

  private Snapshot parse(AppRecord r, boolean withCode, String appId) {
    JsonNode v;
    try {
      v = Json.MAPPER.readTree(r.value());
    } catch (IOException e) {
      throw new IllegalStateException(
          "version record " + r.id() + " of " + appId + " is not JSON", e);
    }
    Map<String, GrainCode> code = new LinkedHashMap<>();
    v.path("grains").fields().forEachRemaining(e -> {
      String sha = e.getValue().path("sha256").asText();
      byte[] bytes = withCode
          ? store
              .appRecord(appId, CODE, sha)
              .map(AppRecord::value)
              .orElseThrow(() -> new IllegalStateException(
                  "the code " + sha + " of version " + v.path("version").asInt() + " is missing"))
          : new byte[0];
      code.put(
          e.getKey(), new GrainCode(e.getKey(), bytes, e.getValue().path("kind").asText(), sha));
    });
    List<String> hosts = new java.util.ArrayList<>();
    v.path("hosts").forEach(h -> hosts.add(h.asText()));
    return new Snapshot(
        v.path("version").asInt(),
        Instant.parse(v.path("created").asText()),
        v.path("description").asText(),
        v.path("workflow").asText(),
        v.path("settings").asText(),
        v.path("requirements").asText(),
        List.copyOf(hosts),
        v.path("request_timeout_s").asInt(),
        code);
  }

  /** Keep the newest {@link #KEPT} versions and the code they run. */
  private void prune(String appId) {
    List<AppRecord> all = store.appRecords(appId, VERSION);
    if (all.size() <= KEPT) {
      return;
    }
    all.subList(0, all.size() - KEPT).forEach(r -> store.deleteAppRecord(appId, VERSION, r.id()));
    Set<String> used = new HashSet<>();
    for (AppRecord r : all.subList(all.size() - KEPT, all.size())) {
      parse(r, false, appId).code().values().forEach(c -> used.add(c.sha256()));
    }
    store.appRecords(appId, CODE).stream()
        .map(AppRecord::id)
        .filter(sha -> !used.contains(sha))
        .forEach(sha -> store.deleteAppRecord(appId, CODE, sha));
  }

  /** A version as the API shows it (no code bytes). */
  static ObjectNode describe(Snapshot s, int running) {
    ObjectNode o = Json.object()
        .put("version", s.version())
        .put("created", s.created().toString())
        .put("description", s.description())
        .put("running", s.version() == running);
    ObjectNode grains = o.putObject("grains");
    s.code().forEach((r, c) -> grains.putObject(r).put("kind", c.kind()).put("sha256", c.sha256()));
    o.put("requirements", s.requirements());
    return o;
  }
}
