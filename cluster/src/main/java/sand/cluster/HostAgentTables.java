package sand.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The host agents' part of the cluster state (docs/host-agent.md, "Cassandra tables"): live hosts, the
 * applications to run and their code, the per-host state of each application, execution logs, the cluster
 * secret. A host agent reads and writes nothing else; frontends read it too.
 */
public interface HostAgentTables extends SecretTables {

  /** {@code applications.desired}: what the frontends ask of the host agents. */
  String DESIRED_DEPLOYED = "deployed";

  String DESIRED_UNDEPLOYED = "undeployed";

  /**
   * {@code app_hosts.status}: how an application is on one host. The host agent writes them; a frontend writes
   * {@link #HOST_DEPLOYING} when it asks for a deploy, so a status read right after shows it.
   */
  String HOST_DEPLOYING = "deploying";

  String HOST_DEPLOYED = "deployed";
  String HOST_FAILED = "failed";
  String HOST_UNDEPLOYED = "undeployed";
  String HOST_STOPPED = "stopped";

  /**
   * Deployed, its sandbox stopped after {@code scale_to_zero_after_s} without an event: the host still takes the
   * application's events (its queues and partitions stay) and starts the sandbox at the next one.
   */
  String HOST_IDLE = "idle";

  /** Whether a host in {@code status} serves the application's requests: deployed, or idle (it starts again). */
  static boolean serves(String status) {
    return HOST_DEPLOYED.equals(status) || HOST_IDLE.equals(status);
  }

  /**
   * A host agent as the cluster sees it.
   *
   * @param gateAddress host:port of its gate for frontends (contracts gate.thrift), "" when it has none
   * @param capacity the host's CPUs
   * @param memoryMb the host's memory (what its sandboxes' memory limits are measured against), 0 when unknown
   */
  record HostInfo(
      String hostId,
      String busAddress,
      String dataAddress,
      String gateAddress,
      int capacity,
      int memoryMb,
      Instant started,
      Instant heartbeat) {}

  /**
   * An application as the frontend stored it. settings is JSON (see docs/host-agent.md); desired is
   * {@link #DESIRED_DEPLOYED} or {@link #DESIRED_UNDEPLOYED}; hosts lists the hosts to run it on (empty = every live host).
   */
  record ApplicationRecord(
      String appId,
      String name,
      String owner,
      String workflow,
      String requirements,
      String settings,
      int version,
      String desired,
      List<String> hosts) {
    public boolean wantedOn(String hostId) {
      return DESIRED_DEPLOYED.equals(desired) && (hosts.isEmpty() || hosts.contains(hostId));
    }
  }

  /** One grain code blob: Python source ("py") or a zip archive ("zip"). */
  record GrainCode(String resource, byte[] code, String kind, String sha256) {}

  /** The state of an application on one host. */
  record AppHostState(String appId, String hostId, String status, String error, Instant updated) {}

  /** One log line of a grain instance. */
  record LogLine(
      String executionId, long tsNanos, int seq, String grain, String level, String text) {}

  /**
   * The cluster secret that frontends and host agents share (the key of {@link sand.contracts.ExecutionTag}):
   * created at random by whichever process asks first, the same bytes for every later caller.
   */
  byte[] clusterSecret();

  /** The cluster secret's rows: the current one, and the next or the previous one while it is rotated. */
  ClusterSecrets clusterSecrets();

  void upsertHost(HostInfo host);

  void heartbeat(String hostId, Instant now);

  /** Hosts whose last heartbeat is younger than {@code maxAge} at {@code now}. */
  List<HostInfo> liveHosts(Instant now, Duration maxAge);

  /**
   * {@link #liveHosts}, read at quorum only: never answered by fewer replicas while a Cassandra node is down (a
   * stale heartbeat would make a live host look dead). What removing a host reads; it fails rather than guesses.
   */
  default List<HostInfo> liveHostsAtQuorum(Instant now, Duration maxAge) {
    return liveHosts(now, maxAge);
  }

  void removeHost(String hostId);

  /** What operators said of hosts: cordoned, draining. */
  HostSchedules hostSchedules();

  /** What host agents last said of their load. */
  HostLoads hostLoads();

  /** Remove the state of one application on one host. */
  void deleteAppHostState(String appId, String hostId);

  /**
   * Remove a host from the cluster state (a dead or retired host an operator removes): its row, its schedule and its
   * state of every application, so nothing lists it any more. A host agent that runs again registers anew.
   */
  default void forgetHost(String hostId) {
    removeHost(hostId);
    hostSchedules().clear(hostId);
    for (ApplicationRecord app : applications()) {
      deleteAppHostState(app.appId(), hostId);
    }
  }

  Optional<ApplicationRecord> application(String appId);

  /** Every application (the cluster holds few; agents reconcile against this at start-up). */
  List<ApplicationRecord> applications();

  Map<String, GrainCode> applicationCode(String appId);

  /**
   * The hosts the cluster's scheduler places an application on (docs/operations.md "Elastic placement"): only the
   * hosts column, so a deploy or undeploy written meanwhile keeps its version and desired state.
   */
  void setPlacement(String appId, List<String> hosts);

  void setAppHostState(String appId, String hostId, String status, String error, Instant now);

  List<AppHostState> appHostStates(String appId);

  /** Store log lines with a time to live. */
  void appendLogs(List<LogLine> lines, Duration ttl);

  List<LogLine> logs(String executionId);

  /**
   * At most {@code limit} of an execution's log lines after (ts, seq), oldest first: a page read from the store
   * without reading the execution's other lines (an execution may have very many).
   */
  default List<LogLine> logs(String executionId, long afterTsNanos, int afterSeq, int limit) {
    return logs(executionId).stream()
        .filter(
            l -> l.tsNanos() > afterTsNanos || (l.tsNanos() == afterTsNanos && l.seq() > afterSeq))
        .limit(limit)
        .toList();
  }
}
