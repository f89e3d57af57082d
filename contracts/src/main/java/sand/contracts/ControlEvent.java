package sand.contracts;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * An application's event on {@code sand.control} (docs/host-agent.md "Control events"), key = its id: "look at this
 * application again". Frontends send them for deploys and undeploys, the scheduler for a new placement; host agents
 * reconcile the application, frontends forget what they cached of it.
 */
public final class ControlEvent {
  public static final String DEPLOY = "deploy";
  public static final String UNDEPLOY = "undeploy";
  public static final String UPDATE = "update";
  private static final ObjectMapper JSON = new ObjectMapper();

  private ControlEvent() {}

  /** The event's value: {@code {"type", "app", "hosts"}} ({@code hosts} null: every live host). */
  public static byte[] application(String type, String appId, List<String> hosts) {
    ObjectNode v = JSON.createObjectNode().put("type", type).put("app", appId);
    if (hosts == null || hosts.isEmpty()) {
      v.putNull("hosts");
    } else {
      hosts.forEach(v.putArray("hosts")::add);
    }
    return v.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }
}
