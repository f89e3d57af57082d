package sand.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * What each host agent last said of its load (issue 33: what placement by load reads), written with its heartbeat.
 * A report lives {@link #TTL}: a host that stopped reporting drops out by itself.
 */
public interface HostLoads {
  Duration TTL = Duration.ofSeconds(30);

  /**
   * One host's report.
   *
   * @param load a JSON object as the host agent wrote it (docs/operations.md "Host load")
   * @param at   when it was measured
   */
  record HostLoad(String hostId, String load, Instant at) {}

  void report(HostLoad load);

  /** The latest report of every host that reported within {@link #TTL}, by host id. */
  Map<String, HostLoad> all();
}
