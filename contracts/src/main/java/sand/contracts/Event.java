package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.List;

/**
 * The event envelope (docs/host-agent.md "The event envelope"; the Python side is grainworker/envelope.py, and
 * both are checked against the same examples in contracts/src/test/resources/envelope): one JSON object per
 * event, on local queues, in Kafka records and in LQ_HA reports.
 *
 * <pre>
 * {"id", "execution_id", "app", "grain", "from", "frontend", "value", "sent_ns", "tag", "trace"}
 * </pre>
 *
 * <p>A typed view over the JSON object the host agent and frontend already hold: reading a field costs a hash
 * lookup, and nothing is copied. {@link #trace} appends to the event's {@link Trace}.
 */
public final class Event {
  public static final String ID = "id";
  public static final String EXECUTION_ID = "execution_id";
  public static final String APP = "app";
  public static final String GRAIN = "grain";
  public static final String FROM = "from";
  public static final String FRONTEND = "frontend";
  public static final String VALUE = "value";
  public static final String SENT_NS = "sent_ns";
  public static final String TAG = "tag";
  public static final String TRACE = "trace";
  /** The grain name that means "the workflow's result": an output to it goes to the frontend. */
  public static final String END = "end";
  /**
   * The error type of an end the host agent gives for an event it will never run again (it was in flight at each of
   * its agent's last deaths, docs/security.md): retrying it would start the crash loop anew.
   */
  public static final String ERROR_POISON = "Poison";

  /** Every field, in the order they are written. */
  public static final List<String> FIELDS =
      List.of(ID, EXECUTION_ID, APP, GRAIN, FROM, FRONTEND, VALUE, SENT_NS, TAG, TRACE);
  /** Fields an event must have to be handled. */
  static final List<String> REQUIRED = List.of(ID, EXECUTION_ID, APP, GRAIN, FRONTEND, VALUE);

  public static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final ObjectNode json;

  private Event(ObjectNode json) {
    this.json = json;
  }

  /** A view of {@code json}; IllegalArgumentException names a missing or mistyped field. */
  public static Event of(JsonNode json) {
    if (json == null || !json.isObject()) {
      throw new IllegalArgumentException("an event must be a JSON object");
    }
    for (String f : REQUIRED) {
      JsonNode v = json.get(f);
      if (v == null || (!f.equals(VALUE) && !v.isTextual())) {
        throw new IllegalArgumentException(
            "event field '" + f + "' is " + (v == null ? "missing" : "not a string"));
      }
    }
    JsonNode trace = json.get(TRACE);
    if (trace != null && !trace.isArray()) {
      throw new IllegalArgumentException("event field 'trace' must be a list");
    }
    return new Event((ObjectNode) json);
  }

  public static Event parse(byte[] bytes) {
    try {
      return of(JSON.readTree(bytes));
    } catch (IOException e) {
      throw new IllegalArgumentException("an event must be JSON: " + e.getMessage(), e);
    }
  }

  /** A request entering the platform at {@code frontend} for {@code app}'s entry grain (Figure 4 step 0). */
  public static Event request(
      String id,
      String executionId,
      String app,
      String entryGrain,
      String frontend,
      JsonNode value,
      long sentNs,
      String tag) {
    ObjectNode e = NODES.objectNode();
    e.put(ID, id)
        .put(EXECUTION_ID, executionId)
        .put(APP, app)
        .put(GRAIN, entryGrain)
        .put(FROM, "")
        .put(FRONTEND, frontend);
    e.set(VALUE, value);
    e.put(SENT_NS, sentNs).put(TAG, tag);
    e.putArray(TRACE);
    return new Event(e);
  }

  public String id() {
    return json.get(ID).asText();
  }

  public String executionId() {
    return json.get(EXECUTION_ID).asText();
  }

  public String app() {
    return json.get(APP).asText();
  }

  public String grain() {
    return json.get(GRAIN).asText();
  }

  public String from() {
    return json.path(FROM).asText("");
  }

  public String frontend() {
    return json.get(FRONTEND).asText();
  }

  public JsonNode value() {
    return json.get(VALUE);
  }

  /** The tag ({@link ExecutionTag}), or null when the event has none. */
  public String tag() {
    JsonNode t = json.get(TAG);
    return t == null || !t.isTextual() ? null : t.asText();
  }

  public boolean toEnd() {
    return END.equals(grain());
  }

  /** The event's trace (empty when it has none). */
  public Trace trace() {
    JsonNode t = json.get(TRACE);
    return new Trace(t instanceof ArrayNode a ? a : NODES.arrayNode());
  }

  /** Append a trace entry {@code [hop, where, t...]} (monotonic nanoseconds); returns this event. */
  public Event trace(String hop, String where, long... times) {
    JsonNode t = json.get(TRACE);
    ArrayNode a = t instanceof ArrayNode arr ? arr : json.putArray(TRACE);
    Trace.append(a, hop, where, times);
    return this;
  }

  /** The JSON object itself (not a copy). */
  public ObjectNode json() {
    return json;
  }

  /** Compact JSON. */
  public byte[] toBytes() {
    try {
      return JSON.writeValueAsBytes(json);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an event tree always serialises", e);
    }
  }

  @Override
  public String toString() {
    return json.toString();
  }
}
