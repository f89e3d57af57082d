package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.TriggerTables.DeadLetter;
import sand.cluster.TriggerTables.Trigger;
import sand.contracts.Workflow;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.AppDirectory;
import sand.frontend.trigger.Deliveries;
import sand.frontend.trigger.QueueConsumers;
import sand.frontend.trigger.TopicSource;
import sand.frontend.trigger.TriggerSpec;

/**
 * {@code /api/v1/apps/{app}/triggers} and {@code /api/v1/apps/{app}/dead-letters} (docs/triggers.md): an
 * application's timers and queue triggers, and the events that failed every attempt. Another account's application
 * answers 404, as every app route does.
 */
public final class TriggersHandler {
  public static final int DEAD_LETTERS_DEFAULT = 20;
  public static final int DEAD_LETTERS_MAX = 100;
  private static final Pattern DEAD_ID = Pattern.compile("\\d{13}-[0-9a-f]{8}");

  private final ClusterStore store;
  private final AppsHandler apps;
  private final AppDirectory directory;
  private final TopicSource topics; // null: queue triggers are refused (no Kafka to check)
  private final Clock clock;
  private Deliveries deliveries; // null: no redrive
  private QueueConsumers queues; // null: no lag shown
  private Runnable changed = () -> {};

  public TriggersHandler(
      ClusterStore store,
      AppsHandler apps,
      AppDirectory directory,
      TopicSource topics,
      Clock clock) {
    this.store = store;
    this.apps = apps;
    this.directory = directory;
    this.topics = topics;
    this.clock = clock;
  }

  /** {@code changed} runs after every change of a trigger here (TriggerSet.changed). */
  public TriggersHandler onChange(Runnable changed) {
    this.changed = changed;
    return this;
  }

  public TriggersHandler useDeliveries(Deliveries deliveries, QueueConsumers queues) {
    this.deliveries = deliveries;
    this.queues = queues;
    return this;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps/{app}/triggers", true, this::list);
    r.add("GET", "/api/v1/apps/{app}/triggers/{name}", true, this::get);
    r.add("PUT", "/api/v1/apps/{app}/triggers/{name}", true, this::put);
    r.add("DELETE", "/api/v1/apps/{app}/triggers/{name}", true, this::delete);
    r.add("GET", "/api/v1/apps/{app}/dead-letters", true, this::deadLetters);
    r.add("GET", "/api/v1/apps/{app}/dead-letters/{id}", true, this::deadLetter);
    r.add("DELETE", "/api/v1/apps/{app}/dead-letters/{id}", true, this::deleteDeadLetter);
    r.add("POST", "/api/v1/apps/{app}/dead-letters/{id}/redrive", true, this::redrive);
  }

  Reply list(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    ObjectNode out = Json.object().put("app", o.name().name());
    out.set("triggers", describeAll(o.app().appId()));
    return Reply.ok(out);
  }

  /** The application's triggers as its status shows them (GET /api/v1/apps/{app}). */
  public ArrayNode describeAll(String appId) {
    ArrayNode arr = Json.MAPPER.createArrayNode();
    for (Trigger t : store.triggers().triggers(appId)) {
      arr.add(describe(t));
    }
    return arr;
  }

  private ObjectNode describe(Trigger t) {
    try {
      TriggerSpec s = TriggerSpec.stored(t.appId(), t.name(), t.spec());
      ObjectNode o = s.json();
      o.put("created", t.created() == null ? null : t.created().toString());
      if (s.schedule() != null) {
        o.put("schedule", s.schedule().describe());
        o.put("next", Instant.ofEpochMilli(s.schedule().after(clock.millis())).toString());
      }
      if (queues != null && TriggerSpec.QUEUE.equals(s.kind())) {
        long lag = queues.lag(t.appId(), t.name());
        if (lag >= 0) {
          o.put("lag_here", lag);
        }
      }
      return o;
    } catch (IllegalArgumentException e) {
      return Json.object().put("name", t.name()).put("kind", t.kind()).put("error", e.getMessage());
    }
  }

  private static String name(Call call) {
    String name = call.param("name");
    try {
      TriggerSpec.checkName(name);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(e.getMessage());
    }
    return name;
  }

  Reply get(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = call.param("name");
    return store.triggers().triggers(o.app().appId()).stream()
        .filter(t -> t.name().equals(name))
        .findFirst()
        .map(t -> Reply.ok(describe(t).put("app", o.name().name())))
        .orElseThrow(() -> noTrigger(o, name));
  }

  private static ApiException noTrigger(AppsHandler.Owned o, String name) {
    return ApiException.notFound("application '" + o.name().name() + "' has no trigger '" + name
        + "'; list them with GET /api/v1/apps/" + o.name().name() + "/triggers");
  }

