package sand.common.log;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.LayoutBase;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;

/**
 * One log line of a SAND process, as text (default) or as a JSON object (format {@code json}, SAND_LOG_FORMAT):
 *
 * <pre>
 * 2026-11-27T08:15:02.123Z INFO  hostagent h1 app=4f0c.. exec=9b1e.. [bridge-h1] PartitionFeeder - message
 * {"time":"2026-11-27T08:15:02.123Z","level":"INFO","component":"hostagent","host":"h1","app":"4f0c..",
 *  "exec":"9b1e..","thread":"bridge-h1","logger":"sand.hostagent.bridge.PartitionFeeder","message":"message"}
 * </pre>
 *
 * The time is UTC with its zone (ISO-8601, milliseconds); component and host come from {@link LogIdentity#set};
 * app and exec from the thread's MDC (absent when not set), as does any other MDC key in JSON. A stack trace
 * follows a text line on its own lines, and is the "error" field of a JSON line, so a JSON file stays one object
 * per line.
 */
public final class SandLayout extends LayoutBase<ILoggingEvent> {
  static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern(
          "uuuu-MM-dd'T'HH:mm:ss.SSSXXX", Locale.ROOT)
      .withZone(ZoneOffset.UTC);

  private boolean json;

  /** "text" or "json" (logback.xml: {@code <format>${SAND_LOG_FORMAT:-text}</format>}). */
  public void setFormat(String format) {
    String f = format == null ? "" : format.trim().toLowerCase(Locale.ROOT);
    if (!f.equals("text") && !f.equals("json")) {
      addError("SAND_LOG_FORMAT must be text or json, not '" + format + "'; logging as text");
    }
    json = f.equals("json");
  }

  @Override
  public String doLayout(ILoggingEvent e) {
    StringBuilder sb = new StringBuilder(160);
    String time = TIME.format(Instant.ofEpochMilli(e.getTimeStamp()));
    Map<String, String> mdc = e.getMDCPropertyMap();
    IThrowableProxy error = e.getThrowableProxy();
    if (json) {
      sb.append("{\"time\":\"").append(time).append('"');
      field(sb, "level", e.getLevel().toString());
      field(sb, "component", LogIdentity.component());
      field(sb, "host", LogIdentity.host());
      mdcField(sb, mdc, LogIdentity.APP);
      mdcField(sb, mdc, LogIdentity.EXEC);
      for (Map.Entry<String, String> m : mdc.entrySet()) {
        if (!m.getKey().equals(LogIdentity.APP) && !m.getKey().equals(LogIdentity.EXEC)) {
          field(sb, m.getKey(), m.getValue());
        }
      }
      field(sb, "thread", e.getThreadName());
      field(sb, "logger", e.getLoggerName());
      field(sb, "message", e.getFormattedMessage());
      if (error != null) {
        field(sb, "error", ThrowableProxyUtil.asString(error).stripTrailing());
      }
      return sb.append("}\n").toString();
    }
    String level = e.getLevel().toString();
    sb.append(time).append(' ').append(level);
    for (int i = level.length(); i < 5; i++) {
      sb.append(' ');
    }
    sb.append(' ').append(LogIdentity.component()).append(' ').append(LogIdentity.host());
    String app = mdc.get(LogIdentity.APP);
    if (app != null) {
      sb.append(" app=").append(app);
    }
    String exec = mdc.get(LogIdentity.EXEC);
    if (exec != null) {
      sb.append(" exec=").append(exec);
    }
    String logger = e.getLoggerName();
    sb.append(" [").append(e.getThreadName()).append("] ");
    sb.append(logger, logger.lastIndexOf('.') + 1, logger.length());
    sb.append(" - ").append(e.getFormattedMessage()).append('\n');
    if (error != null) {
      sb.append(ThrowableProxyUtil.asString(error)); // its lines end with a line separator
    }
    return sb.toString();
  }

  private static void mdcField(StringBuilder sb, Map<String, String> mdc, String key) {
    String v = mdc.get(key);
    if (v != null) {
      field(sb, key, v);
    }
  }

  private static void field(StringBuilder sb, String key, String value) {
    sb.append(",\"");
    escape(sb, key);
    sb.append("\":");
    if (value == null) {
      sb.append("null");
      return;
    }
    sb.append('"');
    escape(sb, value);
    sb.append('"');
  }

  /** JSON string escaping (RFC 8259): quote, backslash and the control characters. */
  static void escape(StringBuilder sb, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
  }
}
