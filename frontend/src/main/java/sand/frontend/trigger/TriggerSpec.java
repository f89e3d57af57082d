package sand.frontend.trigger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import sand.frontend.internal.Json;

/**
 * One trigger as a developer declares it (docs/triggers.md), in {@code PUT /api/v1/apps/{app}/triggers/{name}} or
 * in the workflow's {@code settings.triggers}:
 *
 * <ul>
 *   <li>a timer: {@code {"every": "10s"}} or {@code {"cron": "0 3 * * *"}}, with an optional {@code input} (the
 *       event every tick sends; absent: {"trigger", "time"});
 *   <li>a queue: {@code {"topic": "events.orders", "batch_size": 10, "start": "latest", "per": "record"}}: the
 *       topic's records, consumed in a group of SAND's (or {@code group}), an execution per record or per batch.
 * </ul>
 *
 * <p>Either may name the {@code grain} its events go to (a state of an ASL workflow is a grain); absent: the
 * workflow's entry.
 */
public record TriggerSpec(
    String name,
    String kind,
    Schedule schedule,
    JsonNode input,
    String topic,
    String group,
    int batchSize,
    String start,
    boolean perBatch,
    String origin,
    String grain) {
  public static final String TIMER = "timer";
  public static final String QUEUE = "queue";
  /** Where a trigger came from: the API (kept across deploys) or the workflow's settings (replaced by them). */
  public static final String ORIGIN_API = "api";

  public static final String ORIGIN_WORKFLOW = "workflow";
  public static final int MAX_PER_APP = 16;
  public static final int MAX_BATCH = 100;
  public static final int MAX_INPUT_BYTES = 64 * 1024;
  public static final String NAME_FORM = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
  private static final Pattern NAME = Pattern.compile(NAME_FORM);
  /** Kafka's legal topic characters; SAND's own topics (sand.) and Kafka's (__) are not an application's to read. */
  private static final Pattern GRAIN = Pattern.compile("[A-Za-z0-9_.-]{1,200}");

  private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9._-]{1,249}");

  private static final Set<String> TIMER_FIELDS =
      Set.of("name", "every", "cron", "input", "origin", "grain");
  private static final Set<String> QUEUE_FIELDS =
      Set.of("name", "topic", "group", "batch_size", "start", "per", "origin", "grain");

  /** The group a queue trigger's consumers join unless it names one: a SAND name (covered by SAND's ACLs). */
  public static String defaultGroup(String appId, String name) {
    return "sand.trigger." + appId + "." + name;
  }

  public static void checkName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("trigger name '" + name + "' must match " + NAME_FORM);
    }
  }

  /** Parse and check {@code n} as trigger {@code name} of application {@code appId}. */
  public static TriggerSpec parse(String appId, String name, JsonNode n) {
    checkName(name);
    if (n == null || !n.isObject()) {
      throw new IllegalArgumentException("trigger '" + name + "' must be a JSON object: "
          + "{\"every\": \"10s\"}, {\"cron\": \"*/5 * * * *\"} or {\"topic\": \"events.orders\"}");
    }
    if (n.has("name") && !name.equals(n.get("name").asText())) {
      throw new IllegalArgumentException("trigger's name field '"
          + n.get("name").asText() + "' differs from its name in the path, '" + name + "'");
    }
    String origin = n.path("origin").asText(ORIGIN_API);
    boolean timer = n.has("every") || n.has("cron");
    boolean queue = n.has("topic");
    if (timer == queue) {
      throw new IllegalArgumentException("trigger '" + name + "' needs exactly one of every, cron "
          + "(a timer) or topic (a queue)");
    }
    check(n, name, timer ? TIMER_FIELDS : QUEUE_FIELDS);
    String grain = n.hasNonNull("grain") ? n.get("grain").asText() : null;
    if (grain != null && !GRAIN.matcher(grain).matches()) {
      throw new IllegalArgumentException("grain '" + grain + "' is not a grain's name "
          + "([A-Za-z0-9_.-]); leave it out for the workflow's entry");
    }
    if (timer) {
      if (n.has("every") && n.has("cron")) {
        throw new IllegalArgumentException(
            "trigger '" + name + "' has both every and cron; a timer has one");
      }
      Schedule s = n.has("every")
          ? Schedule.every(n.get("every").asText())
          : Schedule.cron(n.get("cron").asText());
      JsonNode input = n.get("input");
      if (input != null && Json.text(input).length() > MAX_INPUT_BYTES) {
        throw new IllegalArgumentException(
            "trigger '" + name + "' input is larger than " + MAX_INPUT_BYTES / 1024 + " KB");
      }
      return new TriggerSpec(name, TIMER, s, input, null, null, 0, null, false, origin, grain);
    }
    String topic = n.get("topic").asText();
    if (!TOPIC.matcher(topic).matches()) {
      throw new IllegalArgumentException(
          "topic '" + topic + "' is not a Kafka topic name ([A-Za-z0-9._-], at most 249)");
    }
    if (topic.startsWith("sand.") || topic.startsWith("__")) {
      throw new IllegalArgumentException("topic '" + topic + "' is one of SAND's or Kafka's own "
          + "(sand., __): an application may consume only topics outside them");
    }
    String group = n.has("group") ? n.get("group").asText() : defaultGroup(appId, name);
    if (n.has("group")
        && !group.equals(defaultGroup(appId, name))
        && (!TOPIC.matcher(group).matches() || group.startsWith("sand."))) {
      throw new IllegalArgumentException("group '" + group + "' must be [A-Za-z0-9._-] and not "
          + "start with sand. (SAND's own groups); leave it out for SAND's group of this trigger");
    }
    int batch = n.has("batch_size") ? n.get("batch_size").asInt(-1) : 10;
    if (!n.path("batch_size").isMissingNode() && !n.get("batch_size").isIntegralNumber()
        || batch < 1
        || batch > MAX_BATCH) {
      throw new IllegalArgumentException(
          "batch_size=" + n.get("batch_size") + " must be an integer in 1.." + MAX_BATCH);
    }
    String start = n.path("start").asText("latest");
    if (!List.of("earliest", "latest").contains(start)) {
      throw new IllegalArgumentException("start='" + start + "' must be earliest or latest "
          + "(where a new group begins; a group that committed offsets goes on from them)");
    }
    String per = n.path("per").asText("record");
    if (!List.of("record", "batch").contains(per)) {
      throw new IllegalArgumentException("per='" + per + "' must be record (an execution per "
          + "record) or batch (an execution per batch of up to batch_size records)");
    }
    return new TriggerSpec(
        name, QUEUE, null, null, topic, group, batch, start, per.equals("batch"), origin, grain);
  }

  private static void check(JsonNode n, String name, Set<String> known) {
    n.fieldNames().forEachRemaining(k -> {
      if (!known.contains(k)) {
        throw new IllegalArgumentException("trigger '" + name + "' has no field '" + k
            + "'; known: " + known.stream().sorted().toList());
      }
    });
  }

  /** As stored and as the API answers it (without the origin, which the API shows beside). */
  public ObjectNode json() {
    ObjectNode o = Json.object().put("name", name).put("kind", kind);
    if (TIMER.equals(kind)) {
      if (schedule instanceof Schedule.Every e) {
        o.put("every", e.text());
      } else if (schedule instanceof Schedule.Cron c) {
        o.put("cron", c.expression());
      }
      if (input != null) {
        o.set("input", input);
      }
    } else {
      o.put("topic", topic)
          .put("group", group)
          .put("batch_size", batchSize)
          .put("start", start)
          .put("per", perBatch ? "batch" : "record");
    }
    if (grain != null) {
      o.put("grain", grain);
    }
    return o.put("origin", origin);
  }

  /** A stored spec, read back. */
  public static TriggerSpec stored(String appId, String name, String json) {
    ObjectNode n = (ObjectNode) Json.stored(json);
    n.remove("kind");
    return parse(appId, name, n);
  }
}
