package sand.frontend;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import sand.hostagent.cluster.ClusterStore;
import sand.hostagent.cluster.ClusterStore.AppName;
import sand.hostagent.cluster.ClusterStore.ApplicationRecord;

/**
 * What {@code POST /app/{app}} needs to know about an application, read from the cluster state at most once
 * per {@code maxAge} per application instead of on every request: its id and owner, whether it is deployed,
 * its entry grain (the workflow is parsed here, once) and its request timeout. This frontend forgets an
 * application at once when it changes it (PUT, deploy, undeploy, delete); a change made through another
 * frontend is seen here within {@code maxAge}.
 */
final class AppDirectory {

  /**
   * An application as an invocation needs it; {@code entry} is null when it is not deployed; {@code hosts} are
   * the hosts that report it deployed (where the gate may take its requests).
   */
  record Target(String name, String appId, String owner, String entry, int requestTimeoutS,
                java.util.List<String> hosts) {
    boolean deployed() {
      return entry != null;
    }
  }

  private record Cached(Optional<Target> target, long readAtNanos) {}

  private final ClusterStore store;
  private final long maxAgeNanos;
  private final LongSupplier nanos;
  private final Map<String, Cached> byName = new ConcurrentHashMap<>();

  AppDirectory(ClusterStore store, Duration maxAge, LongSupplier nanos) {
    this.store = store;
    this.maxAgeNanos = maxAge.toNanos();
    this.nanos = nanos;
  }

  /** The application named {@code name}, or empty when nobody holds the name (cached like the rest). */
  Optional<Target> find(String name) {
    long now = nanos.getAsLong();
    Cached c = byName.get(name);
    if (c != null && now - c.readAtNanos() < maxAgeNanos) {
      return c.target();
    }
    Optional<Target> t = read(name);
    byName.put(name, new Cached(t, now));
    return t;
  }

  private Optional<Target> read(String name) {
    Optional<AppName> n = store.appName(name);
    if (n.isEmpty()) {
      return Optional.empty();
    }
    Optional<ApplicationRecord> app = store.application(n.get().appId());
    if (app.isEmpty()) {
      return Optional.empty();
    }
    String entry = "deployed".equals(app.get().desired()) ? Workflow.parse(Json.stored(app.get().workflow())).entry()
        : null;
    java.util.List<String> hosts = entry == null ? java.util.List.of() : store.appHostStates(app.get().appId())
        .stream().filter(h -> "deployed".equals(h.status())).map(ClusterStore.AppHostState::hostId).sorted().toList();
    return Optional.of(new Target(name, app.get().appId(), app.get().owner(), entry, n.get().requestTimeoutS(),
        hosts));
  }

  /** This frontend changed the application: read it again on its next use. */
  void forget(String name) {
    byName.remove(name);
  }
}
