package sand.cluster.globaldata;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.CassandraContacts;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * The global data layer on Apache Cassandra (paper §4.3), through the DataStax Java driver 4. (Longer than 600 lines
 * because every operation of GlobalDataLayer keeps its prepared statements beside it; splitting it by data kind, kv,
 * maps, sets, counters, is the way to shorten it.)
 *
 * <p>Schema (created at start, IF NOT EXISTS): keyspace {@code <keyspace>} with SimpleStrategy and
 * the configured replication factor; every table is keyed by application first, so a statement can
 * only ever name one application's rows:
 * <pre>
 * kv          (app, key)             value blob, size bigint, sha256 text, updated timestamp
 * map_entries ((app, map), key)      value blob
 * set_items   ((app, set), item)
 * counters    (app, name)            value bigint
 * map_names   (app, map)             the maps that had an entry written (listMaps)
 * set_names   (app, set)             the sets that had an item added (listSets)
 * </pre>
 * kv and counters are clustered by name inside the application's partition, so listKeys is one
 * ordered slice of one partition. Statements are prepared once; reads and writes use LOCAL_QUORUM, so
 * with a replication factor above 1 a read sees every acknowledged write (what verifyGlobal needs).
 * The driver's client-side timestamps increase per session, and the write-behind sends one write per
 * item at a time, so Cassandra's last-write-wins keeps the local order even when a write is retried.
 */
public final class CassandraGlobalDataLayer implements GlobalDataLayer {
  private static final Logger LOG = LoggerFactory.getLogger(CassandraGlobalDataLayer.class);
  private static final Pattern KEYSPACE = Pattern.compile("[a-z][a-z0-9_]{0,47}");
  private static final Duration DDL_TIMEOUT = Duration.ofSeconds(60);
  /** Room in one write for everything but the value: application, names, digest, row overhead. */
  private static final long NAMES_MARGIN = 3 * GlobalDataLayer.MAX_NAME_BYTES + 16 * 1024;

  /** Where Cassandra is and how to use it. */
  public record Settings(
      List<InetSocketAddress> contactPoints,
      String localDatacenter,
      String keyspace,
      int replicationFactor,
      Duration requestTimeout) {
    public Settings {
      if (!KEYSPACE.matcher(keyspace).matches()) {
        throw new IllegalArgumentException("keyspace '" + keyspace
            + "' is invalid: lower-case letter, then up to 47 lower-case letters, digits or _");
      }
      if (replicationFactor < 1) {
        throw new IllegalArgumentException(
            "replication factor must be >= 1, got " + replicationFactor);
      }
    }
  }

  private final Settings settings;
  private final CqlSession session;
  private final String ks;
  private long maxValueBytes = Long.MAX_VALUE;
  private PreparedStatement readKv;
  private PreparedStatement addStored;
  private PreparedStatement readStored;
  private PreparedStatement writeStorageMax;
  private PreparedStatement readStorageMax;
  private PreparedStatement kvMeta;
  private PreparedStatement writeKv;
  private PreparedStatement deleteKv;
  private PreparedStatement listKeys;
  private PreparedStatement readMapEntry;
  private PreparedStatement readMap;
  private PreparedStatement writeMapEntry;
  private PreparedStatement deleteMapEntry;
  private PreparedStatement deleteMap;
  private PreparedStatement readSet;
  private PreparedStatement containsSetItem;
  private PreparedStatement addSetItem;
  private PreparedStatement removeSetItem;
  private PreparedStatement deleteSet;
  private PreparedStatement readCounter;
  private PreparedStatement writeCounter;
  private PreparedStatement deleteCounter;
  private PreparedStatement addMapName;
  private PreparedStatement listMapNames;
  private PreparedStatement deleteMapName;
  private PreparedStatement anyMapEntry;
  private PreparedStatement addSetName;
  private PreparedStatement listSetNames;
  private PreparedStatement deleteSetName;
  private PreparedStatement anySetItem;
  private PreparedStatement listCounters;

