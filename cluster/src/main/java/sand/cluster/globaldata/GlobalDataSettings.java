package sand.cluster.globaldata;

import static sand.common.ConfigDef.HOST_PORTS;
import static sand.common.ConfigDef.KEYSPACE;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.nonBlank;
import static sand.common.ConfigDef.oneOf;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import sand.cluster.CassandraContacts;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;

/**
 * Where the global data layer is: the data layer's settings {@code SAND_DATALAYER_GLOBAL} and
 * {@code SAND_DATALAYER_CASSANDRA_*}, declared here once for the two processes that open it (the host agent's local
 * data layer declares them within its own, {@code sand.datalayer.DataLayerSettings}; the frontend reads only these).
 */
public final class GlobalDataSettings {
  public static final String COMPONENT = "datalayer";
  public static final String GLOBAL = "global";
  public static final String CASSANDRA_CONTACT = "cassandra.contact";
  public static final String CASSANDRA_DATACENTER = "cassandra.datacenter";
  public static final String CASSANDRA_KEYSPACE = "cassandra.keyspace";
  public static final String CASSANDRA_REPLICATION = "cassandra.replication";
  public static final String CASSANDRA_TIMEOUT_MS = "cassandra.timeout.ms";

  /** These settings alone, as the frontend reads them. */
  public static final ConfigDef DEF = declare(new ConfigDef(COMPONENT));

  private GlobalDataSettings() {}

  /** Declare the global layer's settings in {@code def}. */
  public static ConfigDef declare(ConfigDef def) {
    return def.define(
            GLOBAL,
            STRING,
            "cassandra",
            oneOf("cassandra", "memory"),
            "global data layer: Cassandra, or in memory (tests and benchmarks; not durable)")
        .define(
            CASSANDRA_CONTACT,
            STRING,
            "127.0.0.1:9042",
            HOST_PORTS,
            "Cassandra contact points (native protocol), comma-separated: one must answer when the process starts")
        .define(
            CASSANDRA_DATACENTER,
            STRING,
            "datacenter1",
            nonBlank("a datacenter name"),
            "Cassandra local datacenter")
        .define(CASSANDRA_KEYSPACE, STRING, "sand", KEYSPACE, "keyspace of the global data layer")
        .define(
            CASSANDRA_REPLICATION,
            INT,
            1,
            between(1, 99),
            "replication factor of the keyspace when it is created (SimpleStrategy)")
        .define(
            CASSANDRA_TIMEOUT_MS,
            INT,
            5000,
            between(100, 600_000),
            "Cassandra request timeout in milliseconds; also the longest wait, on a miss, for this host's earlier writes of the item to reach Cassandra, "
                + "and, when an application's memory quota is full of writes not yet in Cassandra, for some of them before QUOTA_EXCEEDED");
  }

  /** The Cassandra settings from a parsed config. */
  public static CassandraGlobalDataLayer.Settings cassandra(Config c) {
    List<InetSocketAddress> contacts;
    try {
      contacts = CassandraContacts.parse(c.getString(CASSANDRA_CONTACT));
    } catch (IllegalArgumentException e) {
      throw new ConfigDef.ConfigException("datalayer: cassandra.contact: " + e.getMessage());
    }
    return new CassandraGlobalDataLayer.Settings(
        CassandraContacts.resolved(contacts),
        c.getString(CASSANDRA_DATACENTER),
        c.getString(CASSANDRA_KEYSPACE),
        c.getInt(CASSANDRA_REPLICATION),
        Duration.ofMillis(c.getInt(CASSANDRA_TIMEOUT_MS)));
  }

  /** Open the configured global layer: connect to Cassandra (creating the schema), or a fresh in-memory one. */
  public static GlobalDataLayer open(Config c) {
    return c.getString(GLOBAL).equals("memory")
        ? new InMemoryGlobalDataLayer()
        : CassandraGlobalDataLayer.connect(cassandra(c));
  }
}
