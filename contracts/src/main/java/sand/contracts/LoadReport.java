package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A host's load as its host agent reports it with each heartbeat (docs/operations.md "Host load"), and as the
 * scheduler and the frontends read it back: one JSON object in the cluster state per host.
 *
 * @param cpuPercent        the host's CPU use, 0..100; negative when the JVM cannot tell
 * @param memoryMb          the host's memory
 * @param memoryAvailableMb what the kernel could give without swapping (MemAvailable)
 * @param sandboxes         sandboxes running
 * @param idleApplications  applications deployed here with their sandbox scaled to zero
 * @param apps              the most loaded applications here, by id
 */
public record LoadReport(
    double cpuPercent,
    long memoryMb,
    long memoryAvailableMb,
    int sandboxes,
    int idleApplications,
    Map<String, AppLoad> apps) {

  /**
   * One application on one host.
   *
   * @param queued   events waiting in its local queues
   * @param inFlight events delivered here and not finished
   * @param events   events put into its local queues since its sandbox started here (a counter: a change means
   *                 it was not idle, even when each event finished between two reports)
   * @param idle     its sandbox is scaled to zero here
   */
  public record AppLoad(int queued, int inFlight, long events, boolean idle) {
    public int busy() {
      return queued + inFlight;
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AppLoad NONE = new AppLoad(0, 0, 0, false);

  /** The application's load here; zeros when it is not reported. */
  public AppLoad app(String appId) {
    return apps.getOrDefault(appId, NONE);
  }

  public String toJson() {
    ObjectNode o = JSON.createObjectNode();
    if (cpuPercent >= 0) {
      o.put("cpu_percent", Math.round(cpuPercent * 10) / 10.0);
    }
    o.put("memory_mb", memoryMb)
        .put("memory_available_mb", memoryAvailableMb)
        .put("sandboxes", sandboxes)
        .put("idle_applications", idleApplications);
    ObjectNode byApp = o.putObject("apps");
    apps.forEach((id, a) -> byApp
        .putObject(id)
        .put("queued", a.queued())
        .put("in_flight", a.inFlight())
        .put("events", a.events())
        .put("idle", a.idle()));
    return o.toString();
  }

  /** A report as stored; what does not parse reads as an empty report (CPU unknown). */
  public static LoadReport parse(String json) {
    JsonNode o;
    try {
      o = json == null ? null : JSON.readTree(json);
    } catch (JsonProcessingException e) {
      o = null;
    }
    if (o == null || !o.isObject()) {
      return new LoadReport(-1, 0, 0, 0, 0, Map.of());
    }
    Map<String, AppLoad> apps = new LinkedHashMap<>();
    o.path("apps")
        .fields()
        .forEachRemaining(e -> apps.put(
            e.getKey(),
            new AppLoad(
                e.getValue().path("queued").asInt(0),
                e.getValue().path("in_flight").asInt(0),
                e.getValue().path("events").asLong(0),
                e.getValue().path("idle").asBoolean(false))));
    return new LoadReport(
        o.has("cpu_percent") ? o.path("cpu_percent").asDouble(-1) : -1,
        o.path("memory_mb").asLong(0),
        o.path("memory_available_mb").asLong(0),
        o.path("sandboxes").asInt(0),
        o.path("idle_applications").asInt(0),
        Map.copyOf(apps));
  }
}
