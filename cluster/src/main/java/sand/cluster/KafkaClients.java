package sand.cluster;

import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import sand.contracts.ConditionFlag;

/**
 * The real Kafka clients the bridge expects (tests hand in MockProducer/MockConsumer instead). Keys
 * are event ids (strings), values JSON bytes.
 */
public final class KafkaClients {
  /** Largest record the producer sends: a local bus message (16 MiB) plus the flag's own fields. */
  public static final int MAX_REQUEST_BYTES = (16 << 20) + (64 << 10);

  private KafkaClients() {}

  /**
   * A topic SAND creates: records as large as a local bus message (Kafka's default limit is 1 MiB), and, when
   * replicated, a write acknowledged ({@code acks=all}) only once two replicas have it, so the loss of one broker
   * loses no acknowledged backup or flag.
   */
  public static NewTopic newTopic(String name, int partitions, short replication) {
    return new NewTopic(name, partitions, replication)
        .configs(Map.of(
            "max.message.bytes",
            Integer.toString(MAX_REQUEST_BYTES),
            "min.insync.replicas",
            Integer.toString(minInSyncReplicas(replication))));
  }

  /** 2 for a replicated topic (one broker may be lost), 1 for a topic on one broker. */
  public static int minInSyncReplicas(int replication) {
    return Math.min(replication, 2);
  }

  /**
   * What every SAND Kafka client shares: where the brokers are, and that a broker whose host is gone is given up
   * on fast. A host whose link is cut sends no reset, so a connection to its broker waits for the setup timeout:
   * Kafka's 10 s (growing to 30 s) held a host agent's takeover of a dead host's partitions for 18 s on stale
   * leader metadata (benchmarks/recovery.py); in one data center a connection not set up in 2 s is not coming.
   */
  public static Properties clientProperties(String bootstrapServers) {
    return clientProperties(
        bootstrapServers, ClusterSettings.fromEnvironment(System.getenv()).kafkaLogin());
  }

  /**
   * As {@link #clientProperties(String)}, logged in as {@code login} when given: SASL/SCRAM-SHA-512 (the password
   * never crosses the network), which a cluster's brokers require of every client (deploy/kafka.sh).
   * Without a login (the single-host system on loopback) no SASL is configured. The clients that omit the login take
   * this process's own (SAND_CLUSTER_KAFKA_USER / _PASSWORD_FILE).
   */
  public static Properties clientProperties(
      String bootstrapServers, Optional<ClusterSettings.Login> login) {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, 2_000L);
    p.put(CommonClientConfigs.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, 5_000L);
    login.ifPresent(l -> {
      p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
      p.put(SaslConfigs.SASL_MECHANISM, SCRAM);
      // user and password are checked to hold no quote or backslash (ClusterSettings.Login)
      p.put(
          SaslConfigs.SASL_JAAS_CONFIG,
          "org.apache.kafka.common.security.scram.ScramLoginModule required " + "username=\""
              + l.user() + "\" password=\"" + l.password() + "\";");
    });
    return p;
  }

  /** The SASL mechanism of a cluster's Kafka. */
  public static final String SCRAM = "SCRAM-SHA-512";

  /** An admin client's settings: requests time out in 10 s, calls in 20 s (topic creation at start). */
  public static Properties adminProperties(String bootstrapServers) {
    Properties p = clientProperties(bootstrapServers);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
    return p;
  }

  /** {@code flag} as a record for {@code topic}: keyed by its event id; {@code partition} null lets Kafka place it. */
  public static ProducerRecord<String, byte[]> record(
      String topic, Integer partition, ConditionFlag flag) {
    return new ProducerRecord<>(topic, partition, flag.eventId(), flag.value());
  }

  /**
   * The producer's settings: acknowledged by all in-sync replicas, idempotent (no duplicates and
   * per-partition order kept across the producer's own retries), no linger (results are on the request
   * path), and a send that blocks at most 5 s when Kafka is away (the bridge retries after that).
   */
  public static Properties producerProperties(String bootstrapServers, String hostId) {
    Properties p = clientProperties(bootstrapServers);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "sand-hostagent-" + hostId);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_REQUEST_BYTES);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return p;
  }

  /**
   * The consumer's settings: the agents' group, offsets committed by the bridge only, a partition with
   * no committed offset read from its beginning (nothing a frontend wrote before any agent joined is
   * skipped), cooperative rebalancing (a deploy moves only the partitions it must, so events in flight
   * elsewhere are not replayed), and a host declared failed after {@link #SESSION_TIMEOUT_MS} without heartbeats.
   */
  /**
   * A host agent is declared failed after this long without heartbeats (sent on their own thread, every 2 s):
   * Kafka's floor (group.min.session.timeout.ms), for a takeover within ~10 s (with a broker fenced after 6 s).
   */
  public static final int SESSION_TIMEOUT_MS = 6_000;

  public static Properties consumerProperties(
      String bootstrapServers, String groupId, String hostId) {
    Properties p = clientProperties(bootstrapServers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "sand-hostagent-" + hostId);
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
    p.put(
        ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
        CooperativeStickyAssignor.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_TIMEOUT_MS);
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, SESSION_TIMEOUT_MS / 3);
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return p;
  }

  /**
   * The host agent's producer: as {@link #producerProperties}, but records sent within 1 ms share a produce
   * request. What it sends right after an instance ends (the next event's backup, the finished flag, the result's
   * record) goes out together; none of it is on a request's path when the gate delivers results.
   */
  public static Producer<String, byte[]> producer(String bootstrapServers, String hostId) {
    Properties p = producerProperties(bootstrapServers, hostId);
    p.put(ProducerConfig.LINGER_MS_CONFIG, HOST_AGENT_LINGER_MS);
    return new KafkaProducer<>(p);
  }

  static final int HOST_AGENT_LINGER_MS = 1;

  public static Consumer<String, byte[]> consumer(
      String bootstrapServers, String groupId, String hostId) {
    return new KafkaConsumer<>(consumerProperties(bootstrapServers, groupId, hostId));
  }
}
