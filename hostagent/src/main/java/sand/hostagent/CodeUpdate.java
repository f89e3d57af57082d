package sand.hostagent;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.contracts.Workflow;
import sand.hostagent.ApplicationState.Deployed;
import sand.hostagent.sandbox.SandboxException;
import sand.hostagent.sandbox.SandboxManager;

/**
 * The code swap of {@code sand update}: when only .py grains' code changed, the new code goes into the running
 * sandbox, whose supervisor restarts only the workers of the grains running it (events wait in their local queues
 * meanwhile). If a new worker does not load its code, the previous code is put back and its worker restarted with
 * it: the application keeps answering, and this host's state says the update failed, and why.
 */
final class CodeUpdate {
  private static final Logger LOG = LoggerFactory.getLogger(CodeUpdate.class);

  /**
   * What an update left running: the code (resource → kind:sha256), the grains whose workers were restarted, and
   * the error to show (null when the new code runs).
   */
  record Outcome(Map<String, String> runs, Set<String> grains, String error) {}

  private final String hostId;
  private final HostAgentTables store;
  private final SandboxManager sandboxes;
  private final Clock clock;
  private final Duration workersTimeout;
  private final GrainWorkerSwaps swaps = new GrainWorkerSwaps();

  CodeUpdate(
      String hostId,
      HostAgentTables store,
      SandboxManager sandboxes,
      Clock clock,
      Duration workersTimeout) {
    this.hostId = hostId;
    this.store = store;
    this.sandboxes = sandboxes;
    this.clock = clock;
    this.workersTimeout = workersTimeout;
  }

  /** The code as stored, resource → kind:sha256: what tells two versions' code apart. */
  static Map<String, String> fingerprint(Map<String, HostAgentTables.GrainCode> code) {
    Map<String, String> out = new TreeMap<>();
    code.forEach((r, c) -> out.put(r, c.kind() + ":" + c.sha256()));
    return out;
  }

  /**
   * The .py resources whose code is all that changed between what runs here and {@code app} (an update); empty when
   * something else changed (workflow, settings, requirements, a zip resource: a new sandbox) or nothing did (a
   * deploy of the same application again is how a developer asks for a fresh sandbox).
   */
  static Set<String> codeOnlyChange(
      Deployed current, ApplicationRecord app, Map<String, HostAgentTables.GrainCode> code) {
    Map<String, String> next = fingerprint(code);
    if (!current.workflow().equals(app.workflow())
        || !current.settings().equals(String.valueOf(app.settings()))
        || !current.requirements().equals(String.valueOf(app.requirements()))
        || !current.code().keySet().equals(next.keySet())) {
      return Set.of();
    }
    Set<String> changed = new TreeSet<>();
    for (Map.Entry<String, String> e : next.entrySet()) {
      String was = current.code().get(e.getKey());
      if (!was.equals(e.getValue())) {
        if (!was.startsWith("py:") || !e.getValue().startsWith("py:")) {
          return Set.of();
        }
        changed.add(e.getKey());
      }
    }
    return changed;
  }

  /**
   * Swap the new code of {@code changed} resources into the running sandbox; null when there is no sandbox to
   * update (then it is deployed anew). Done with this version either way: a failed update is not tried again (its
   * code would fail the same way) until the next deploy or update.
   */
  Outcome apply(
      ApplicationRecord app,
      Deployed current,
      Map<String, HostAgentTables.GrainCode> code,
      Set<String> changed) {
    String appId = app.appId();
    Set<String> grains = new TreeSet<>();
    Workflow.parse(app.workflow()).grains().forEach((g, resource) -> {
      if (changed.contains(resource) && current.grains().contains(g)) {
        grains.add(g);
      }
    });
    Map<String, byte[]> fresh = new LinkedHashMap<>();
    changed.forEach(r -> fresh.put(r, code.get(r).code()));
    LOG.info(
        "[host {} app {}] version {} changes only the code of {}: restarting grain workers {} in the running "
            + "sandbox",
        hostId,
        appId,
        app.version(),
        changed,
        grains);
    store.setAppHostState(appId, hostId, HostAgentTables.HOST_DEPLOYING, null, clock.instant());
    String failure;
    try {
      Map<String, CompletableFuture<String>> waits = swaps.expect(appId, grains);
      Map<String, byte[]> previous;
      try {
        previous = sandboxes.swapCode(appId, fresh, grains);
      } catch (SandboxException e) {
        LOG.warn(
            "[host {} app {}] cannot update the running sandbox ({}); deploying it anew",
            hostId,
            appId,
            e.getMessage());
        return null;
      }
      failure = swaps.await(waits, workersTimeout);
      if (failure != null) {
        LOG.warn(
            "[host {} app {}] the new code of {} does not run ({}); putting the previous code back",
            hostId,
            appId,
            changed,
            failure);
        Map<String, CompletableFuture<String>> back = swaps.expect(appId, grains);
        sandboxes.swapCode(appId, previous, grains);
        String still = swaps.await(back, workersTimeout);
        if (still != null) {
          failure += "; and the previous code did not come back: " + still;
        }
      }
    } catch (SandboxException e) {
      failure = e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = "interrupted";
    } finally {
      swaps.done(appId);
    }
    String error = failure == null
        ? null
        : "the update to version " + app.version() + " failed: " + failure + "; grain(s) " + grains
            + " run their previous code here";
    return new Outcome(failure == null ? fingerprint(code) : current.code(), grains, error);
  }

  /** Record {@code outcome} as this host's state of the application (once the deployer knows what runs). */
  void record(ApplicationRecord app, Outcome outcome) {
    store.setAppHostState(
        app.appId(), hostId, HostAgentTables.HOST_DEPLOYED, outcome.error(), clock.instant());
    LOG.info(
        "[host {} app {}] {}",
        hostId,
        app.appId(),
        outcome.error() == null
            ? "updated to version " + app.version() + ": grain workers " + outcome.grains()
                + " run the new code"
            : outcome.error());
  }

  /**
   * A supervisor's or worker's report. True when it is about a worker being swapped: then it is the swap's outcome,
   * not a change of the worker's health.
   */
  boolean heard(String appId, String grain, String state, String message) {
    return swaps.heard(appId, grain, state, message);
  }
}
