package sand.cluster;

import static sand.common.ConfigDef.HOST_PORT;
import static sand.common.ConfigDef.HOST_PORTS;
import static sand.common.ConfigDef.KEYSPACE;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.nonBlank;

import java.net.InetSocketAddress;
import java.util.Map;
import sand.common.ConfigDef.Config;
import sand.common.ConfigDef;

/**
 * Where a cluster's shared parts are (component {@code cluster}, {@code SAND_CLUSTER_*}): the Kafka of the global
 * message bus and the Cassandra of the cluster state. Declared once here and read by every host agent and frontend,
 * so the two processes cannot be pointed at different clusters by two spellings of one setting.
 */
public record ClusterSettings(String kafkaBootstrap, InetSocketAddress cassandraContact, String cassandraDatacenter,
                              String cassandraKeyspace, int cassandraReplication, int kafkaReplication) {
  public static final String COMPONENT = "cluster";

  public static final ConfigDef DEF = new ConfigDef(COMPONENT)
      .define("kafka.bootstrap", STRING, "127.0.0.1:9092", HOST_PORTS,
          "Kafka bootstrap servers (the global message bus)")
      .define("kafka.replication", INT, 1, between(1, 16),
          "replication factor of the topics SAND creates (grain topics, sand.control, response topics); at most the "
              + "number of Kafka brokers")
      .define("cassandra.contact", STRING, "127.0.0.1:9042", HOST_PORT,
          "a Cassandra contact point (native protocol) of the cluster state")
      .define("cassandra.datacenter", STRING, "datacenter1", nonBlank("a datacenter name"),
          "Cassandra local datacenter")
      .define("cassandra.keyspace", STRING, "sand", KEYSPACE, "keyspace of the cluster state")
      .define("cassandra.replication", INT, 1, between(1, 99),
          "replication factor of the keyspace when it is created (SimpleStrategy)");

  /** From the environment ({@code SAND_CLUSTER_*}) and defaults; a bad value throws naming it. */
  public static ClusterSettings fromEnvironment(Map<String, String> env) {
    return from(DEF.parse(env, Map.of()));
  }

  public static ClusterSettings from(Config c) {
    String contact = c.getString("cassandra.contact");
    int colon = contact.lastIndexOf(':');
    return new ClusterSettings(c.getString("kafka.bootstrap"),
        InetSocketAddress.createUnresolved(contact.substring(0, colon), Integer.parseInt(contact.substring(colon + 1))),
        c.getString("cassandra.datacenter"), c.getString("cassandra.keyspace"), c.getInt("cassandra.replication"),
        c.getInt("kafka.replication"));
  }

  /** The cluster state in this cluster's Cassandra (creating its keyspace and tables when missing). */
  public CassandraClusterStore connectStore() {
    return CassandraClusterStore.connect(new InetSocketAddress(cassandraContact.getHostString(),
        cassandraContact.getPort()), cassandraDatacenter, cassandraKeyspace, cassandraReplication);
  }
}
