package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.HostInfo;
import sand.cluster.HostSchedules;
import sand.cluster.HostSchedules.HostSchedule;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * The operator's say over hosts (docs/operations.md, "Cordon, drain, remove a host"), admin key only, as Kubernetes
 * operators know it: {@code cordon} (nothing new is placed there), {@code drain} (cordon, and its host agent
 * undeploys everything: requests and events move to the other hosts), {@code uncordon}, and {@code DELETE} of a dead
 * host (its row and its state of every application go, so nothing lists it). Each change reaches the host agent at
 * once on {@code sand.control} (a {@code host} event), and at its next reconcile (30 s) if that is lost.
 */
final class HostsAdmin {
  private static final Logger LOG = LoggerFactory.getLogger(HostsAdmin.class);
  private static final Duration EVER = Duration.ofDays(365L * 100);

  private final ClusterStore store;
  private final ControlEvents control;
  private final Clock clock;
  private final Duration hostMaxAge;

  HostsAdmin(ClusterStore store, ControlEvents control, Clock clock, Duration hostMaxAge) {
    this.store = store;
    this.control = control;
    this.clock = clock;
    this.hostMaxAge = hostMaxAge;
  }

  void routes(Router r) {
    r.add(
        "POST",
        "/api/v1/admin/hosts/{host}/cordon",
        false,
        c -> set(AdminHandler.admin(c), "cordon"));
    r.add(
        "POST",
        "/api/v1/admin/hosts/{host}/drain",
        false,
        c -> set(AdminHandler.admin(c), "drain"));
    r.add(
        "POST", "/api/v1/admin/hosts/{host}/uncordon", false, c -> uncordon(AdminHandler.admin(c)));
    r.add("DELETE", "/api/v1/admin/hosts/{host}", false, c -> remove(AdminHandler.admin(c)));
  }

  /** The schedule fields of a host in GET /api/v1/admin/hosts. */
  static void schedule(ObjectNode o, HostSchedule s, List<ObjectNode> sandboxes) {
    if (s == null) {
      o.put("schedule", "schedulable");
      return;
    }
    o.put("schedule", s.state())
        .put("schedule_reason", s.reason())
        .put("schedule_since", AppStatus.iso(s.since()));
    if (HostSchedules.DRAINING.equals(
        s.state())) { // drained: nothing runs or starts there any more
      o.put(
          "drained",
          sandboxes.stream()
              .map(b -> b.path("status").asText())
              .noneMatch(
                  st -> HostAgentTables.serves(st) || st.equals(HostAgentTables.HOST_DEPLOYING)));
    }
  }

  private Reply set(Call call, String verb) {
    HostInfo h = known(call.param("host"));
    String state = verb.equals("drain") ? HostSchedules.DRAINING : HostSchedules.CORDONED;
    String reason = AdminHandler.reason(call, verb);
    store.hostSchedules().set(new HostSchedule(h.hostId(), state, reason, clock.instant()));
    control.publishHost(h.hostId());
    LOG.warn("[admin] host {} {} by {}: {}", h.hostId(), state, AdminHandler.who(call), reason);
    return Reply.ok(Json.object()
        .put("host", h.hostId())
        .put("schedule", state)
        .put("reason", reason)
        .put(
            "next",
            state.equals(HostSchedules.DRAINING)
                ? "its applications are being undeployed there; GET /api/v1/admin/hosts says drained: true when done"
                : "nothing new is placed there; what runs there keeps running"));
  }

  private Reply uncordon(Call call) {
    String host = call.param("host");
    if (store.hostSchedules().of(host).isEmpty()) {
      known(host); // an unknown host is a 404, a known schedulable one a no-op
    }
    store.hostSchedules().clear(host);
    control.publishHost(host);
    LOG.warn("[admin] host {} uncordoned by {}", host, AdminHandler.who(call));
    return Reply.ok(Json.object()
        .put("host", host)
        .put("schedule", "schedulable")
        .put("next", "applications deployed on every host are deployed there again at once"));
  }

  private Reply remove(Call call) {
    // at quorum: a heartbeat read from one replica while a Cassandra node was down made a live host
    // look dead
    HostInfo h = known(call.param("host"), store.liveHostsAtQuorum(clock.instant(), EVER));
    Instant now = clock.instant();
    if (h.heartbeat() != null && h.heartbeat().isAfter(now.minus(hostMaxAge))) {
      throw new ApiException(
          409,
          "conflict",
          "host " + h.hostId() + " is alive (heartbeat "
              + Duration.between(h.heartbeat(), now).toMillis()
              + " ms ago): drain it, then stop its host agent (a clean stop leaves the cluster by itself); "
              + "DELETE is for a host that died");
    }
    store.forgetHost(h.hostId());
    LOG.warn(
        "[admin] dead host {} removed from the cluster state by {}",
        h.hostId(),
        AdminHandler.who(call));
    return Reply.ok(Json.object().put("host", h.hostId()).put("removed", true));
  }

  private HostInfo known(String host) {
    return known(host, store.liveHosts(clock.instant(), EVER));
  }

  private static HostInfo known(String host, List<HostInfo> all) {
    Optional<HostInfo> h = all.stream().filter(x -> x.hostId().equals(host)).findFirst();
    return h.orElseThrow(() -> ApiException.notFound("no host '" + host + "'; the cluster has "
        + (all.isEmpty()
            ? "none"
            : all.stream().map(HostInfo::hostId).collect(Collectors.joining(", ")))));
  }
}
