package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One record on a grain topic (docs/host-agent.md "Records on a grain topic"): the key is the event
 * id, so the latest record of an event in its partition is the event's state; the value is JSON
 * {@code {"flag", "event"?, "data"?, "host"?}}.
 *
 * @param flag    how far the event got
 * @param eventId the record key
 * @param event   the event envelope (grainworker/envelope.py); present on {@code new} and
 *                {@code processing}, null otherwise
 * @param data    the metadata of the data the handling instance wrote; non-empty only on {@code data}
 * @param host    the host agent that wrote the record ("" when a frontend wrote it)
 */
public record ConditionFlag(
    Flag flag, String eventId, ObjectNode event, List<DataMetadata> data, String host) {

  /** The flag values, in the order an event goes through them. */
  public enum Flag {
    /** An event to process: the owner of the partition puts it into the grain's local queue. */
    NEW,
    /** A backup of an event delivered locally; processed only by a host recovering the partition. */
    PROCESSING,
    /** The data the handling instance wrote is durable in the global data layer (§4.3). */
    DATA,
    /** The instance that handled the event finished. */
    FINISHED;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Flag parse(String wire) {
      for (Flag f : values()) {
        if (f.wireName().equals(wire)) {
          return f;
        }
      }
      throw new IllegalArgumentException(
          "unknown flag '" + wire + "': expected new, processing, data or finished");
    }
  }

  /** The mapper of the records' JSON (and of the envelopes they carry). */
  public static final ObjectMapper JSON = new ObjectMapper();

  public ConditionFlag {
    if (eventId == null || eventId.isEmpty()) {
      throw new IllegalArgumentException("a condition flag needs the event id as its key");
    }
    if ((flag == Flag.NEW || flag == Flag.PROCESSING) && event == null) {
      throw new IllegalArgumentException(
          flag.wireName() + " record of event " + eventId + " needs the event envelope");
    }
    data = data == null ? List.of() : List.copyOf(data);
    host = host == null ? "" : host;
  }

  /** A {@code new} record for {@code event} (what a frontend or a forwarding agent writes). */
  public static ConditionFlag newEvent(ObjectNode event, String host) {
    return new ConditionFlag(Flag.NEW, idOf(event), event, List.of(), host);
  }

  public static ConditionFlag processing(ObjectNode event, String host) {
    return new ConditionFlag(Flag.PROCESSING, idOf(event), event, List.of(), host);
  }

  public static ConditionFlag data(String eventId, List<DataMetadata> data, String host) {
    return new ConditionFlag(Flag.DATA, eventId, null, data, host);
  }

  public static ConditionFlag finished(String eventId, String host) {
    return new ConditionFlag(Flag.FINISHED, eventId, null, List.of(), host);
  }

  /** The record value: compact JSON. */
  public byte[] value() {
    ObjectNode v = JSON.createObjectNode();
    v.put("flag", flag.wireName());
    if (event != null) {
      v.set("event", event);
    }
    if (flag == Flag.DATA) {
      ArrayNode items = v.putArray("data");
      for (DataMetadata d : data) {
        items
            .addObject()
            .put("kind", d.kind().wireName())
            .put("name", d.name())
            .put("size", d.size())
            .put("sha256", d.sha256());
      }
    }
    if (!host.isEmpty()) {
      v.put("host", host);
    }
    return toBytes(v);
  }

  /** The event envelope as the bytes a grain worker reads from its local queue. */
  public byte[] eventBytes() {
    if (event == null) {
      throw new IllegalStateException(
          flag.wireName() + " record of event " + eventId + " carries no event");
    }
    return toBytes(event);
  }

  /**
   * Parse a record; throws IllegalArgumentException naming what is wrong (not JSON, unknown flag, an
   * event whose id is not the key, ...).
   */
  public static ConditionFlag parse(String key, byte[] value) {
    if (value == null) {
      throw new IllegalArgumentException("record of event " + key + " has no value");
    }
    JsonNode root;
    try {
      root = JSON.readTree(value);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "record of event " + key + " is not JSON: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("record of event " + key + " is not a JSON object");
    }
    Flag flag = Flag.parse(root.path("flag").asText(""));
    ObjectNode event = null;
    if (root.has("event")) {
      if (!root.get("event").isObject()) {
        throw new IllegalArgumentException(
            "record of event " + key + ": \"event\" is not an object");
      }
      event = (ObjectNode) root.get("event");
      if (!event.path("id").asText("").equals(key)) {
        throw new IllegalArgumentException("record key " + key + " is not the id of its event ("
            + event.path("id").asText("(none)") + ")");
      }
    }
    List<DataMetadata> data = new ArrayList<>();
    for (JsonNode d : root.path("data")) {
      try {
        data.add(new DataMetadata(
            DataKind.parse(d.path("kind").asText("")),
            d.path("name").asText(""),
            d.path("size").asLong(-1),
            d.path("sha256").asText("")));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "record of event " + key + ": bad data item " + d + ": " + e.getMessage(), e);
      }
    }
    return new ConditionFlag(flag, key, event, data, root.path("host").asText(""));
  }

  static String idOf(ObjectNode event) {
    String id = event == null ? "" : event.path("id").asText("");
    if (id.isEmpty()) {
      throw new IllegalArgumentException("event has no \"id\": " + event);
    }
    return id;
  }

  /** Compact JSON bytes of a tree (the form records and local queue messages carry). */
  public static byte[] toBytes(JsonNode node) {
    try {
      return JSON.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e); // a tree of JSON nodes always serialises
    }
  }

  @Override
  public String toString() {
    return flag.wireName() + "(" + eventId + (host.isEmpty() ? "" : " by " + host) + ")";
  }
}
