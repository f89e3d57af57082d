package sand.cluster;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** {@link HostLoads} in memory (tests): the latest report of each host, never aged (Cassandra's TTL ages them). */
final class InMemoryHostLoads implements HostLoads {
  private final Map<String, HostLoad> loads = new ConcurrentHashMap<>();

  @Override
  public void report(HostLoad load) {
    loads.put(load.hostId(), load);
  }

  @Override
  public Map<String, HostLoad> all() {
    return new TreeMap<>(loads);
  }
}
