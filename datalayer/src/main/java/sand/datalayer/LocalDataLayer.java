package sand.datalayer;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.common.Credentials;
import sand.common.Credentials.Principal;
import sand.common.Credentials.UnauthorizedException;
import sand.contracts.DataKind;
import sand.datalayer.DataLayerException.Code;
import sand.datalayer.internal.AppContext;
import sand.datalayer.internal.AppMemory;
import sand.datalayer.internal.HostMemory;
import sand.datalayer.internal.Sizes;
import sand.datalayer.internal.WriteBehind;

/**
 * The local data layer of one host (paper §4.3): an in-memory store per application, backed up
 * asynchronously to the {@link GlobalDataLayer}. The host agent embeds it (no Thrift needed);
 * {@link DataLayerService} serves it to grain instances.
 *
 * <p>A grain's call names no application: {@link #forCredential} authenticates the credential (shared
 * with the local bus through {@link Credentials}) and returns that application's
 * {@link ApplicationData}, so an application can only ever reach its own data.
 * {@link #forApplication} is the host agent's in-process door to any application (it needs no
 * credential: it is the host agent's own code).
 */
public final class LocalDataLayer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LocalDataLayer.class);

  /**
   * Settings of the local layer.
   *
   * @param valueMaxBytes   largest value (kv value, map entry) accepted; larger is TOO_LARGE
   * @param backupThreads   write-behind threads (items are spread over them by hash)
   * @param retryMaxBackoff longest wait between retries of a write the global layer refused
   * @param readThroughWait longest wait for this host's earlier writes to reach the global layer: on a miss,
   *                        the item's; when an application's quota is full of them, any of them
   *                        (then QUOTA_EXCEEDED)
   * @param closeFlush      longest wait in {@link #close()} for pending writes to reach the global layer
   * @param appMaxBytes     most bytes one application may hold in this host's memory (app.max.bytes)
   * @param maxBytes        most bytes all applications together may hold in this host's memory (max.bytes)
   * @param globalMaxBytes  most bytes one application may store in the global layer (app.global.max.bytes)
   */
  public record Options(
      long valueMaxBytes,
      int backupThreads,
      Duration retryMaxBackoff,
      Duration readThroughWait,
      Duration closeFlush,
      long appMaxBytes,
      long maxBytes,
      long globalMaxBytes) {
    /** app.global.max.bytes's default: 1 GiB per application. */
    public static final long GLOBAL_MAX_BYTES = 1L << 30;

    public Options(
        long valueMaxBytes,
        int backupThreads,
        Duration retryMaxBackoff,
        Duration readThroughWait,
        Duration closeFlush,
        long appMaxBytes,
        long maxBytes) {
      this(
          valueMaxBytes,
          backupThreads,
          retryMaxBackoff,
          readThroughWait,
          closeFlush,
          appMaxBytes,
          maxBytes,
          GLOBAL_MAX_BYTES);
    }

    public static Options defaults() {
      return new Options(
          10L * 1024 * 1024,
          4,
          Duration.ofSeconds(5),
          Duration.ofSeconds(5),
          Duration.ofSeconds(10),
          64L * 1024 * 1024,
          512L * 1024 * 1024);
    }

    public Options withValueMaxBytes(long v) {
      return new Options(
          v,
          backupThreads,
          retryMaxBackoff,
          readThroughWait,
          closeFlush,
          appMaxBytes,
          maxBytes,
          globalMaxBytes);
    }

    public Options withRetryMaxBackoff(Duration d) {
      return new Options(
          valueMaxBytes,
          backupThreads,
          d,
          readThroughWait,
          closeFlush,
          appMaxBytes,
          maxBytes,
          globalMaxBytes);
    }

    public Options withAppMaxBytes(long v) {
      return new Options(
          valueMaxBytes,
          backupThreads,
          retryMaxBackoff,
          readThroughWait,
          closeFlush,
          v,
          maxBytes,
          globalMaxBytes);
    }

    public Options withMaxBytes(long v) {
      return new Options(
          valueMaxBytes,
          backupThreads,
          retryMaxBackoff,
          readThroughWait,
          closeFlush,
          appMaxBytes,
          v,
          globalMaxBytes);
    }

    public Options withGlobalMaxBytes(long v) {
      return new Options(
          valueMaxBytes,
          backupThreads,
          retryMaxBackoff,
          readThroughWait,
          closeFlush,
          appMaxBytes,
          maxBytes,
          v);
    }
  }

  /**
   * What the largest single write may need besides its value (a new map and entry: their names and
   * bookkeeping, and the write's own copy of the names and bookkeeping): app.max.bytes must be at
   * least value.max.bytes plus this.
   */
  public static final long WRITE_MARGIN_BYTES = 4L * ApplicationData.MAX_NAME_BYTES
      + 2 * Sizes.ITEM_OVERHEAD_BYTES
      + Sizes.WRITE_OVERHEAD_BYTES;

  private final Credentials credentials;
  private final GlobalDataLayer global;
  private final Options options;
  private final WriteBehind writeBehind;
  private final HostMemory memory;
  private final StorageQuota storage;
  private final ConcurrentHashMap<String, ApplicationData> applications = new ConcurrentHashMap<>();

  /**
   * A local layer over {@code global} (which the caller keeps and closes). Throws
   * IllegalArgumentException when {@code options.valueMaxBytes()} is more than the global layer can
   * store in one write: such a value could be accepted here but never backed up.
   */
  public LocalDataLayer(Credentials credentials, GlobalDataLayer global, Options options) {
    if (options.valueMaxBytes() > global.maxValueBytes()) {
      throw new IllegalArgumentException(
          "value.max.bytes=" + options.valueMaxBytes() + " is above the largest "
              + "value the global data layer accepts in one write (" + global.maxValueBytes()
              + " bytes): lower "
              + "value.max.bytes, or let Cassandra take larger writes (commitlog_segment_size: 32MiB in "
              + "cassandra.yaml gives max_mutation_size 16MiB)");
    }
    if (options.appMaxBytes() > options.maxBytes()) {
      throw new IllegalArgumentException(
          "app.max.bytes=" + options.appMaxBytes() + " is above max.bytes=" + options.maxBytes()
              + " (the whole host's share): lower app.max.bytes or raise max.bytes");
    }
    if (options.appMaxBytes() < options.valueMaxBytes() + WRITE_MARGIN_BYTES) {
      throw new IllegalArgumentException(
          "app.max.bytes=" + options.appMaxBytes() + " cannot hold the largest "
              + "single write: value.max.bytes=" + options.valueMaxBytes() + " plus "
              + WRITE_MARGIN_BYTES
              + " bytes of names and bookkeeping; raise app.max.bytes or lower value.max.bytes");
    }
    this.credentials = credentials;
    this.storage = new StorageQuota(global, options.globalMaxBytes());
    this.global =
        storage
            .metered(); // what reaches the global layer is counted against the application's quota
    this.options = options;
    Duration first = Duration.ofMillis(Math.min(20, options.retryMaxBackoff().toMillis()));
    this.writeBehind =
        new WriteBehind(this.global, options.backupThreads(), first, options.retryMaxBackoff());
    this.memory = new HostMemory(options.maxBytes(), options.appMaxBytes());
    LOG.info(
        "local data layer started: value.max.bytes={}, app.max.bytes={}, max.bytes={}, {} backup threads, "
            + "global layer {}",
        options.valueMaxBytes(),
        options.appMaxBytes(),
        options.maxBytes(),
        options.backupThreads(),
        global.getClass().getSimpleName());
    long heap = Runtime.getRuntime().maxMemory();
    if (options.maxBytes() > heap / 2) {
      LOG.warn(
          "max.bytes={} is above half of this JVM's heap ({} bytes): with its overhead the local data layer "
              + "can take more than the heap; lower datalayer max.bytes or raise -Xmx (see docs/data-layer.md)",
          options.maxBytes(),
          heap);
    }
  }

  /**
   * Told of every map entry a grain writes through {@link DataLayerService}, after the write applied: the host
   * agent fires the triggers of triggerable buckets from it (docs/data-triggers.md). It runs on the writer's call,
   * so a listener that has to wait (a full queue) slows that writer down: backpressure, not memory.
   */
  @FunctionalInterface
  public interface MapWriteListener {
    void mapEntryPut(String app, String map, String key, byte[] value);
  }

  private volatile MapWriteListener mapWrites = (app, map, key, value) -> {};

  /**
   * Set the one {@link MapWriteListener}. A setter, not a constructor argument: the listener (the host agent's
   * bucket triggers) needs the bridge, which needs this layer.
   */
  public void onMapEntryPut(MapWriteListener l) {
    mapWrites = l;
  }

  /** A grain wrote a map entry (called by {@link DataLayerService}). */
  void mapEntryPut(String app, String map, String key, byte[] value) {
    try {
      mapWrites.mapEntryPut(app, map, key, value);
    } catch (RuntimeException e) { // the write stands; what the listener failed to do is its to log
      LOG.warn("[app {}] map '{}': after the write of entry '{}': {}", app, map, key, e.toString());
    }
  }

  /**
   * The data of the application {@code credential} belongs to. UNAUTHORIZED for an unknown credential
   * and for the host agent's (which belongs to no application).
   */
  public ApplicationData forCredential(String credential) {
    return forApplication(applicationOf(credential));
  }

  private String applicationOf(String credential) {
    Principal p;
    try {
      p = credentials.authenticate(credential);
    } catch (UnauthorizedException e) {
      throw new DataLayerException(
          Code.UNAUTHORIZED,
          e.getMessage() + ": use the credential the host agent gave this sandbox",
          e);
    }
    if (p.hostAgent()) {
      throw new DataLayerException(
          Code.UNAUTHORIZED,
          "the host agent credential names no application; data calls need an application's credential");
    }
    return p.application();
  }

  /**
   * Runs a grain's management request (datalayer.thrift {@code manage}) for the owner of its application: the host
   * agent relays it to a frontend, since a sandbox has no network. Refusals are {@link DataLayerException}s.
   */
  @FunctionalInterface
  public interface ManagementDoor {
    byte[] manage(String app, byte[] request);
  }

  /** The largest management request a grain may send (a KNIX function's code travels in one). */
  public static final int MANAGEMENT_MAX_BYTES = 1 << 20;

  private volatile ManagementDoor management = (app, request) -> {
    throw new DataLayerException(
        DataLayerException.Code.UNAVAILABLE, "this host relays no management requests");
  };

  /** Set the one {@link ManagementDoor} (the host agent's relay to the frontends). */
  public void onManagement(ManagementDoor door) {
    management = door;
  }

  /** A grain's management request (called by {@link DataLayerService}). */
  byte[] manage(String credential, byte[] request) {
    String app = applicationOf(credential);
    if (request.length > MANAGEMENT_MAX_BYTES) {
      throw new DataLayerException(
          DataLayerException.Code.TOO_LARGE,
          "a management request is at most " + MANAGEMENT_MAX_BYTES + " bytes; this one has "
              + request.length);
    }
    return management.manage(app, request);
  }

  /** The data of {@code application}, for the host agent in-process (no credential check). */
  public ApplicationData forApplication(String application) {
    return applications.computeIfAbsent(
        application,
        a -> new ApplicationData(
            new AppContext(a, global, writeBehind, options.readThroughWait(), memory.account(a)),
            options.valueMaxBytes()));
  }

  /**
   * Refuse with QUOTA_EXCEEDED a grain's write of {@code bytes} more when {@code application} is at its quota in
   * the global layer ({@link StorageQuota}); nothing is changed then.
   */
  public void checkStorage(String application, long bytes, String what) {
    storage.check(application, bytes, memory.account(application).pending(), what);
  }

  /** The application's bytes in the global layer and its quota there, as this host knows them. */
  public StorageQuota.Usage storage(String application) {
    return storage.usage(application);
  }

  /** Let {@code applicationCredential} act for {@code application}; host agent credential only. */
  public void grantApplication(
      String hostAgentCredential, String application, String applicationCredential) {
    requireHostAgent(hostAgentCredential, "grantApplication");
    try {
      credentials.grant(application, applicationCredential);
    } catch (IllegalArgumentException e) {
      throw new DataLayerException(Code.BAD_REQUEST, e.getMessage());
    }
    LOG.info("[app {}] granted a credential", application);
  }

  /**
   * Take the application's credentials away (from the local bus too: the registry is shared) and
   * drop its data from this host's memory, releasing what it held; its pending writes still go to the
   * global layer, and their bytes stay counted (in {@link #usage()}) until they get there.
   */
  public void revokeApplication(String hostAgentCredential, String application) {
    requireHostAgent(hostAgentCredential, "revokeApplication");
    credentials.revoke(application);
    ApplicationData dropped = applications.remove(application);
    if (dropped != null) {
      dropped.drop();
    }
    LOG.info("[app {}] revoked; its data left this host's memory", application);
  }

  /** Completes when the latest write of the item so far is in the global layer: then the data flag may go out. */
  public CompletableFuture<Void> backupOf(String application, DataKind kind, String name) {
    return writeBehind.backupOf(new WriteBehind.Item(application, kind, name));
  }

  /** Wait up to {@code timeoutMs} until every write of {@code application} so far is in the global layer. */
  public boolean flush(String application, long timeoutMs) {
    return writeBehind.flush(application, timeoutMs);
  }

  /**
   * Per application (in name order), the bytes it holds in this host's memory, how many of them wait
   * for the global layer, and how many items were evicted: for the host agent's metrics. Lists the
   * applications in use here, and revoked ones until their last writes reach the global layer.
   */
  public Map<String, MemoryUsage> usage() {
    Map<String, MemoryUsage> out = new TreeMap<>();
    for (AppMemory m : memory.listed()) {
      out.put(m.app(), new MemoryUsage(m.held(), m.pending(), m.evicted()));
    }
    return out;
  }

  /** Bytes all applications hold in this host's memory (at most max.bytes). */
  public long heldBytes() {
    return memory.held();
  }

  /** Writes not yet in the global layer (for metrics). */
  public long pendingWrites() {
    return writeBehind.pendingWrites();
  }

  public Credentials credentials() {
    return credentials;
  }

  public Options options() {
    return options;
  }

  /** Wait up to {@link Options#closeFlush()} for pending writes, then stop backing up. The global layer stays open. */
  @Override
  public void close() {
    long pending = writeBehind.pendingWrites();
    if (pending > 0) {
      LOG.info(
          "closing: waiting up to {} ms for {} pending writes to reach the global data layer",
          options.closeFlush().toMillis(),
          pending);
    }
    if (!writeBehind.flushAll(options.closeFlush().toMillis())) {
      LOG.error(
          "closing with {} writes not in the global data layer after {} ms: they are lost",
          writeBehind.pendingWrites(),
          options.closeFlush().toMillis());
    }
    writeBehind.close();
    LOG.info("local data layer stopped");
  }

  private void requireHostAgent(String credential, String what) {
    try {
      credentials.requireHostAgent(credential, what);
    } catch (UnauthorizedException e) {
      throw new DataLayerException(Code.UNAUTHORIZED, e.getMessage(), e);
    }
  }
}
