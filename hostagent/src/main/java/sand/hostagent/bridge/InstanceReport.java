package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import sand.contracts.ConditionFlag;
import sand.contracts.DataKind;

/**
 * A grain instance's report on LQ_HA (grainworker/envelope.py): {@code finished} when the instance
 * is done (its outputs, the data it wrote, its logs), {@code sent} for events it sent during its run.
 * Every field is as the grain wrote it: the application it names is checked by the processor against
 * the one the bus stamped.
 *
 * @param outputs events produced, each with {@code "local"}: whether the instance delivered it into a
 *                local queue itself
 * @param data    the items the instance wrote, as (kind, name)
 * @param json    the whole report (logs, timings, pid) for whoever else reads reports
 * @param executionBound whether the host agent knows the report's execution as the one of the event it names, an
 *                event of the report's application in flight here (set by the processor): only then may the
 *                report's log lines go to that execution
 */
public record InstanceReport(
    boolean finished,
    String app,
    String grain,
    String executionId,
    String eventId,
    String frontend,
    String status,
    List<ObjectNode> outputs,
    List<DataItem> data,
    JsonNode json,
    boolean executionBound) {

  /** The statuses grain workers write (grainworker/instance.py, worker.py); any other is refused. */
  public static final Set<String> STATUSES = Set.of("ok", "error", "lost");

  /** Longest grain-written string the host agent puts in its own log. */
  public static final int SHOWN_CHARS = 200;

  /** One item the instance wrote. */
  public record DataItem(DataKind kind, String name) {}

  /**
   * Any LQ_HA message as a JSON object (an instance's report, or a supervisor's "worker" report); an instance's
   * report is then {@link #parse}d. IllegalArgumentException says what is wrong.
   */
  public static JsonNode read(byte[] payload) {
    JsonNode r;
    try {
      r = ConditionFlag.JSON.readTree(payload);
    } catch (IOException e) {
      throw new IllegalArgumentException("report is not JSON: " + e.getMessage(), e);
    }
    if (r == null || !r.isObject()) {
      throw new IllegalArgumentException("report is not a JSON object");
    }
    return r;
  }

  /** An instance's report, read by {@link #read}; IllegalArgumentException says what is wrong. */
  public static InstanceReport parse(JsonNode r) {
    String type = r.path("type").asText("");
    if (!type.equals("finished") && !type.equals("sent")) {
      throw new IllegalArgumentException(
          "report type '" + type + "' is neither 'finished' nor 'sent'");
    }
    List<ObjectNode> outputs = new ArrayList<>();
    for (JsonNode o : r.path("outputs")) {
      if (!o.isObject()
          || o.path("id").asText("").isEmpty()
          || o.path("grain").asText("").isEmpty()) {
        throw new IllegalArgumentException(
            "report output is not an event with an id and a grain: " + cut(o));
      }
      outputs.add((ObjectNode) o);
    }
    List<DataItem> data = new ArrayList<>();
    for (JsonNode d : r.path("data")) {
      if (!d.isArray() || d.size() != 2 || !d.get(1).isTextual()) {
        throw new IllegalArgumentException("report data item is not [kind, name]: " + cut(d));
      }
      try {
        data.add(new DataItem(DataKind.parse(d.get(0).asText()), d.get(1).asText()));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("report data item " + cut(d) + ": " + e.getMessage(), e);
      }
    }
    return new InstanceReport(
        type.equals("finished"),
        r.path("app").asText(""),
        r.path("grain").asText(""),
        r.path("execution_id").asText(""),
        r.path("event_id").asText(""),
        r.path("frontend").asText(""),
        r.path("status").asText(""),
        outputs,
        data,
        r,
        false);
  }

  /** This report, its execution known ({@code true}) or not as the one of its event. */
  public InstanceReport withExecutionBound(boolean bound) {
    return new InstanceReport(
        finished, app, grain, executionId, eventId, frontend, status, outputs, data, json, bound);
  }

  /** A grain-written string as the host agent logs it: at most {@link #SHOWN_CHARS} characters, on one line. */
  public static String shown(String s) {
    if (s == null) {
      return "";
    }
    String t = s.length() > SHOWN_CHARS
        ? s.substring(0, SHOWN_CHARS) + "...(" + s.length() + " chars)"
        : s;
    return t.replace('\n', ' ').replace('\r', ' ');
  }

  private static String cut(JsonNode n) {
    return shown(n.toString());
  }
}
