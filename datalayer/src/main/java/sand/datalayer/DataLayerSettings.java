package sand.datalayer;

import static sand.common.ConfigDef.PORT;
import static sand.common.ConfigDef.SECRET;
import static sand.common.ConfigDef.SOCKET_PATH;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.LONG;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.emptyOr;
import static sand.common.ConfigDef.nonBlank;

import java.time.Duration;
import sand.cluster.globaldata.CassandraGlobalDataLayer;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalDataSettings;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;

/**
 * The settings of the data layer, declared once (environment: {@code SAND_DATALAYER_<KEY>}, e.g.
 * {@code SAND_DATALAYER_CASSANDRA_CONTACT}); docs/config.md is generated from {@link #DEF}.
 */
public final class DataLayerSettings {

  /** Largest value.max.bytes: Thrift's default message limit is 100 MB and a value must fit in one. */
  public static final int VALUE_MAX_BYTES_LIMIT = 64 * 1024 * 1024;

  /** Largest app.max.bytes and max.bytes (1 TiB): a sanity bound, far above any heap this layer runs in. */
  public static final long MEMORY_MAX_BYTES_LIMIT = 1L << 40;

  public static final ConfigDef DEF = GlobalDataSettings.declare(
          new ConfigDef(GlobalDataSettings.COMPONENT)
              .define(
                  "host",
                  STRING,
                  "127.0.0.1",
                  nonBlank("a host name or IP address"),
                  "address the Thrift server binds to (standalone)")
              .define(
                  "port",
                  INT,
                  9191,
                  PORT,
                  "TCP port of the Thrift server; 0 picks a free port (standalone)")
              .define(
                  "credential",
                  STRING,
                  "",
                  emptyOr("none: required standalone", SECRET),
                  "host agent credential: the only one that may grant and revoke applications")
              .define(
                  "unix.socket",
                  STRING,
                  "",
                  emptyOr("TCP only", SOCKET_PATH),
                  "also serve on this Unix domain socket (empty = TCP only)")
              .define(
                  "max.connections",
                  INT,
                  4096,
                  between(1, 1_000_000),
                  "most client connections served at once (one thread each); a connection that presents no known "
                      + "credential within 5 s of accept is closed"))
      .define(
          "value.max.bytes",
          INT,
          10 * 1024 * 1024,
          between(1, VALUE_MAX_BYTES_LIMIT),
          "largest value (key-value value, map entry) accepted; larger is TOO_LARGE. Cassandra's largest "
              + "mutation (half its commitlog_segment_size) must be above it")
      .define(
          "app.max.bytes",
          LONG,
          64L * 1024 * 1024,
          between(1, MEMORY_MAX_BYTES_LIMIT),
          "most bytes one application may hold in this host's memory (names, values, writes waiting for "
              + "the global data layer); above it its clean data is evicted, and when none is left its writes "
              + "get QUOTA_EXCEEDED. At least value.max.bytes + "
              + LocalDataLayer.WRITE_MARGIN_BYTES + " (one write) and "
              + "at most max.bytes")
      .define(
          "max.bytes",
          LONG,
          512L * 1024 * 1024,
          between(1, MEMORY_MAX_BYTES_LIMIT),
          "most bytes all applications together may hold in this host's memory; above it clean data of the "
              + "largest holders is evicted first. The JVM heap (-Xmx) must exceed it (see docs/data-layer.md)")
      .define(
          "app.global.max.bytes",
          LONG,
          LocalDataLayer.Options.GLOBAL_MAX_BYTES,
          between(1, Long.MAX_VALUE),
          "most bytes one application may store in the global data layer (values of keys and map entries, with "
              + "their keys, and set items; counted across hosts, approximately); above it its writes get QUOTA_EXCEEDED until it "
              + "deletes some. An application may lower its own quota with the counter "
              + StorageQuota.OWN_LIMIT + " (docs/data-layer.md)")
      .define(
          "backup.threads",
          INT,
          4,
          between(1, 256),
          "threads backing writes up to the global data layer (items spread over them by hash)")
      .define(
          "backup.retry.max.ms",
          INT,
          5000,
          between(1, 600_000),
          "longest wait between retries of a backup the global data layer refused")
      .define(
          "shutdown.flush.ms",
          INT,
          10_000,
          between(0, 3_600_000),
          "on close, longest wait for pending writes to reach the global data layer");

  private DataLayerSettings() {}

  /**
   * The local layer's options from a parsed config. The cross-field checks (app.max.bytes against
   * value.max.bytes and max.bytes) are {@link LocalDataLayer}'s, so they hold however it is built.
   */
  public static LocalDataLayer.Options options(Config c) {
    return new LocalDataLayer.Options(
        c.getInt("value.max.bytes"),
        c.getInt("backup.threads"),
        Duration.ofMillis(c.getInt("backup.retry.max.ms")),
        Duration.ofMillis(c.getInt(GlobalDataSettings.CASSANDRA_TIMEOUT_MS)),
        Duration.ofMillis(c.getInt("shutdown.flush.ms")),
        c.getLong("app.max.bytes"),
        c.getLong("max.bytes"),
        c.getLong("app.global.max.bytes"));
  }

  /** The Cassandra settings from a parsed config ({@link GlobalDataSettings#cassandra}). */
  public static CassandraGlobalDataLayer.Settings cassandra(Config c) {
    return GlobalDataSettings.cassandra(c);
  }

  /** Open the configured global layer ({@link GlobalDataSettings#open}). */
  public static GlobalDataLayer openGlobal(Config c) {
    return GlobalDataSettings.open(c);
  }
}
