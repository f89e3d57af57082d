package sand.hostagent.bridge;

import static sand.common.ConfigDef.between;

import java.time.Duration;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Type;

/**
 * What the host agent gives one application's LQ_HA reports (issue 26): grains write their reports themselves,
 * so every bound here holds whatever a hostile grain writes. Declared with the other bridge settings
 * ({@link BridgeSettings#declare}).
 *
 * @param threads           threads serving the applications' report queues, round-robin, one report of one
 *                          application at a time (an application's reports keep their order)
 * @param appQueueMessages  most reports of one application taken from LQ_HA and not handled yet; more are refused
 *                          (counted): only that application's events wait for recovery
 * @param appQueueBytes     the same in payload bytes (a queue always takes one report, however large); all queues
 *                          together hold at most {@link BridgeSettings#maxPendingBytes()} (their reports hold
 *                          its budget), so by default only the count bounds one application
 * @param dataItems         most distinct data items a finished report may name; a longer list gets no data flag
 *                          (recovery then runs the event again rather than trust its data: always safe)
 * @param inFlightMax       most events one application's grain instances may have in flight here as delivered
 *                          locally (the agent cannot see the delivery, only the instance's word); more are refused
 * @param inFlightMaxBytes  the same in bytes of those events
 * @param inFlightExpiry    a locally delivered event not finished within this is forgotten: its backup no longer
 *                          holds its partition's commit (a forged one is never finished)
 * @param appInFlightBytes  most bytes of all of one application's events in flight here (delivered and not finished);
 *                          beyond, the agent delivers it no more events (its partitions pause, its gate requests go
 *                          through Kafka) until some finish: a grain taking its events and never reporting holds no
 *                          more than this
 */
public record ReportLimits(
    int threads,
    int appQueueMessages,
    long appQueueBytes,
    int dataItems,
    int inFlightMax,
    long inFlightMaxBytes,
    Duration inFlightExpiry,
    long appInFlightBytes) {

  public static final String THREADS = "ha.threads";
  public static final String APP_QUEUE_MESSAGES = "ha.app.queue.messages";
  public static final String APP_QUEUE_BYTES = "ha.app.queue.bytes";
  public static final String DATA_ITEMS = "report.data.max";
  public static final String IN_FLIGHT_MAX = "local.in.flight.app.max";
  public static final String IN_FLIGHT_MAX_BYTES = "local.in.flight.app.max.bytes";
  public static final String IN_FLIGHT_EXPIRY_MS = "local.in.flight.expiry.ms";
  public static final String APP_IN_FLIGHT_BYTES = "in.flight.app.max.bytes";

  static ConfigDef declare(ConfigDef def, String prefix) {
    return def.define(
            prefix + THREADS,
            Type.INT,
            2,
            between(1, 64),
            "threads handling grain instances' reports, round-robin across applications (one application's reports "
                + "in order, one at a time)")
        .define(
            prefix + APP_QUEUE_MESSAGES,
            Type.INT,
            10_000,
            between(1, 1_000_000),
            "most reports of one application taken from LQ_HA and not yet handled; more are refused and counted "
                + "(their events wait for recovery); keep it at least bus.ha.queue.app.capacity, so the agent refuses "
                + "nothing the bus would have held")
        .define(
            prefix + APP_QUEUE_BYTES,
            Type.LONG,
            64L << 20,
            between(1, Long.MAX_VALUE),
            "most bytes of those reports (one report is always taken); keep it at least 2 x bus.message.max.bytes "
                + "(a legitimate burst of large results must not be refused); the reports taken from LQ_HA of all "
                + "applications share bridge.max.pending.bytes anyway")
        .define(
            prefix + DATA_ITEMS,
            Type.INT,
            256,
            between(0, 100_000),
            "most distinct data items a finished report may name; a longer list gets no data flag (recovery re-runs "
                + "the event instead)")
        .define(
            prefix + IN_FLIGHT_MAX,
            Type.INT,
            1000,
            between(1, 10_000_000),
            "most events one application may have in flight on this host as delivered locally by its grain "
                + "instances; more such outputs are refused and counted")
        .define(
            prefix + IN_FLIGHT_MAX_BYTES,
            Type.LONG,
            16L << 20,
            between(1, Long.MAX_VALUE),
            "most bytes of those events")
        .define(
            prefix + IN_FLIGHT_EXPIRY_MS,
            Type.LONG,
            600_000L,
            between(1000, Long.MAX_VALUE),
            "a locally delivered event not finished within this is forgotten (its backup no longer holds its "
                + "partition's commit); keep it above the longest queue wait plus grain timeout")
        .define(
            prefix + APP_IN_FLIGHT_BYTES,
            Type.LONG,
            256L << 20,
            between(1, Long.MAX_VALUE),
            "most bytes of one application's events in flight on this host (delivered, not finished); beyond, it is "
                + "delivered no more until some finish (its partitions pause; its gate requests go through Kafka)");
  }

  static ReportLimits from(ConfigDef.Config c, String prefix) {
    return new ReportLimits(
        c.getInt(prefix + THREADS),
        c.getInt(prefix + APP_QUEUE_MESSAGES),
        c.getLong(prefix + APP_QUEUE_BYTES),
        c.getInt(prefix + DATA_ITEMS),
        c.getInt(prefix + IN_FLIGHT_MAX),
        c.getLong(prefix + IN_FLIGHT_MAX_BYTES),
        Duration.ofMillis(c.getLong(prefix + IN_FLIGHT_EXPIRY_MS)),
        c.getLong(prefix + APP_IN_FLIGHT_BYTES));
  }
}
