package sand.frontend.invoke;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.AppName;
import sand.cluster.HostAgentTables;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.SecretBox;
import sand.contracts.ClusterKeys;
import sand.contracts.Workflow;

/**
 * What {@code POST /app/{app}} needs to know about an application, read from the cluster state at most once
 * per {@code maxAge} per application instead of on every request: its id and owner, whether it is deployed,
 * its entry grain (the workflow is parsed here, once), its request timeout and how its endpoint is protected
 * ({@link InvokeAuth.Rule}: a revoked key stops working on other frontends within {@code maxAge} plus one read).
 * This frontend forgets an application at once when it changes it (PUT, deploy, undeploy, delete); a deploy or undeploy made through
 * another frontend at once too ({@link ControlWatcher} reads sand.control), other changes within {@code maxAge}
 * plus one read.
 *
 * <p>Only the first request for a name waits for Cassandra. An entry older than {@code maxAge} is still
 * answered from memory while one read on {@code refresher} replaces it: the CQL round trips of a refresh (name,
 * application, hosts, aliases, the endpoint's rule; 4-5 ms on a loaded host) never land on a request again. An entry
 * older than {@link #IDLE_FACTOR} times {@code maxAge} (an application nobody called meanwhile) is read before it
 * answers, as a first request is.
 */
public final class AppDirectory {
  private static final Logger LOG = LoggerFactory.getLogger(AppDirectory.class);

  /**
   * An application as an invocation needs it; {@code entry} is null when it is not deployed; {@code hosts} are
   * the hosts that report it deployed (where the gate may take its requests); {@code version} is the version it
   * runs, {@code aliases} its aliases by name (read with it: naming one costs no cluster-state read).
   */
  public record Target(
      String name,
      String appId,
      String owner,
      String entry,
      int requestTimeoutS,
      List<String> hosts,
      InvokeAuth.Rule auth,
      int version,
      Map<String, Alias> aliases,
      RetryPolicy retry,
      Set<String> grains) {
    public Target(
        String name,
        String appId,
        String owner,
        String entry,
        int requestTimeoutS,
        List<String> hosts,
        InvokeAuth.Rule auth,
        int version,
        Map<String, Alias> aliases) {
      this(
          name,
          appId,
          owner,
          entry,
          requestTimeoutS,
          hosts,
          auth,
          version,
          aliases,
          RetryPolicy.DEFAULT,
          Set.of());
    }

    public boolean deployed() {
      return entry != null;
    }

    /**
     * This application with its events going to {@code grain} instead of its entry (a trigger that starts at a
     * state of the workflow); empty when the workflow has no such grain (any more). Null: the entry.
     */
    public Optional<Target> startingAt(String grain) {
      if (grain == null || grain.equals(entry)) {
        return Optional.of(this);
      }
      if (!grains.contains(grain)) {
        return Optional.empty();
      }
      return Optional.of(new Target(
          name,
          appId,
          owner,
          grain,
          requestTimeoutS,
          hosts,
          auth,
          version,
          aliases,
          retry,
          grains));
    }
  }

  /**
   * An entry older than this many {@code maxAge}s is read before it answers (the bound on how long a changed
   * endpoint rule, e.g. a revoked key, may still let a request in on another frontend).
   */
  static final int IDLE_FACTOR = 5;

  private record Cached(Optional<Target> target, long readAtNanos) {}

  private final ClusterStore store;
  private final long maxAgeNanos;
  private final LongSupplier nanos;
  private final Map<String, Cached> byName = new ConcurrentHashMap<>();
  private final Set<String> refreshing = ConcurrentHashMap.newKeySet();
  private final Executor refresher;
  /** Opens signing secrets; made at the first use (it reads the cluster secret). */
  private final Supplier<SecretBox> box;

  /** @param refresher runs the reads that replace entries older than {@code maxAge} */
  public AppDirectory(ClusterStore store, Duration maxAge, LongSupplier nanos, Executor refresher) {
    this(store, maxAge, nanos, refresher, memoize(() -> new SecretBox(store.clusterSecret())));
  }

  /** The same, opening signing secrets with the process' cluster keys (they follow a rotation). */
  public AppDirectory(
      ClusterStore store,
      Duration maxAge,
      LongSupplier nanos,
      Executor refresher,
      ClusterKeys keys) {
    this(store, maxAge, nanos, refresher, memoize(() -> new SecretBox(keys)));
  }

