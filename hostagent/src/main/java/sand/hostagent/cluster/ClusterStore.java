package sand.hostagent.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Cluster state shared by host agents and frontends (docs/host-agent.md, "Cassandra tables"): live hosts,
 * deployed applications and their code, the per-host state of each application, execution logs.
 */
public interface ClusterStore extends AutoCloseable {

  /** A host agent as the cluster sees it. */
  record HostInfo(String hostId, String busAddress, String dataAddress, int capacity, Instant started,
                  Instant heartbeat) {}

  /** An application as the frontend stored it. settings is JSON (see docs/host-agent.md). */
  record ApplicationRecord(String appId, String name, String owner, String workflow, String requirements,
                           String settings, int version) {}

  /** One grain code blob: Python source ("py") or a zip archive ("zip"). */
  record GrainCode(String resource, byte[] code, String kind, String sha256) {}

  /** The state of an application on one host. */
  record AppHostState(String appId, String hostId, String status, String error, Instant updated) {}

  /** One log line of a grain instance. */
  record LogLine(String executionId, long tsNanos, int seq, String grain, String level, String text) {}

  void upsertHost(HostInfo host);

  void heartbeat(String hostId, Instant now);

  /** Hosts whose last heartbeat is younger than {@code maxAge} at {@code now}. */
  List<HostInfo> liveHosts(Instant now, Duration maxAge);

  void removeHost(String hostId);

  void putApplication(ApplicationRecord app, Map<String, GrainCode> code);

  Optional<ApplicationRecord> application(String appId);

  Map<String, GrainCode> applicationCode(String appId);

  void setAppHostState(String appId, String hostId, String status, String error, Instant now);

  List<AppHostState> appHostStates(String appId);

  /** Store log lines with a time to live. */
  void appendLogs(List<LogLine> lines, Duration ttl);

  List<LogLine> logs(String executionId);

  @Override
  void close();
}
