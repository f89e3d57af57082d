package sand.hostagent.bridge;

import static sand.common.ConfigDef.between;
import static sand.common.ConfigDef.nonBlank;

import java.time.Duration;
import java.util.Map;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Type;
import sand.contracts.TopicNames;

/**
 * Settings of the bridge between the local and global buses, declared once ({@link #declare}); the
 * host agent declares them in its own config under a prefix and reads them with {@link #from}.
 *
 * @param hostId            this host's id (in the {@code host} field of the flags it writes, and in logs)
 * @param groupId           the consumer group of the agents ({@value TopicNames#GROUP}; tests use their own)
 * @param pollTimeout       longest wait of one consumer poll
 * @param commitInterval    shortest time between two offset commits
 * @param sendBackoffFirst  first wait before a failed Kafka send is tried again (doubles up to the max)
 * @param sendBackoffMax    longest wait between tries of a failed send
 * @param queueFullBackoffMax longest wait before delivering again into a full local queue
 * @param takeoverTimeout   how long a {@code processing} record of another host may stay unfinished in
 *                          one of this host's partitions before this host processes the event (§3.2), counted
 *                          from the record's latest renewal ({@link BackupRenewal}: its writer renews it every
 *                          third of this while the event is in flight there)
 * @param revokeDrain       how long a host giving up its last partitions waits for their events in flight
 *                          to finish before committing (fewer re-runs); a revocation that leaves this host
 *                          other partitions does not wait (it would stall their delivery)
 * @param maxPendingBytes   memory for reports whose backups, results or flags Kafka has not taken yet;
 *                          beyond it the LQ_HA processor stops taking reports (backpressure)
 * @param haPollMessages    most LQ_HA messages taken per poll
 * @param haPollTimeout     longest wait of one LQ_HA poll
 * @param lostRetries       how many times an event whose grain instance was lost (killed from outside, or its
 *                          grain worker or sandbox died) is re-delivered into its local queue before its caller
 *                          gets an error instead ({@link LocalRecovery})
 * @param recoveryFlags     whether a taken-over partition's condition flags decide what is processed again (the
 *                          paper's recovery); false processes every event of the range again, as a global bus
 *                          without flags would: the baseline of benchmarks/recovery.py, not for production
 * @param reports           the bounds of what one application's reports may cost the host agent
 */
