package sand.hostagent;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Grain workers restarting with new code in a running sandbox (an update, {@code sand update}), and what each said:
 * "reloaded" once its new code loaded, or why it did not ("load-failed", "crash-looping"). One swap per application
 * at a time (the application's reconciles are serialised).
 */
final class GrainWorkerSwaps {
  private final Map<String, Map<String, CompletableFuture<String>>> pending =
      new ConcurrentHashMap<>();

  /** Start listening for the workers of {@code grains} of {@code appId}: call before they are told to restart. */
  Map<String, CompletableFuture<String>> expect(String appId, Set<String> grains) {
    Map<String, CompletableFuture<String>> waits = new ConcurrentHashMap<>();
    grains.forEach(g -> waits.put(g, new CompletableFuture<>()));
    pending.put(appId, waits);
    return waits;
  }

  /**
   * A supervisor's or worker's report. True when it is about a worker being swapped: then it is the swap's outcome,
   * not a change of the worker's health. An "exited" of the old worker is not an outcome.
   */
  boolean heard(String appId, String grain, String state, String message) {
    CompletableFuture<String> outcome = pending.getOrDefault(appId, Map.of()).get(grain);
    if (outcome == null) {
      return false;
    }
    switch (state) {
      case "reloaded" -> outcome.complete(null);
      case "load-failed", "crash-looping" -> outcome.complete(message);
      default -> {}
    }
    return true;
  }

  /** Null when every worker runs its new code within {@code timeout}; otherwise what went wrong, per grain. */
  String await(Map<String, CompletableFuture<String>> waits, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, CompletableFuture<String>> e : new TreeMap<>(waits).entrySet()) {
      try {
        String problem =
            e.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (problem != null) {
          problems.add(problem);
        }
      } catch (TimeoutException x) {
        problems.add("grain worker " + e.getKey() + " did not say it runs the new code within "
            + timeout.toSeconds() + " s");
      } catch (ExecutionException x) {
        problems.add(String.valueOf(x.getCause()));
      }
    }
    return problems.isEmpty() ? null : String.join("; ", problems);
  }

  void done(String appId) {
    pending.remove(appId);
  }
}
