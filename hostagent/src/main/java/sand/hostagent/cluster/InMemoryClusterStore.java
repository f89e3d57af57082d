package sand.hostagent.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/** A {@link ClusterStore} in memory, for unit tests (log TTLs are not enforced). */
public class InMemoryClusterStore implements ClusterStore {
  private final Map<String, HostInfo> hosts = new ConcurrentHashMap<>();
  private final Map<String, ApplicationRecord> apps = new ConcurrentHashMap<>();
  private final Map<String, Map<String, GrainCode>> code = new ConcurrentHashMap<>();
  private final Map<String, AppHostState> states = new ConcurrentHashMap<>();
  private final List<LogLine> logs = new ArrayList<>();

  @Override
  public void upsertHost(HostInfo host) {
    hosts.put(host.hostId(), host);
  }

  @Override
  public void heartbeat(String hostId, Instant now) {
    hosts.computeIfPresent(hostId, (k, h) -> new HostInfo(h.hostId(), h.busAddress(), h.dataAddress(),
        h.capacity(), h.started(), now));
  }

  @Override
  public List<HostInfo> liveHosts(Instant now, Duration maxAge) {
    return hosts.values().stream().filter(h -> h.heartbeat().isAfter(now.minus(maxAge)))
        .sorted(Comparator.comparing(HostInfo::hostId)).toList();
  }

  @Override
  public void removeHost(String hostId) {
    hosts.remove(hostId);
  }

  @Override
  public void putApplication(ApplicationRecord app, Map<String, GrainCode> grainCode) {
    apps.put(app.appId(), app);
    code.put(app.appId(), Map.copyOf(grainCode));
  }

  @Override
  public Optional<ApplicationRecord> application(String appId) {
    return Optional.ofNullable(apps.get(appId));
  }

  @Override
  public Map<String, GrainCode> applicationCode(String appId) {
    return code.getOrDefault(appId, Map.of());
  }

  @Override
  public void setAppHostState(String appId, String hostId, String status, String error, Instant now) {
    states.put(appId + "\0" + hostId, new AppHostState(appId, hostId, status, error, now));
  }

  @Override
  public List<AppHostState> appHostStates(String appId) {
    return states.values().stream().filter(s -> s.appId().equals(appId))
        .sorted(Comparator.comparing(AppHostState::hostId)).toList();
  }

  @Override
  public synchronized void appendLogs(List<LogLine> lines, Duration ttl) {
    logs.addAll(lines);
  }

  @Override
  public synchronized List<LogLine> logs(String executionId) {
    return logs.stream().filter(l -> l.executionId().equals(executionId))
        .sorted(Comparator.comparingLong(LogLine::tsNanos).thenComparingInt(LogLine::seq)).toList();
  }

  @Override
  public void close() {}
}
