package sand.cluster;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** Cassandra contact points as SAND's settings give them ({@code cassandra.contact}: "host:port[,host:port...]"). */
public final class CassandraContacts {
  /**
   * The longest wait between the driver's attempts to reach a node that went down (its default is 60 s): a node, or
   * the whole ring, back after an outage is used again within this, with no restart (issue 31: one frontend kept
   * answering 502 for about a minute after Cassandra came back).
   */
  public static final Duration RECONNECT_MAX_DELAY = Duration.ofSeconds(5);

  private CassandraContacts() {}

  /**
   * The contact points of a setting ("host:port[,host:port...]", checked by {@code ConfigDef.HOST_PORTS}), left
   * unresolved: a name is looked up when a session is made, not when the setting is read.
   */
  public static List<InetSocketAddress> parse(String setting) {
    return Arrays.stream(setting.split(","))
        .map(String::strip)
        .map(hp -> {
          int colon = hp.lastIndexOf(':');
          int port = Integer.parseInt(hp.substring(colon + 1));
          if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(
                "Cassandra contact point " + hp + " is invalid: port must be 1..65535");
          }
          return InetSocketAddress.createUnresolved(hp.substring(0, colon), port);
        })
        .toList();
  }

  /** The driver takes resolved addresses: each name looked up now (a session is made at start and on recovery). */
  public static List<InetSocketAddress> resolved(List<InetSocketAddress> contacts) {
    return contacts.stream()
        .map(a -> a.isUnresolved() ? new InetSocketAddress(a.getHostString(), a.getPort()) : a)
        .toList();
  }
}