public record BridgeSettings(
    String hostId,
    String groupId,
    Duration pollTimeout,
    Duration commitInterval,
    Duration sendBackoffFirst,
    Duration sendBackoffMax,
    Duration queueFullBackoffMax,
    Duration takeoverTimeout,
    Duration revokeDrain,
    long maxPendingBytes,
    int haPollMessages,
    Duration haPollTimeout,
    int lostRetries,
    boolean recoveryFlags,
    ReportLimits reports) {

  public static final String GROUP_ID = "group.id";
  public static final String POLL_TIMEOUT_MS = "poll.timeout.ms";
  public static final String COMMIT_INTERVAL_MS = "commit.interval.ms";
  public static final String SEND_BACKOFF_MS = "send.backoff.ms";
  public static final String SEND_BACKOFF_MAX_MS = "send.backoff.max.ms";
  public static final String QUEUE_FULL_BACKOFF_MAX_MS = "queue.full.backoff.max.ms";
  public static final String TAKEOVER_TIMEOUT_MS = "takeover.timeout.ms";
  public static final String REVOKE_DRAIN_MS = "revoke.drain.ms";
  public static final String MAX_PENDING_BYTES = "max.pending.bytes";
  public static final String HA_POLL_MESSAGES = "ha.poll.messages";
  public static final String HA_POLL_TIMEOUT_MS = "ha.poll.timeout.ms";
  public static final String LOST_RETRIES = "lost.retries";
  public static final String RECOVERY_FLAGS = "recovery.flags";

  public BridgeSettings {
    if (hostId == null || hostId.isBlank()) {
      throw new IllegalArgumentException("bridge: hostId must be this host's id");
    }
    if (groupId == null || groupId.isBlank()) {
      throw new IllegalArgumentException(
          "bridge: " + GROUP_ID + " must be a consumer group, e.g. " + TopicNames.GROUP);
    }
    if (sendBackoffMax.compareTo(sendBackoffFirst) < 0) {
      throw new IllegalArgumentException(
          "bridge: " + SEND_BACKOFF_MAX_MS + "=" + sendBackoffMax.toMillis() + " must be >= "
              + SEND_BACKOFF_MS + "=" + sendBackoffFirst.toMillis());
    }
    if (maxPendingBytes < 1 || haPollMessages < 1) {
      throw new IllegalArgumentException(
          "bridge: " + MAX_PENDING_BYTES + " and " + HA_POLL_MESSAGES + " must be > 0");
    }
  }

  /** Every setting at its default, for host {@code hostId}. */
  public static BridgeSettings defaults(String hostId) {
    return from(declare(new ConfigDef("hostagent"), "").parse(Map.of(), Map.of()), "", hostId);
  }

  /** Declare the bridge settings in {@code def}, each key prefixed with {@code prefix} (e.g. "bridge."). */
  public static ConfigDef declare(ConfigDef def, String prefix) {
    def.define(
            prefix + GROUP_ID,
            Type.STRING,
            TopicNames.GROUP,
            nonBlank("a group id"),
            "consumer group of the host agents on the grain topics")
        .define(
            prefix + POLL_TIMEOUT_MS,
            Type.INT,
            100,
            between(1, 10_000),
            "longest wait of one Kafka consumer poll")
        .define(
            prefix + COMMIT_INTERVAL_MS,
            Type.INT,
            1000,
            between(0, 600_000),
            "shortest time between two commits of the consumed offsets")
        .define(
            prefix + SEND_BACKOFF_MS,
            Type.INT,
            100,
            between(1, 60_000),
            "first wait before a failed Kafka send is tried again (doubles each time)")
        .define(
            prefix + SEND_BACKOFF_MAX_MS,
            Type.INT,
            10_000,
            between(1, 600_000),
            "longest wait between tries of a failed Kafka send")
        .define(
            prefix + QUEUE_FULL_BACKOFF_MAX_MS,
            Type.INT,
            500,
            between(1, 60_000),
            "longest wait before delivering again into a full local queue (the partition is paused meanwhile)")
        .define(
            prefix + TAKEOVER_TIMEOUT_MS,
            Type.LONG,
            300_000L,
            between(1000, Long.MAX_VALUE),
            "how long another host's 'processing' record may stay unfinished in a partition of this "
                + "host, counted from its latest renewal, before this host processes the event; the writing host "
                + "renews it every third of this while the event is in flight there; the same on every host, "
                + "above the longest grain timeout")
        .define(
            prefix + REVOKE_DRAIN_MS,
            Type.INT,
            10_000,
            between(0, 120_000),
            "how long a host giving up its last partitions waits for their events in flight (a revocation that "
                + "leaves it others does not wait)")
        .define(
            prefix + MAX_PENDING_BYTES,
            Type.LONG,
            64L << 20,
            between(1, Long.MAX_VALUE),
            "memory for reports not yet backed up to Kafka; beyond it LQ_HA is not polled (backpressure)")
        .define(
            prefix + HA_POLL_MESSAGES,
            Type.INT,
            256,
            between(1, 1000),
            "most LQ_HA messages taken per poll")
        .define(
            prefix + HA_POLL_TIMEOUT_MS,
            Type.INT,
            200,
            between(0, 60_000),
            "longest wait of one LQ_HA poll")
        .define(
            prefix + LOST_RETRIES,
            Type.INT,
            2,
            between(0, 100),
            "how many times an event whose grain instance was lost (killed by SIGKILL from outside, its grain "
                + "worker or sandbox died) is run again on this host before its caller gets an error result")
        .define(
            prefix + RECOVERY_FLAGS,
            Type.BOOLEAN,
            true,
            "whether the condition flags decide which events of a taken-over partition are processed again; false "
                + "processes all of them again (the baseline of benchmarks/recovery.py, not for production)");
    return ReportLimits.declare(def, prefix);
  }

  /** Read the settings declared by {@link #declare} under {@code prefix}. */
  public static BridgeSettings from(ConfigDef.Config c, String prefix, String hostId) {
    return new BridgeSettings(
        hostId,
        c.getString(prefix + GROUP_ID),
        ms(c.getInt(prefix + POLL_TIMEOUT_MS)),
        ms(c.getInt(prefix + COMMIT_INTERVAL_MS)),
        ms(c.getInt(prefix + SEND_BACKOFF_MS)),
        ms(c.getInt(prefix + SEND_BACKOFF_MAX_MS)),
        ms(c.getInt(prefix + QUEUE_FULL_BACKOFF_MAX_MS)),
        ms(c.getLong(prefix + TAKEOVER_TIMEOUT_MS)),
        ms(c.getInt(prefix + REVOKE_DRAIN_MS)),
        c.getLong(prefix + MAX_PENDING_BYTES),
        c.getInt(prefix + HA_POLL_MESSAGES),
        ms(c.getInt(prefix + HA_POLL_TIMEOUT_MS)),
        c.getInt(prefix + LOST_RETRIES),
        c.getBoolean(prefix + RECOVERY_FLAGS),
        ReportLimits.from(c, prefix));
  }

  public BridgeSettings withGroupId(String v) {
    return new BridgeSettings(
        hostId,
        v,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withCommitInterval(Duration v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        v,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withSendBackoff(Duration first, Duration max) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        first,
        max,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withTakeoverTimeout(Duration v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        v,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withRevokeDrain(Duration v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        v,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withMaxPendingBytes(long v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        v,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withLostRetries(int v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        v,
        recoveryFlags,
        reports);
  }

  public BridgeSettings withRecoveryFlags(boolean v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        v,
        reports);
  }

  public BridgeSettings withReports(ReportLimits v) {
    return new BridgeSettings(
        hostId,
        groupId,
        pollTimeout,
        commitInterval,
        sendBackoffFirst,
        sendBackoffMax,
        queueFullBackoffMax,
        takeoverTimeout,
        revokeDrain,
        maxPendingBytes,
        haPollMessages,
        haPollTimeout,
        lostRetries,
        recoveryFlags,
        v);
  }

  private static Duration ms(long v) {
    return Duration.ofMillis(v);
  }
}
