package sand.localbus;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A message taken from LQ_HA: its payload and the application the bus authenticated as its
 * publisher ({@link #FROM_HOST_AGENT} when the host agent published it itself).
 */
public record HostAgentMessage(String application, byte[] payload) {

  /** The application stamped on a message the host agent published to its own queue. */
  public static final String FROM_HOST_AGENT = "";

  /** As the Thrift answer of {@code pollHostAgent} carries them (both the blocking and the long-poll server). */
  static List<sand.localbus.thrift.HostAgentMessage> toThrift(List<HostAgentMessage> messages) {
    List<sand.localbus.thrift.HostAgentMessage> out = new ArrayList<>(messages.size());
    for (HostAgentMessage m : messages) {
      // Fields, not the constructor: the generated constructor copies the payload.
      sand.localbus.thrift.HostAgentMessage t = new sand.localbus.thrift.HostAgentMessage();
      t.application = m.application();
      t.payload = ByteBuffer.wrap(m.payload());
      out.add(t);
    }
    return out;
  }
}
