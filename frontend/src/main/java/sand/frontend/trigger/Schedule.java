package sand.frontend.trigger;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * When a timer ticks: every fixed interval (ticks at whole multiples of it since the epoch, so every frontend
 * computes the same instants) or at a 5-field UNIX cron expression, in UTC (cron-utils parses it).
 */
public sealed interface Schedule {
  Duration MIN_INTERVAL = Duration.ofSeconds(1);
  Duration MAX_INTERVAL = Duration.ofDays(7);

  /** The latest tick at or before {@code epochMs}. */
  long atOrBefore(long epochMs);

  /** The first tick after {@code epochMs}. */
  long after(long epochMs);

  /** As the API shows it: "every 10s" or "cron 0 3 * * *". */
  String describe();

  record Every(Duration interval, String text) implements Schedule {
    @Override
    public long atOrBefore(long epochMs) {
      long ms = interval.toMillis();
      return Math.floorDiv(epochMs, ms) * ms;
    }

    @Override
    public long after(long epochMs) {
      return atOrBefore(epochMs) + interval.toMillis();
    }

    @Override
    public String describe() {
      return "every " + text;
    }
  }

  record Cron(String expression, ExecutionTime times) implements Schedule {
    @Override
    public long atOrBefore(long epochMs) {
      ZonedDateTime t = utc(epochMs);
      if (times.isMatch(t.withNano(0)) && t.getSecond() == 0) {
        return t.withNano(0).toInstant().toEpochMilli();
      }
      return times.lastExecution(t).map(z -> z.toInstant().toEpochMilli()).orElse(Long.MIN_VALUE);
    }

    @Override
    public long after(long epochMs) {
      return times
          .nextExecution(utc(epochMs))
          .map(z -> z.toInstant().toEpochMilli())
          .orElse(Long.MAX_VALUE);
    }

    @Override
    public String describe() {
      return "cron " + expression;
    }

    private static ZonedDateTime utc(long epochMs) {
      return Instant.ofEpochMilli(epochMs).atZone(ZoneOffset.UTC);
    }
  }

  Pattern DURATION = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

  /** "10s", "5m", "1h", "1d", "1500ms": 1 s to 7 days. */
  static Every every(String text) {
    Matcher m = DURATION.matcher(text == null ? "" : text.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException("every='" + text
          + "' is not a duration: a number and a unit, ms, s, m, h or d (e.g. 10s, 5m, 1h)");
    }
    long n = Long.parseLong(m.group(1));
    Duration d = switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
    if (d.compareTo(MIN_INTERVAL) < 0 || d.compareTo(MAX_INTERVAL) > 0) {
      throw new IllegalArgumentException("every='" + text + "' must be between 1s and 7d");
    }
    return new Every(d, m.group(0));
  }

  /** A 5-field UNIX cron expression (minute hour day-of-month month day-of-week), in UTC. */
  static Cron cron(String expression) {
    String e = expression == null ? "" : expression.trim().replaceAll("\\s+", " ");
    if (e.split(" ").length != 5) {
      throw new IllegalArgumentException("cron='" + expression
          + "' must have 5 fields: minute hour day-of-month month day-of-week, e.g. '*/5 * * * *'");
    }
    try {
      var parser = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
      var cron = parser.parse(e);
      cron.validate();
      return new Cron(e, ExecutionTime.forCron(cron));
    } catch (IllegalArgumentException | UnsupportedOperationException x) {
      throw new IllegalArgumentException(
          "cron='" + expression + "' does not parse: " + x.getMessage());
    }
  }
}