  Reply put(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = name(call);
    if (!HostAgentTables.DESIRED_DEPLOYED.equals(o.app().desired())) {
      throw ApiException.conflict(
          "application '" + o.name().name() + "' is not deployed: a trigger "
              + "would have nothing to run; deploy it first (POST /api/v1/apps/"
              + o.name().name()
              + "/deploy), or declare the trigger in its workflow's settings.triggers");
    }
    JsonNode body = call.json("a trigger");
    if (body.isObject()) {
      ((ObjectNode) body).put("origin", TriggerSpec.ORIGIN_API);
    }
    TriggerSpec spec = parse(o.app().appId(), name, body);
    checkTopic(spec);
    checkGrain(spec, o.app().workflow());
    List<Trigger> existing = store.triggers().triggers(o.app().appId());
    boolean replaces = existing.stream().anyMatch(t -> t.name().equals(name));
    if (!replaces && existing.size() >= TriggerSpec.MAX_PER_APP) {
      throw ApiException.badRequest("application '" + o.name().name() + "' has "
          + existing.size() + " triggers: at most " + TriggerSpec.MAX_PER_APP
          + "; delete one first (sand trigger delete)");
    }
    Trigger t =
        new Trigger(o.app().appId(), name, spec.kind(), Json.text(spec.json()), clock.instant());
    store.triggers().putTrigger(t);
    changed.run();
    return Reply.json(replaces ? 200 : 201, describe(t).put("app", o.name().name()));
  }

  static TriggerSpec parse(String appId, String name, JsonNode body) {
    try {
      return TriggerSpec.parse(appId, name, body);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(e.getMessage());
    }
  }

  /** A queue trigger's topic exists (404 naming it), and Kafka can be asked (503). */
  void checkTopic(TriggerSpec spec) {
    if (!TriggerSpec.QUEUE.equals(spec.kind())) {
      return;
    }
    if (topics == null) {
      throw new ApiException(503, "unavailable", "this frontend has no Kafka to consume from");
    }
    OptionalInt p;
    try {
      p = topics.partitions(spec.topic());
    } catch (IllegalStateException e) {
      throw new ApiException(
          503,
          "unavailable",
          e.getMessage()
              + " (if the cluster uses Kafka ACLs, the operator grants frontends READ and DESCRIBE on it)");
    }
    if (p.isEmpty()) {
      throw ApiException.notFound("Kafka has no topic '" + spec.topic() + "'; create it first "
          + "(kafka-topics.sh --create --topic " + spec.topic() + "), then add the trigger");
    }
  }

  /** A trigger's grain is one of the workflow's (400 naming them). */
  static void checkGrain(TriggerSpec spec, String workflow) {
    if (spec.grain() == null) {
      return;
    }
    java.util.Set<String> grains = Workflow.parse(workflow).grains().keySet();
    if (!grains.contains(spec.grain())) {
      throw ApiException.badRequest("trigger '" + spec.name() + "': the workflow has no grain '"
          + spec.grain() + "'; its grains: " + new java.util.TreeSet<>(grains)
          + " (an ASL state's grain is named after the state)");
    }
  }

  Reply delete(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = call.param("name");
    if (!store.triggers().deleteTrigger(o.app().appId(), name)) {
      throw noTrigger(o, name);
    }
    changed.run();
    return Reply.ok(
        Json.object().put("app", o.name().name()).put("name", name).put("deleted", true));
  }

  /**
   * Replace the workflow-declared triggers of an application by {@code declared} (settings.triggers at PUT of the
   * application); triggers added through the API stay. Checks everything before it changes anything.
   */
  public void declare(String appId, JsonNode declared, String workflow) {
    List<TriggerSpec> specs = parseDeclared(appId, declared);
    specs.forEach(this::checkTopic);
    specs.forEach(s -> checkGrain(s, workflow));
    List<Trigger> existing = store.triggers().triggers(appId);
    long fromApi = existing.stream()
        .filter(t -> specs.stream().noneMatch(s -> s.name().equals(t.name())))
        .filter(t -> !declared(t))
        .count();
    if (fromApi + specs.size() > TriggerSpec.MAX_PER_APP) {
      throw ApiException.badRequest("settings.triggers would give the application "
          + (fromApi + specs.size()) + " triggers: at most " + TriggerSpec.MAX_PER_APP);
    }
    for (Trigger t : existing) {
      if (declared(t) && specs.stream().noneMatch(s -> s.name().equals(t.name()))) {
        store.triggers().deleteTrigger(appId, t.name());
      }
    }
    for (TriggerSpec s : specs) {
      store
          .triggers()
          .putTrigger(new Trigger(appId, s.name(), s.kind(), Json.text(s.json()), clock.instant()));
    }
    changed.run();
  }

