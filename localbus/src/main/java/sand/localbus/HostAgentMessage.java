package sand.localbus;

/**
 * A message taken from LQ_HA: its payload and the application the bus authenticated as its
 * publisher ({@link #FROM_HOST_AGENT} when the host agent published it itself).
 */
public record HostAgentMessage(String application, byte[] payload) {

  /** The application stamped on a message the host agent published to its own queue. */
  public static final String FROM_HOST_AGENT = "";
}