  private CassandraGlobalDataLayer(Settings settings, CqlSession session) {
    this.settings = settings;
    this.session = session;
    this.ks = settings.keyspace();
  }

  /**
   * Connect, create the schema if needed and prepare the statements. Throws
   * {@link GlobalUnavailableException} when Cassandra cannot be reached.
   */
  /**
   * The Cassandra login of this process, {user, password}, or null for none: the cluster's settings
   * SAND_CLUSTER_CASSANDRA_USER and SAND_CLUSTER_CASSANDRA_PASSWORD_FILE (declared in sand.cluster.ClusterSettings,
   * docs/config.md), since the data layer's Cassandra is the cluster's. The file must not be readable by others.
   */
  static String[] clusterLogin(Map<String, String> env) {
    String user = env.getOrDefault("SAND_CLUSTER_CASSANDRA_USER", "").strip();
    if (user.isEmpty()) {
      return null;
    }
    Path file =
        Path.of(env.getOrDefault("SAND_CLUSTER_CASSANDRA_PASSWORD_FILE", "").strip());
    try {
      var perms = Files.getPosixFilePermissions(file);
      if (perms.contains(PosixFilePermission.OTHERS_READ)
          || perms.contains(PosixFilePermission.GROUP_READ)) {
        throw new GlobalUnavailableException(
            "the Cassandra password file " + file + " can be read by others: chmod " + "600 it");
      }
      return new String[] {user, Files.readString(file).strip()};
    } catch (IOException e) {
      throw new GlobalUnavailableException(
          "cannot read the Cassandra password file "
              + "(SAND_CLUSTER_CASSANDRA_PASSWORD_FILE) of user " + user + ": " + e.getMessage(),
          e);
    }
  }