  /** Whether a stored trigger came from the workflow's settings.triggers (one that no longer parses: not). */
  private static boolean declared(Trigger t) {
    try {
      return TriggerSpec.ORIGIN_WORKFLOW.equals(
          TriggerSpec.stored(t.appId(), t.name(), t.spec()).origin());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** settings.triggers: a list of trigger objects, each with its name (IllegalArgumentException naming the fix). */
  public static List<TriggerSpec> parseDeclared(String appId, JsonNode declared) {
    if (declared == null || declared.isNull()) {
      return List.of();
    }
    if (!declared.isArray()) {
      throw ApiException.badRequest("settings.triggers must be a list, e.g. "
          + "[{\"name\": \"nightly\", \"cron\": \"0 3 * * *\"}]");
    }
    if (declared.size() > TriggerSpec.MAX_PER_APP) {
      throw ApiException.badRequest("settings.triggers has " + declared.size()
          + " triggers: at most " + TriggerSpec.MAX_PER_APP);
    }
    List<TriggerSpec> out = new java.util.ArrayList<>();
    java.util.Set<String> names = new java.util.HashSet<>();
    for (JsonNode n : declared) {
      if (!n.isObject() || !n.path("name").isTextual()) {
        throw ApiException.badRequest("each of settings.triggers needs a name, e.g. "
            + "{\"name\": \"nightly\", \"cron\": \"0 3 * * *\"}");
      }
      ObjectNode copy = ((ObjectNode) n).deepCopy();
      copy.put("origin", TriggerSpec.ORIGIN_WORKFLOW);
      String name = copy.get("name").asText();
      if (!names.add(name)) {
        throw ApiException.badRequest("settings.triggers names '" + name + "' twice");
      }
      try {
        out.add(TriggerSpec.parse(appId, name, copy));
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest("settings.triggers: " + e.getMessage());
      }
    }
    return out;
  }

  Reply deadLetters(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    int limit = call.count("limit", DEAD_LETTERS_DEFAULT, DEAD_LETTERS_MAX);
    String before = call.query("before");
    if (before != null && !DEAD_ID.matcher(before).matches()) {
      throw ApiException.badRequest(
          "before='" + before + "' is not a dead letter's id " + "(use the previous page's next)");
    }
    List<DeadLetter> page = store.triggers().deadLetters(o.app().appId(), before, limit);
    ObjectNode out = Json.object().put("app", o.name().name());
    ArrayNode arr = out.putArray("dead_letters");
    page.forEach(d -> arr.add(describe(d)));
    out.put("next", page.size() == limit ? page.get(page.size() - 1).id() : null);
    return Reply.ok(out);
  }

  private static ObjectNode describe(DeadLetter d) {
    ObjectNode o = Json.object()
        .put("id", d.id())
        .put("source", d.source())
        .put("attempts", d.attempts())
        .put("at", d.at() == null ? null : d.at().toString());
    o.set("event", Json.stored(d.event()));
    o.set("error", Json.stored(d.error()));
    ArrayNode ex = o.putArray("executions");
    for (String id : d.executions() == null ? new String[0] : d.executions().split(",")) {
      if (!id.isEmpty()) {
        ex.add(id);
      }
    }
    return o;
  }

  private DeadLetter letter(AppsHandler.Owned o, String id) {
    return (DEAD_ID.matcher(id).matches()
            ? store.triggers().deadLetter(o.app().appId(), id)
            : java.util.Optional.<DeadLetter>empty())
        .orElseThrow(() -> ApiException.notFound("application '" + o.name().name()
            + "' has no dead letter '" + id + "'; list them with GET /api/v1/apps/"
            + o.name().name() + "/dead-letters"));
  }

  Reply deadLetter(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    return Reply.ok(describe(letter(o, call.param("id"))).put("app", o.name().name()));
  }

  Reply deleteDeadLetter(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    DeadLetter d = letter(o, call.param("id"));
    store.triggers().deleteDeadLetter(o.app().appId(), d.id());
    return Reply.ok(
        Json.object().put("app", o.name().name()).put("id", d.id()).put("deleted", true));
  }

  /** Run a dead letter's event again (with the retry policy), and remove it from the dead letters. */
  Reply redrive(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    DeadLetter d = letter(o, call.param("id"));
    if (deliveries == null) {
      throw new ApiException(503, "unavailable", "this frontend cannot run events again");
    }
    AppDirectory.Target app = directory
        .find(o.name().name())
        .filter(AppDirectory.Target::deployed)
        .orElseThrow(() -> ApiException.conflict(
            "application '" + o.name().name() + "' is not deployed; deploy it, then redrive"));
    String id = Ids.newId();
    var delivery = deliveries
        .deliver(
            app,
            Json.stored(d.event()),
            "redrive:" + d.id(),
            null,
            id,
            Deliveries.Unsent.CALLER_RETRIES)
        .orElseThrow(() -> new ApiException(
            503,
            "busy",
            "this frontend holds as many deliveries as it " + "may; try again in a moment"));
    delivery.firstSent().join();
    store.triggers().deleteDeadLetter(o.app().appId(), d.id());
    return Reply.json(
        202,
        Json.object().put("app", o.name().name()).put("execution_id", id).put("redriven", d.id()));
  }
}
