package sand.localbus;

import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.nonBlank;

import java.util.Map;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Check;
import sand.common.ConfigDef.Type;

/**
 * The bus's settings, declared once. Standalone, they are the "localbus" component
 * ({@code SAND_LOCALBUS_<KEY>}, see {@link #definition()}); a host agent that embeds the bus declares
 * the same keys under a prefix of its own with {@link #declare(ConfigDef, String)} and reads them back
 * with {@link #from(ConfigDef.Config, String)}.
 *
 * @param host address the Thrift TCP endpoint binds
 * @param port its port; 0 picks a free one
 * @param unixSocket path of the Unix socket endpoint, or "" for none
 * @param maxConnections most client connections per endpoint (one thread each)
 * @param queueCapacity most messages per grain queue
 * @param hostAgentQueueCapacity most messages in LQ_HA
 * @param messageMaxBytes largest payload accepted
 * @param appQueuedMaxBytes most bytes one application may have waiting (its queues and LQ_HA), counting
 *     each message as its payload plus {@link LocalMessageBus#MESSAGE_OVERHEAD_BYTES}
 * @param queuedMaxBytes most bytes waiting in the whole bus, counted the same way
 * @param appQueuesMax most grain queues one application may have
 * @param haQueueAppCapacity most messages one application may have in LQ_HA
 * @param appMaxConnections most connections open at once on each of one application's own endpoints (its
 *     sandbox's bus.sock and data.sock); each of the sandbox's processes opens at most one to each
 */