  private AppDirectory(
      ClusterStore store,
      Duration maxAge,
      LongSupplier nanos,
      Executor refresher,
      Supplier<SecretBox> box) {
    this.store = store;
    this.maxAgeNanos = maxAge.toNanos();
    this.nanos = nanos;
    this.refresher = refresher;
    this.box = box;
  }

  /** The application named {@code name}, or empty when nobody holds the name (cached like the rest). */
  public Optional<Target> find(String name) {
    long now = nanos.getAsLong();
    Cached c = byName.get(name);
    if (c == null || maxAgeNanos == 0) { // 0: the operator wants every request to read
      Optional<Target> t = read(name);
      byName.put(name, new Cached(t, now));
      return t;
    }
    if (now - c.readAtNanos() >= IDLE_FACTOR * maxAgeNanos) {
      // Idle that long (no request refreshed it): read before answering, so a request is never let
      // in by an
      // endpoint rule (a revoked key) older than IDLE_FACTOR * maxAge. Busy applications never get
      // here.
      try {
        Optional<Target> t = read(name);
        byName.put(name, new Cached(t, now));
        return t;
      } catch (RuntimeException e) {
        LOG.warn("reading idle application '{}' again failed: {}", name, e.toString());
      }
    }
    if (now - c.readAtNanos() >= maxAgeNanos && refreshing.add(name)) {
      try {
        refresher.execute(() -> refresh(name, c));
      } catch (RejectedExecutionException e) {
        refreshing.remove(name);
      }
    }
    return c.target();
  }

  /** The account of the application named {@code name} as cached here, "" when none is (no cluster-state read). */
  public String cachedOwner(String name) {
    Cached c = byName.get(name);
    return c == null ? "" : c.target().map(Target::owner).orElse("");
  }

  private void refresh(String name, Cached old) {
    try {
      long at = nanos.getAsLong();
      Optional<Target> t = read(name);
      byName.replace(
          name, old, new Cached(t, at)); // a forget() meanwhile wins: the next request reads
    } catch (RuntimeException e) {
      // Cassandra away: keep answering from the old entry; the next request past maxAge tries again
      LOG.warn("reading application '{}' again failed: {}", name, e.toString());
    } finally {
      refreshing.remove(name);
    }
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
    Workflow workflow = HostAgentTables.DESIRED_DEPLOYED.equals(app.get().desired())
        ? Workflow.parse(app.get().workflow())
        : null; // validated when it was stored
    String entry = workflow == null ? null : workflow.entry();
    List<String> hosts = entry == null
        ? List.of()
        : store.appHostStates(app.get().appId()).stream()
            .filter(h -> HostAgentTables.serves(h.status()))
            .map(HostAgentTables.AppHostState::hostId)
            .sorted()
            .toList();
    String appId = app.get().appId();
    Map<String, Alias> aliases = new java.util.HashMap<>();
    store.appRecords(appId, Alias.KIND).stream()
        .limit(Alias.MAX_PER_APP)
        .forEach(r -> aliases.put(r.id(), Alias.decode(r.id(), r.value())));
    return Optional.of(new Target(
        name,
        appId,
        app.get().owner(),
        entry,
        n.get().requestTimeoutS(),
        hosts,
        InvokeAuth.Rule.read(store, box.get(), appId),
        app.get().version(),
        Map.copyOf(aliases),
        retry(app.get().settings()),
        workflow == null ? Set.of() : Set.copyOf(workflow.grains().keySet())));
  }

  /** The stored settings' retry policy; settings stored before there was one, or unreadable: the default. */
  private static RetryPolicy retry(String settings) {
    if (settings == null || settings.isBlank()) {
      return RetryPolicy.DEFAULT;
    }
    try {
      return RetryPolicy.parse(
          sand.frontend.internal.Json.stored(settings).get(RetryPolicy.SETTING));
    } catch (IllegalArgumentException e) {
      return RetryPolicy.DEFAULT;
    }
  }

  private static <T> Supplier<T> memoize(Supplier<T> s) {
    AtomicReference<T> v = new AtomicReference<>();
    return () -> v.updateAndGet(x -> x != null ? x : s.get());
  }

  /** This frontend changed the application: read it again on its next use. */
  public void forget(String name) {
    byName.remove(name);
  }

  /** Another frontend changed the application of this id ({@link ControlWatcher}): read it again on its next use. */
  void forgetId(String appId) {
    byName.values().removeIf(c -> c.target().map(t -> t.appId().equals(appId)).orElse(false));
  }
}
