package sand.frontend;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.AppHostState;
import sand.cluster.HostAgentTables.ApplicationRecord;

/**
 * An application's status from its desired state and the per-host states the agents report
 * (app_hosts). A deploy resets the rows of its target hosts to 'deploying' first (app_hosts has no
 * version), so a row that says 'deployed' is about this deploy.
 *
 * @param status undeployed | deploying | deployed | failed | undeploying
 * @param error  what failed (per host), or why nothing happens; null when fine
 */
public record AppStatus(String status, String error, List<String> targets) {

  /**
   * @param live the ids of the live hosts: the targets when the application names none, and for an
   *             undeploy the only hosts that still matter (a dead host runs nothing)
   */
  public static AppStatus of(ApplicationRecord app, List<AppHostState> states, Set<String> live) {
    Map<String, AppHostState> byHost =
        states.stream().collect(Collectors.toMap(AppHostState::hostId, s -> s, (a, b) -> a));
    if (!HostAgentTables.DESIRED_DEPLOYED.equals(app.desired())) {
      boolean stillRunning = states.stream()
          .anyMatch(s -> live.contains(s.hostId())
              && (HostAgentTables.serves(s.status())
                  || HostAgentTables.HOST_DEPLOYING.equals(s.status())));
      return new AppStatus(stillRunning ? "undeploying" : "undeployed", null, List.of());
    }
    List<String> targets = app.hosts().isEmpty() ? List.copyOf(live) : app.hosts();
    if (targets.isEmpty()) {
      return new AppStatus(
          "deploying",
          "no live host agent to deploy on; start one (deploy/hostagent.sh start)",
          targets);
    }
    List<String> failures = new ArrayList<>();
    int deployed = 0;
    for (String h : targets) {
      AppHostState s = byHost.get(h);
      if (s == null) {
        continue;
      }
      if (HostAgentTables.HOST_FAILED.equals(s.status())) {
        failures.add(h + ": " + s.error());
      } else if (HostAgentTables.serves(s.status())) {
        deployed++; // an idle host (scaled to zero) serves it too
      }
    }
    if (!failures.isEmpty()) {
      return new AppStatus("failed", String.join("\n", failures), targets);
    }
    // Deployed hosts may still say something is wrong there (a crash-looping grain worker).
    List<String> warnings = new ArrayList<>();
    for (String h : targets) {
      AppHostState s = byHost.get(h);
      if (s != null
          && HostAgentTables.HOST_DEPLOYED.equals(s.status())
          && s.error() != null
          && !s.error().isBlank()) {
        warnings.add(h + ": " + s.error());
      }
    }
    return new AppStatus(
        deployed == targets.size() ? "deployed" : "deploying",
        warnings.isEmpty() ? null : String.join("\n", warnings),
        targets);
  }

  static String iso(Instant t) {
    return t == null ? null : t.toString();
  }
}