public record LocalBusSettings(
    String host,
    int port,
    String unixSocket,
    int maxConnections,
    int queueCapacity,
    int hostAgentQueueCapacity,
    int messageMaxBytes,
    long appQueuedMaxBytes,
    long queuedMaxBytes,
    int appQueuesMax,
    int haQueueAppCapacity,
    int appMaxConnections) {

  public static final String COMPONENT = "localbus";
  public static final String HOST = "host";
  public static final String PORT = "port";
  public static final String CREDENTIAL = "credential";
  public static final String QUEUE_CAPACITY = "queue.capacity";
  public static final String HA_QUEUE_CAPACITY = "ha.queue.capacity";
  public static final String MESSAGE_MAX_BYTES = "message.max.bytes";
  public static final String MAX_CONNECTIONS = "max.connections";
  public static final String UNIX_SOCKET = "unix.socket";
  public static final String APP_QUEUED_MAX_BYTES = "app.queued.max.bytes";
  public static final String QUEUED_MAX_BYTES = "queued.max.bytes";
  public static final String APP_QUEUES_MAX = "app.queues.max";
  public static final String HA_QUEUE_APP_CAPACITY = "ha.queue.app.capacity";
  public static final String APP_MAX_CONNECTIONS = "app.max.connections";

  /** A sane bound: a message is read whole into the heap (its string cap adds ThriftLimits.HEADROOM_BYTES). */
  public static final int MESSAGE_MAX_BYTES_LIMIT = 96 << 20;

  // Each numeric setting's bounds, stated once: the declaration below and the constructor check the
  // same object,
  // so a record built in code (tests, the host agent) meets what the environment must.
  private static final Check MAX_CONNECTIONS_RANGE = between(1, 1_000_000);
  private static final Check QUEUE_CAPACITY_RANGE = between(1, Integer.MAX_VALUE);
  private static final Check HA_QUEUE_CAPACITY_RANGE = between(1, Integer.MAX_VALUE);
  private static final Check MESSAGE_MAX_BYTES_RANGE = between(1, MESSAGE_MAX_BYTES_LIMIT);
  private static final Check APP_QUEUED_MAX_BYTES_RANGE = between(1, Long.MAX_VALUE);
  private static final Check QUEUED_MAX_BYTES_RANGE = between(1, Long.MAX_VALUE);
  private static final Check APP_QUEUES_MAX_RANGE = between(1, Integer.MAX_VALUE);
  private static final Check HA_QUEUE_APP_CAPACITY_RANGE = between(1, Integer.MAX_VALUE);
  private static final Check APP_MAX_CONNECTIONS_RANGE = between(1, 1_000_000);

  public LocalBusSettings {
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException(
          "localbus: host must be an address to bind, e.g. 127.0.0.1");
    }
    unixSocket = unixSocket == null ? "" : unixSocket;
    check(PORT, port, Type.INT, ConfigDef.PORT);
    check(MAX_CONNECTIONS, maxConnections, Type.INT, MAX_CONNECTIONS_RANGE);
    check(QUEUE_CAPACITY, queueCapacity, Type.INT, QUEUE_CAPACITY_RANGE);
    check(HA_QUEUE_CAPACITY, hostAgentQueueCapacity, Type.INT, HA_QUEUE_CAPACITY_RANGE);
    check(MESSAGE_MAX_BYTES, messageMaxBytes, Type.INT, MESSAGE_MAX_BYTES_RANGE);
    check(APP_QUEUED_MAX_BYTES, appQueuedMaxBytes, Type.LONG, APP_QUEUED_MAX_BYTES_RANGE);
    check(QUEUED_MAX_BYTES, queuedMaxBytes, Type.LONG, QUEUED_MAX_BYTES_RANGE);
    check(APP_QUEUES_MAX, appQueuesMax, Type.INT, APP_QUEUES_MAX_RANGE);
    check(HA_QUEUE_APP_CAPACITY, haQueueAppCapacity, Type.INT, HA_QUEUE_APP_CAPACITY_RANGE);
    check(APP_MAX_CONNECTIONS, appMaxConnections, Type.INT, APP_MAX_CONNECTIONS_RANGE);
    // A grain's largest batch is one message to a next grain plus its copy to LQ_HA: it must fit a
    // quota.
    if (appQueuedMaxBytes < 2L * messageMaxBytes) {
      throw new IllegalArgumentException("localbus: " + APP_QUEUED_MAX_BYTES + "="
          + appQueuedMaxBytes + " must be at " + "least 2 x " + MESSAGE_MAX_BYTES + " ("
          + 2L * messageMaxBytes + "): a message and its copy to LQ_HA");
    }
    if (queuedMaxBytes < appQueuedMaxBytes) {
      throw new IllegalArgumentException("localbus: " + QUEUED_MAX_BYTES + "=" + queuedMaxBytes
          + " must be at least " + APP_QUEUED_MAX_BYTES + "=" + appQueuedMaxBytes);
    }
  }

  /** Every setting at its default. */
  public static LocalBusSettings defaults() {
    return from(definition().parse(Map.of(), Map.of()));
  }

  /** The standalone bus's settings: {@link #declare} plus the host agent credential. */
  public static ConfigDef definition() {
    ConfigDef def = new ConfigDef(COMPONENT);
    def.define(
        CREDENTIAL,
        Type.STRING,
        "",
        "the host agent's credential; required when the bus runs standalone (the embedding host agent "
            + "passes its own credentials instead)");
    return declare(def, "");
  }

  /** Declare the bus settings in {@code def}, each key prefixed with {@code prefix} (e.g. "bus."). */
  public static ConfigDef declare(ConfigDef def, String prefix) {
    return def.define(
            prefix + HOST,
            Type.STRING,
            "127.0.0.1",
            nonBlank("an address to bind"),
            "address of the bus's Thrift TCP endpoint; keep it on loopback or a network sandboxes are "
                + "meant to reach")
        .define(
            prefix + PORT,
            Type.INT,
            9190,
            ConfigDef.PORT,
            "TCP port of the bus; 0 picks a free one")
        .define(
            prefix + UNIX_SOCKET,
            Type.STRING,
            "",
            "path of an additional Unix socket endpoint; empty for none")
        .define(
            prefix + MAX_CONNECTIONS,
            Type.INT,
            4096,
            MAX_CONNECTIONS_RANGE,
            "most client connections per endpoint (one thread each); a connection that presents no known "
                + "credential within 5 s of accept is closed")
        .define(
            prefix + QUEUE_CAPACITY,
            Type.INT,
            10_000,
            QUEUE_CAPACITY_RANGE,
            "most messages in one grain queue; a publish beyond gets QUEUE_FULL")
        .define(
            prefix + HA_QUEUE_CAPACITY,
            Type.INT,
            100_000,
            HA_QUEUE_CAPACITY_RANGE,
            "most messages in the host agent's queue (LQ_HA)")
        .define(
            prefix + MESSAGE_MAX_BYTES,
            Type.INT,
            16 << 20,
            MESSAGE_MAX_BYTES_RANGE,
            "largest payload accepted; larger gets TOO_LARGE")
        .define(
            prefix + APP_QUEUED_MAX_BYTES,
            Type.LONG,
            64L << 20,
            APP_QUEUED_MAX_BYTES_RANGE,
            "most bytes one application may have "
                + "waiting in the bus (its queues and its messages in LQ_HA; payloads plus 64 per message); more gets "
                + "QUOTA_EXCEEDED. At least 2 x message.max.bytes (a message and its copy to LQ_HA)")
        .define(
            prefix + QUEUED_MAX_BYTES,
            Type.LONG,
            512L << 20,
            QUEUED_MAX_BYTES_RANGE,
            "most bytes waiting in the whole bus "
                + "(payloads plus 64 per message), whatever the number of applications: bounds the heap it takes; more "
                + "gets QUOTA_EXCEEDED. At least app.queued.max.bytes")
        .define(
            prefix + APP_QUEUES_MAX,
            Type.INT,
            256,
            APP_QUEUES_MAX_RANGE,
            "most grain queues one application may have; one more gets QUOTA_EXCEEDED")
        .define(
            prefix + HA_QUEUE_APP_CAPACITY,
            Type.INT,
            10_000,
            HA_QUEUE_APP_CAPACITY_RANGE,
            "most messages one application may have in LQ_HA (which the host agent reads "
                + "round-robin across applications); more gets QUEUE_FULL")
        .define(
            prefix + APP_MAX_CONNECTIONS,
            Type.INT,
            256,
            APP_MAX_CONNECTIONS_RANGE,
            "most connections open at once on each of an application's own endpoints (its sandbox's bus.sock "
                + "and data.sock; one thread each); more are closed at accept. Each process of a sandbox opens at "
                + "most one to each: a worker per grain, its standby, one per running instance");
  }

  /** Read the settings declared by {@link #definition()}. */
  public static LocalBusSettings from(ConfigDef.Config config) {
    return from(config, "");
  }

  /** Read the settings declared by {@link #declare} under {@code prefix}. */
  public static LocalBusSettings from(ConfigDef.Config config, String prefix) {
    return new LocalBusSettings(
        config.getString(prefix + HOST),
        config.getInt(prefix + PORT),
        config.getString(prefix + UNIX_SOCKET),
        config.getInt(prefix + MAX_CONNECTIONS),
        config.getInt(prefix + QUEUE_CAPACITY),
        config.getInt(prefix + HA_QUEUE_CAPACITY),
        config.getInt(prefix + MESSAGE_MAX_BYTES),
        config.getLong(prefix + APP_QUEUED_MAX_BYTES),
        config.getLong(prefix + QUEUED_MAX_BYTES),
        config.getInt(prefix + APP_QUEUES_MAX),
        config.getInt(prefix + HA_QUEUE_APP_CAPACITY),
        config.getInt(prefix + APP_MAX_CONNECTIONS));
  }

  public LocalBusSettings withPort(int port) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  public LocalBusSettings withUnixSocket(String unixSocket) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  public LocalBusSettings withQueueCapacity(int queueCapacity) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  public LocalBusSettings withHostAgentQueueCapacity(int hostAgentQueueCapacity) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  public LocalBusSettings withMessageMaxBytes(int messageMaxBytes) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  /** Quotas for tests: per application bytes and queues, host bytes, per application LQ_HA share. */
  public LocalBusSettings withQuotas(
      long appQueuedMaxBytes, long queuedMaxBytes, int appQueuesMax, int haQueueAppCapacity) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  public LocalBusSettings withAppMaxConnections(int appMaxConnections) {
    return new LocalBusSettings(
        host,
        port,
        unixSocket,
        maxConnections,
        queueCapacity,
        hostAgentQueueCapacity,
        messageMaxBytes,
        appQueuedMaxBytes,
        queuedMaxBytes,
        appQueuesMax,
        haQueueAppCapacity,
        appMaxConnections);
  }

  /** The constructor's check of one value, in the words of the declaration's (key, value, what it must be). */
  private static void check(String key, long value, Type type, Check check) {
    if (!check.test(value)) {
      throw new IllegalArgumentException(
          "localbus: " + key + "=" + value + " is invalid: must be " + check.mustBe(type));
    }
  }
}