  public static CassandraGlobalDataLayer connect(Settings settings) {
    Duration t = settings.requestTimeout();
    DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, t)
        .withDuration(
            DefaultDriverOption.RECONNECTION_MAX_DELAY, CassandraContacts.RECONNECT_MAX_DELAY)
        .withDuration(DefaultDriverOption.CONNECTION_CONNECT_TIMEOUT, t)
        .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, t)
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, t)
        .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, t)
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, DDL_TIMEOUT)
        .withString(DefaultDriverOption.REQUEST_CONSISTENCY, ConsistencyLevel.LOCAL_QUORUM.name())
        // Every statement here is an idempotent INSERT, DELETE or SELECT: safe for the driver to
        // retry.
        .withBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, true)
        .withStringList(
            DefaultDriverOption.METADATA_SCHEMA_REFRESHED_KEYSPACES, List.of(settings.keyspace()))
        .build();
    CqlSession session;
    try {
      var builder = CqlSession.builder()
          .addContactPoints(settings.contactPoints())
          .withLocalDatacenter(settings.localDatacenter())
          .withApplicationName("sand-datalayer")
          .withConfigLoader(config);
      String[] login = clusterLogin(System.getenv());
      if (login != null) {
        builder.withAuthCredentials(login[0], login[1]);
      }
      session = builder.build();
    } catch (DriverException e) {
      throw new GlobalUnavailableException(
          "cannot reach Cassandra at " + hostPorts(settings.contactPoints())
              + " (datacenter " + settings.localDatacenter() + "): " + e.getMessage()
              + "; start it with deploy/cassandra.sh start, or use the in-memory global layer (global=memory)",
          e);
    }
    CassandraGlobalDataLayer layer = new CassandraGlobalDataLayer(settings, session);
    try {
      layer.createSchema();
      layer.prepare();
      layer.readSizeLimits();
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
    LOG.info(
        "global data layer: Cassandra at {}, keyspace {} (replication {})",
        hostPorts(settings.contactPoints()),
        settings.keyspace(),
        settings.replicationFactor());
    return layer;
  }

  @Override
  public void createSchema() {
    ddl("CREATE KEYSPACE IF NOT EXISTS " + ks + " WITH replication = {'class': 'SimpleStrategy', "
        + "'replication_factor': " + settings.replicationFactor() + "}");
    ddl("CREATE TABLE IF NOT EXISTS " + ks
        + ".kv (app text, key text, value blob, size bigint, sha256 text, "
        + "updated timestamp, PRIMARY KEY (app, key))");
    ddl("CREATE TABLE IF NOT EXISTS " + ks
        + ".map_entries (app text, map text, key text, value blob, "
        + "PRIMARY KEY ((app, map), key))");
    ddl("CREATE TABLE IF NOT EXISTS " + ks + ".set_items (app text, \"set\" text, item text, "
        + "PRIMARY KEY ((app, \"set\"), item))");
    ddl("CREATE TABLE IF NOT EXISTS " + ks + ".counters (app text, name text, value bigint, "
        + "PRIMARY KEY (app, name))");
    // a map's or set's rows are a partition of their own: listing their names needs an index of
    // names
    ddl("CREATE TABLE IF NOT EXISTS " + ks
        + ".map_names (app text, map text, PRIMARY KEY (app, map))");
    ddl("CREATE TABLE IF NOT EXISTS " + ks
        + ".set_names (app text, \"set\" text, PRIMARY KEY (app, \"set\"))");
    // bytes each application stores (StorageQuota), and the quota in force, for GET
    // /api/v1/apps/{app}
    ddl("CREATE TABLE IF NOT EXISTS " + ks + ".app_storage (app text PRIMARY KEY, bytes counter)");
    ddl("CREATE TABLE IF NOT EXISTS " + ks
        + ".app_storage_max (app text PRIMARY KEY, max_bytes bigint)");
  }

  private void prepare() {
    call("preparing statements", () -> {
      readKv = session.prepare("SELECT value FROM " + ks + ".kv WHERE app = ? AND key = ?");
      kvMeta = session.prepare("SELECT size, sha256 FROM " + ks + ".kv WHERE app = ? AND key = ?");
      writeKv = session.prepare("INSERT INTO " + ks
          + ".kv (app, key, value, size, sha256, updated) " + "VALUES (?, ?, ?, ?, ?, ?)");
      deleteKv = session.prepare("DELETE FROM " + ks + ".kv WHERE app = ? AND key = ?");
      listKeys = session.prepare("SELECT key FROM " + ks + ".kv WHERE app = ? AND key > ? LIMIT ?");
      readMapEntry = session.prepare(
          "SELECT value FROM " + ks + ".map_entries WHERE app = ? AND map = ? AND key = ?");
      readMap = session.prepare(
          "SELECT key, value FROM " + ks + ".map_entries WHERE app = ? AND map = ?");
      writeMapEntry = session.prepare(
          "INSERT INTO " + ks + ".map_entries (app, map, key, value) VALUES (?, ?, ?, ?)");
      deleteMapEntry = session.prepare(
          "DELETE FROM " + ks + ".map_entries WHERE app = ? AND map = ? AND key = ?");
      deleteMap = session.prepare("DELETE FROM " + ks + ".map_entries WHERE app = ? AND map = ?");
      readSet =
          session.prepare("SELECT item FROM " + ks + ".set_items WHERE app = ? AND \"set\" = ?");
      containsSetItem = session.prepare(
          "SELECT item FROM " + ks + ".set_items WHERE app = ? AND \"set\" = ? " + "AND item = ?");
      addSetItem =
          session.prepare("INSERT INTO " + ks + ".set_items (app, \"set\", item) VALUES (?, ?, ?)");
      removeSetItem = session.prepare(
          "DELETE FROM " + ks + ".set_items WHERE app = ? AND \"set\" = ? AND item = ?");
      deleteSet = session.prepare("DELETE FROM " + ks + ".set_items WHERE app = ? AND \"set\" = ?");
      readCounter =
          session.prepare("SELECT value FROM " + ks + ".counters WHERE app = ? AND name = ?");
      writeCounter =
          session.prepare("INSERT INTO " + ks + ".counters (app, name, value) VALUES (?, ?, ?)");
      deleteCounter = session.prepare("DELETE FROM " + ks + ".counters WHERE app = ? AND name = ?");
      addMapName = session.prepare("INSERT INTO " + ks + ".map_names (app, map) VALUES (?, ?)");
      listMapNames =
          session.prepare("SELECT map FROM " + ks + ".map_names WHERE app = ? AND map > ? LIMIT ?");
      deleteMapName = session.prepare("DELETE FROM " + ks + ".map_names WHERE app = ? AND map = ?");
      anyMapEntry = session.prepare(
          "SELECT key FROM " + ks + ".map_entries WHERE app = ? AND map = ? LIMIT 1");
      addSetName = session.prepare("INSERT INTO " + ks + ".set_names (app, \"set\") VALUES (?, ?)");
      listSetNames = session.prepare(
          "SELECT \"set\" FROM " + ks + ".set_names WHERE app = ? AND \"set\" > ? LIMIT ?");
      deleteSetName =
          session.prepare("DELETE FROM " + ks + ".set_names WHERE app = ? AND \"set\" = ?");
      anySetItem = session.prepare(
          "SELECT item FROM " + ks + ".set_items WHERE app = ? AND \"set\" = ? LIMIT 1");
      listCounters = session.prepare(
          "SELECT name FROM " + ks + ".counters WHERE app = ? AND name > ? LIMIT ?");
      addStored =
          session.prepare("UPDATE " + ks + ".app_storage SET bytes = bytes + ? WHERE app = ?");
      readStored = session.prepare("SELECT bytes FROM " + ks + ".app_storage WHERE app = ?");
      writeStorageMax =
          session.prepare("INSERT INTO " + ks + ".app_storage_max (app, max_bytes) VALUES (?, ?)");
      readStorageMax =
          session.prepare("SELECT max_bytes FROM " + ks + ".app_storage_max WHERE app = ?");
      return null;
    });
  }

  @Override
  public long maxValueBytes() {
    return maxValueBytes;
  }

  /**
   * Cassandra refuses a write above max_mutation_size (default: half of commitlog_segment_size) or
   * native_transport_max_message_size; both are readable in system_views.settings (Cassandra 4+).
   */
  private void readSizeLimits() {
    long limit = Long.MAX_VALUE;
    try {
      for (String name : List.of("max_mutation_size", "native_transport_max_message_size")) {
        Row row = session
            .execute(SimpleStatement.newInstance(
                "SELECT value FROM system_views.settings WHERE name = ?", name))
            .one();
        if (row != null && row.getString("value") != null) {
          limit = Math.min(limit, parseSize(row.getString("value")));
        }
      }
    } catch (DriverException | IllegalArgumentException e) {
      LOG.warn(
          "could not read Cassandra's write size limits ({}); values are limited by value.max.bytes only",
          e.toString());
      return;
    }
    if (limit != Long.MAX_VALUE) {
      maxValueBytes = limit - NAMES_MARGIN;
      LOG.info(
          "Cassandra accepts writes up to {} bytes: values up to {} bytes (max_mutation_size is half of "
              + "commitlog_segment_size)",
          limit,
          maxValueBytes);
    }
  }

  /** "8388608B", "8192KiB", "16MiB", "1GiB" (Cassandra's DataStorageSpec) to bytes. */
  static long parseSize(String spec) {
    String s = spec.trim();
    String[][] units = {{"GiB", "1073741824"}, {"MiB", "1048576"}, {"KiB", "1024"}, {"B", "1"}};
    for (String[] u : units) {
      if (s.endsWith(u[0])) {
        return Long.parseLong(s.substring(0, s.length() - u[0].length()).trim())
            * Long.parseLong(u[1]);
      }
    }
    throw new IllegalArgumentException("unknown size '" + spec + "'");
  }

  // ---- key-value

  @Override
  public Optional<byte[]> readKv(String app, String key) {
    Row row = one("reading key " + key, readKv.bind(app, key));
    return row == null || row.isNull("value")
        ? Optional.empty()
        : Optional.of(bytes(row.getByteBuffer("value")));
  }

  @Override
  public Optional<DataMetadata> kvMetadata(String app, String key) {
    Row row = one("reading metadata of key " + key, kvMeta.bind(app, key));
    return row == null
        ? Optional.empty()
        : Optional.of(
            new DataMetadata(DataKind.KV, key, row.getLong("size"), row.getString("sha256")));
  }

  @Override
  public void writeKv(String app, String key, byte[] value) {
    run(
        "writing key " + key,
        writeKv.bind(
            app,
            key,
            ByteBuffer.wrap(value),
            (long) value.length,
            CanonicalEncoding.sha256Hex(value),
            Instant.now()));
  }

  @Override
  public void deleteKv(String app, String key) {
    run("deleting key " + key, deleteKv.bind(app, key));
  }

  @Override
  public List<String> listKeys(String app, String startAfter, int count) {
    if (count <= 0) { // CQL refuses LIMIT 0, and a page of none is no outage
      return List.of();
    }
    return call("listing keys of " + app, () -> {
      List<String> keys = new ArrayList<>();
      for (Row row : session.execute(listKeys.bind(app, startAfter, count))) {
        keys.add(row.getString("key"));
      }
      return keys;
    });
  }

  // ---- maps

  @Override
  public Optional<byte[]> readMapEntry(String app, String map, String key) {
    Row row = one("reading entry " + key + " of map " + map, readMapEntry.bind(app, map, key));
    return row == null ? Optional.empty() : Optional.of(bytes(row.getByteBuffer("value")));
  }

  @Override
  public Map<String, byte[]> readMap(String app, String map) {
    return call("reading map " + map, () -> {
      Map<String, byte[]> entries = new LinkedHashMap<>();
      for (Row row : session.execute(readMap.bind(app, map))) {
        entries.put(row.getString("key"), bytes(row.getByteBuffer("value")));
      }
      return entries;
    });
  }

  @Override
  public void writeMapEntry(String app, String map, String key, byte[] value) {
    run(
        "writing entry " + key + " of map " + map,
        writeMapEntry.bind(app, map, key, ByteBuffer.wrap(value)));
    run("naming map " + map, addMapName.bind(app, map));
  }

  @Override
  public void deleteMapEntry(String app, String map, String key) {
    run("deleting entry " + key + " of map " + map, deleteMapEntry.bind(app, map, key));
  }

  @Override
  public void deleteMap(String app, String map) {
    run("deleting map " + map, deleteMap.bind(app, map));
    run("unnaming map " + map, deleteMapName.bind(app, map));
  }

  // ---- sets

  @Override
  public Set<String> readSet(String app, String set) {
    return call("reading set " + set, () -> {
      Set<String> items = new LinkedHashSet<>();
      for (Row row : session.execute(readSet.bind(app, set))) {
        items.add(row.getString("item"));
      }
      return items;
    });
  }

  @Override
  public boolean containsSetItem(String app, String set, String item) {
    return one("reading item " + item + " of set " + set, containsSetItem.bind(app, set, item))
        != null;
  }

  @Override
  public void addSetItem(String app, String set, String item) {
    run("adding to set " + set, addSetItem.bind(app, set, item));
    run("naming set " + set, addSetName.bind(app, set));
  }

  @Override
  public void removeSetItem(String app, String set, String item) {
    run("removing from set " + set, removeSetItem.bind(app, set, item));
  }

  @Override
  public void deleteSet(String app, String set) {
    run("deleting set " + set, deleteSet.bind(app, set));
  }

  // ---- counters

  @Override
  public Optional<Long> readCounter(String app, String name) {
    Row row = one("reading counter " + name, readCounter.bind(app, name));
    return row == null || row.isNull("value")
        ? Optional.empty()
        : Optional.of(row.getLong("value"));
  }

  @Override
  public void writeCounter(String app, String name, long value) {
    run("writing counter " + name, writeCounter.bind(app, name, value));
  }

  @Override
  public void deleteCounter(String app, String name) {
    run("deleting counter " + name, deleteCounter.bind(app, name));
  }

  @Override
  public List<String> listMaps(String app, String startAfter, int count) {
    return listNames("maps", app, startAfter, count, listMapNames, anyMapEntry, deleteMapName);
  }

  @Override
  public List<String> listSets(String app, String startAfter, int count) {
    return listNames("sets", app, startAfter, count, listSetNames, anySetItem, deleteSetName);
  }

  @Override
  public List<String> listCounters(String app, String startAfter, int count) {
    if (count <= 0) {
      return List.of();
    }
    return call("listing counters of " + app, () -> {
      List<String> out = new ArrayList<>();
      for (Row row : session.execute(listCounters.bind(app, startAfter, count))) {
        out.add(row.getString(0));
      }
      return out;
    });
  }

  /**
   * Names from an index, each checked to still have a row (a map or set emptied item by item keeps its name
   * until here, where the name is dropped): one read per name, bounded by {@code count} plus the dropped ones.
   */
  private List<String> listNames(
      String what,
      String app,
      String startAfter,
      int count,
      PreparedStatement list,
      PreparedStatement any,
      PreparedStatement drop) {
    if (count <= 0) {
      return List.of();
    }
    return call("listing " + what + " of " + app, () -> {
      List<String> out = new ArrayList<>();
      String after = startAfter;
      while (out.size() < count) {
        List<String> page = new ArrayList<>();
        for (Row row : session.execute(list.bind(app, after, count))) {
          page.add(row.getString(0));
        }
        for (String name : page) {
          if (session.execute(any.bind(app, name)).one() != null) {
            if (out.size() < count) {
              out.add(name);
            }
          } else {
            session.execute(drop.bind(app, name));
          }
        }
        if (page.size() < count) {
          break;
        }
        after = page.get(page.size() - 1);
      }
      return out;
    });
  }

  @Override
  public void addStoredBytes(String app, long delta) {
    run("counting stored bytes", addStored.bind(delta, app));
  }

  @Override
  public long storedBytes(String app) {
    Row row = one("reading stored bytes", readStored.bind(app));
    return row == null || row.isNull("bytes") ? 0 : row.getLong("bytes");
  }

  @Override
  public void writeStorageMax(String app, long maxBytes) {
    run("writing the storage quota", writeStorageMax.bind(app, maxBytes));
  }

  @Override
  public Optional<Long> storageMax(String app) {
    Row row = one("reading the storage quota", readStorageMax.bind(app));
    return row == null || row.isNull("max_bytes")
        ? Optional.empty()
        : Optional.of(row.getLong("max_bytes"));
  }

  @Override
  public void close() {
    session.close();
    LOG.info(
        "global data layer: closed the Cassandra session to {}",
        hostPorts(settings.contactPoints()));
  }

  // ---- helpers

  private void ddl(String cql) {
    call(
        "creating the schema",
        () -> session.execute(SimpleStatement.newInstance(cql).setTimeout(DDL_TIMEOUT)));
  }

  private Row one(String what, BoundStatement statement) {
    return call(what, () -> session.execute(statement).one());
  }

  private void run(String what, BoundStatement statement) {
    call(what, () -> session.execute(statement));
  }

  private <T> T call(String what, Supplier<T> body) {
    try {
      return body.get();
    } catch (DriverException e) {
      throw new GlobalUnavailableException(
          "Cassandra at " + hostPorts(settings.contactPoints()) + ", keyspace " + ks + ": " + what
              + " failed: " + e.getMessage(),
          e);
    }
  }

  private static byte[] bytes(ByteBuffer buffer) {
    if (buffer == null) {
      return new byte[0];
    }
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  private static String hostPorts(List<InetSocketAddress> all) {
    return all.stream().map(CassandraGlobalDataLayer::hostPort).collect(Collectors.joining(","));
  }

  private static String hostPort(InetSocketAddress a) {
    return a.getHostString() + ":" + a.getPort();
  }
}
