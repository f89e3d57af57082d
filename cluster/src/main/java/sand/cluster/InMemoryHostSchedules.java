package sand.cluster;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** {@link HostSchedules} in memory (tests). */
final class InMemoryHostSchedules implements HostSchedules {
  private final Map<String, HostSchedule> schedules = new ConcurrentHashMap<>();

  @Override
  public Map<String, HostSchedule> all() {
    return new TreeMap<>(schedules);
  }

  @Override
  public void set(HostSchedule s) {
    schedules.put(s.hostId(), s);
  }

  @Override
  public void clear(String hostId) {
    schedules.remove(hostId);
  }
}
