package sand.cluster;

import static sand.common.ConfigDef.ABSOLUTE_PATH;
import static sand.common.ConfigDef.HOST_PORTS;
import static sand.common.ConfigDef.KEYSPACE;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.Type.STRING;
import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.emptyOr;
import static sand.common.ConfigDef.nonBlank;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Check;
import sand.common.ConfigDef.Config;

/**
 * Where a cluster's shared parts are (component {@code cluster}, {@code SAND_CLUSTER_*}): the Kafka of the global
 * message bus and the Cassandra of the cluster state. Declared once here and read by every host agent and frontend,
 * so the two processes cannot be pointed at different clusters by two spellings of one setting.
 *
 * <p>Off loopback, Kafka and Cassandra authenticate every client (docs/security.md): each process logs in as its
 * role's user (hostagent, frontend) with a password kept in a file of mode 600 that the bring-up generated
 * (deploy/ansible/site.yml); the single-host system on loopback sets no user and connects without one.
 */
public record ClusterSettings(
    String kafkaBootstrap,
    List<InetSocketAddress> cassandraContacts,
    String cassandraDatacenter,
    String cassandraKeyspace,
    int cassandraReplication,
    int kafkaReplication,
    Optional<Login> kafkaLogin,
    Optional<Login> cassandraLogin) {
  public static final String COMPONENT = "cluster";

  /**
   * A user and the file holding its password. The password is read when a client is made, never kept in a setting
   * (settings are printed); a file others may read is refused.
   */
  public record Login(String user, Path passwordFile) {
    public Login {
      if (!user.matches("[A-Za-z0-9._-]{1,64}")) {
        throw new IllegalArgumentException(
            "a cluster user must be 1-64 letters, digits, '.', '_' or '-': '" + user + "'");
      }
    }

    public String password() {
      try {
        var perms = Files.getPosixFilePermissions(passwordFile);
        if (perms.contains(PosixFilePermission.GROUP_READ)
            || perms.contains(PosixFilePermission.OTHERS_READ)) {
          throw new IllegalStateException("the password file " + passwordFile + " of cluster user "
              + user + " can be read by others: chmod 600 it");
        }
        String pw = Files.readString(passwordFile).strip();
        if (pw.isEmpty() || !pw.matches("[\\x21-\\x7e&&[^\"\\\\]]+")) {
          throw new IllegalStateException("the password file " + passwordFile + " of cluster user "
              + user + " must hold one printable word without quotes or backslashes");
        }
        return pw;
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot read the password file of cluster user " + user + ": " + e.getMessage(), e);
      }
    }
  }

  public static final ConfigDef DEF = new ConfigDef(COMPONENT)
      .define(
          "kafka.bootstrap",
          STRING,
          "127.0.0.1:9092",
          HOST_PORTS,
          "Kafka bootstrap servers (the global message bus)")
      .define(
          "kafka.replication",
          INT,
          1,
          between(1, 16),
          "replication factor of the topics SAND creates (grain topics, sand.control, response topics); at most the "
              + "number of Kafka brokers")
      .define(
          "cassandra.contact",
          STRING,
          "127.0.0.1:9042",
          HOST_PORTS,
          "Cassandra contact points (native protocol) of the cluster state, comma-separated: the driver needs one "
              + "that answers when the process starts, and then uses every node of the ring")
      .define(
          "cassandra.datacenter",
          STRING,
          "datacenter1",
          nonBlank("a datacenter name"),
          "Cassandra local datacenter")
      .define("cassandra.keyspace", STRING, "sand", KEYSPACE, "keyspace of the cluster state")
      .define(
          "cassandra.replication",
          INT,
          1,
          between(1, 99),
          "replication factor of the keyspace when it is created (SimpleStrategy)")
      .define(
          "kafka.user",
          STRING,
          "",
          Check.of(v -> v.toString().matches("[A-Za-z0-9._-]{0,64}"), "a user name, or empty"),
          "the SASL/SCRAM-SHA-512 user this process logs in to Kafka as (its role: hostagent, frontend); empty = no "
              + "login (the single-host system on loopback); a cluster's bring-up sets it")
      .define(
          "kafka.password.file",
          STRING,
          "",
          emptyOr("no login", ABSOLUTE_PATH),
          "file (mode 600) holding kafka.user's password; generated at bring-up in the state dir's secrets/")
      .define(
          "cassandra.user",
          STRING,
          "",
          Check.of(v -> v.toString().matches("[A-Za-z0-9._-]{0,64}"), "a user name, or empty"),
          "the Cassandra role this process logs in as (PasswordAuthenticator; the data layer uses it too); empty = "
              + "no login (the single-host system on loopback); a cluster's bring-up sets it")
      .define(
          "cassandra.password.file",
          STRING,
          "",
          emptyOr("no login", ABSOLUTE_PATH),
          "file (mode 600) holding cassandra.user's password; generated at bring-up in the state dir's secrets/");

  /** From the environment ({@code SAND_CLUSTER_*}) and defaults; a bad value throws naming it. */
  public static ClusterSettings fromEnvironment(Map<String, String> env) {
    return from(DEF.parse(env, Map.of()));
  }

  public static ClusterSettings from(Config c) {
    return new ClusterSettings(
        c.getString("kafka.bootstrap"),
        CassandraContacts.parse(c.getString("cassandra.contact")),
        c.getString("cassandra.datacenter"),
        c.getString("cassandra.keyspace"),
        c.getInt("cassandra.replication"),
        c.getInt("kafka.replication"),
        login(c, "kafka"),
        login(c, "cassandra"));
  }

  private static Optional<Login> login(Config c, String which) {
    String user = c.getString(which + ".user").strip();
    String file = c.getString(which + ".password.file").strip();
    if (user.isEmpty()) {
      return Optional.empty();
    }
    if (file.isEmpty()) {
      throw new IllegalArgumentException(
          "cluster: " + which + ".user is set but " + which + ".password.file is not "
              + "(SAND_CLUSTER_" + which.toUpperCase(Locale.ROOT) + "_PASSWORD_FILE)");
    }
    return Optional.of(new Login(user, Path.of(file)));
  }

  /** The cluster state in this cluster's Cassandra (creating its keyspace and tables when missing). */
  public CassandraClusterStore connectStore() {
    return CassandraClusterStore.connect(
        cassandraContacts,
        cassandraDatacenter,
        cassandraKeyspace,
        cassandraReplication,
        cassandraLogin);
  }
}
