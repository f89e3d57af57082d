package sand.hostagent.cluster;

import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.between;

import java.time.Duration;
import java.util.Map;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;

/**
 * What the operator tunes of the cluster's scheduler (docs/operations.md "Elastic placement"), declared in the host
 * agent's settings under {@code scheduler.} (every host agent may be elected).
 *
 * @param period        how often the elected scheduler looks at the applications it places
 * @param scaleOutQueued events queued per placed host that make an application take one host more (when seen at two
 *                       looks in a row)
 * @param saturatedCpu   a placed host's CPU at or above this percent, with the application's events queued there, also
 *                       makes it take one host more
 * @param settle         after a change of an application's placement, no other scale-out of it for this long (the new
 *                       host's sandbox starts and takes its share)
 */
public record SchedulerSettings(
    Duration period, int scaleOutQueued, int saturatedCpu, Duration settle) {
  public static final String PERIOD_MS = "period.ms";
  public static final String SCALE_OUT_QUEUED = "scale.out.queued";
  public static final String SATURATED_CPU_PERCENT = "saturated.cpu.percent";
  public static final String SETTLE_MS = "settle.ms";

  /** Declare the scheduler's settings in {@code def}, each key prefixed with {@code prefix} ("scheduler."). */
  public static ConfigDef declare(ConfigDef def, String prefix) {
    return def.define(
            prefix + PERIOD_MS,
            INT,
            2000,
            between(100, 600_000),
            "how often the elected scheduler (the live host agent of the lowest id) looks at the applications it "
                + "places (those with the setting max_hosts)")
        .define(
            prefix + SCALE_OUT_QUEUED,
            INT,
            4,
            between(1, 1_000_000),
            "events of an application queued per host it runs on, at two looks in a row, that make the scheduler "
                + "start it on one host more (up to its max_hosts)")
        .define(
            prefix + SATURATED_CPU_PERCENT,
            INT,
            90,
            between(1, 101),
            "a host at or above this CPU percent with an application's events queued also makes the scheduler "
                + "start that application on one host more; 101 = never")
        .define(
            prefix + SETTLE_MS,
            INT,
            5000,
            between(0, 600_000),
            "after the scheduler changes an application's hosts, how long before it adds another (the new "
                + "sandbox starts and takes its share of the requests)");
  }

  public static SchedulerSettings from(Config c, String prefix) {
    return new SchedulerSettings(
        Duration.ofMillis(c.getInt(prefix + PERIOD_MS)),
        c.getInt(prefix + SCALE_OUT_QUEUED),
        c.getInt(prefix + SATURATED_CPU_PERCENT),
        Duration.ofMillis(c.getInt(prefix + SETTLE_MS)));
  }

  public static SchedulerSettings defaults() {
    return from(declare(new ConfigDef("hostagent"), "").parse(Map.of(), Map.of()), "");
  }
}
