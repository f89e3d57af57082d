package sand.common.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

@SuppressWarnings("try") // a scope is used for what it sets, not referenced in its block
class SandLayoutTest {
  private final LoggerContext context = new LoggerContext();

  {
    context.setMDCAdapter(MDC.getMDCAdapter());
  }

  @AfterEach
  void reset() {
    LogIdentity.set(null, null);
    MDC.clear();
  }

  private SandLayout layout(String format) {
    SandLayout l = new SandLayout();
    l.setContext(context);
    l.setFormat(format);
    l.start();
    return l;
  }

  private LoggingEvent event(String message, Throwable error) {
    LoggingEvent e = new LoggingEvent(
        "sand.hostagent.bridge.PartitionFeeder",
        context.getLogger("sand.hostagent.bridge.PartitionFeeder"),
        Level.INFO,
        message,
        error,
        null);
    e.setThreadName("bridge-h1");
    e.setTimeStamp(1_796_112_902_123L); // 2026-12-01T08:15:02.123Z
    return e;
  }

  @Test
  void aTextLineStartsWithAnIso8601TimeWithZoneAndNamesComponentHostAppAndExecution() {
    LogIdentity.set("hostagent", "h1");
    String line;
    try (var s = LogIdentity.scope("app1", "exec1")) {
      line = layout("text").doLayout(event("delivered", null));
    }
    String[] words = line.split(" ");
    OffsetDateTime t = OffsetDateTime.parse(words[0]);
    assertEquals(ZoneOffset.UTC, t.getOffset());
    assertEquals("2026-12-01T08:15:02.123Z", words[0]);
    assertEquals(
        "2026-12-01T08:15:02.123Z INFO  hostagent h1 app=app1 exec=exec1 [bridge-h1] PartitionFeeder - delivered\n",
        line);
  }

  @Test
  void aTextLineWithoutAppOrExecutionLeavesThemOutAndAScopeRestoresWhatWasThere() {
    LogIdentity.set("frontend", "fe-h1-8081");
    SandLayout l = layout("text");
    assertEquals(
        "2026-12-01T08:15:02.123Z INFO  frontend fe-h1-8081 [bridge-h1] PartitionFeeder - up\n",
        l.doLayout(event("up", null)));
    try (var outer = LogIdentity.scope("a", null)) {
      try (var inner = LogIdentity.scope("b", "e")) {
        assertTrue(l.doLayout(event("x", null)).contains(" app=b exec=e "));
      }
      assertTrue(l.doLayout(event("x", null)).contains(" fe-h1-8081 app=a [bridge-h1] "));
    }
    assertNull(MDC.get(LogIdentity.APP));
  }

  @Test
  void anEmptyAppLeavesLinesUntaggedAndTheExecutionCanBeAddedPartWay() {
    LogIdentity.set("hostagent", "h1");
    SandLayout l = layout("text");
    LogIdentity.Scope s = LogIdentity.scope("", null); // LQ_HA's own reports: no application yet
    try {
      assertFalse(l.doLayout(event("x", null)).contains("app="));
      s.app("a");
      s.exec("e");
      assertTrue(l.doLayout(event("x", null)).contains(" h1 app=a exec=e [bridge-h1] "));
    } finally {
      s.close();
    }
    assertNull(MDC.get(LogIdentity.APP));
    assertNull(MDC.get(LogIdentity.EXEC));
  }

  @Test
  void aStackTraceFollowsATextLineOnItsOwnLines() {
    String text = layout("text").doLayout(event("failed", new IllegalStateException("boom")));
    String[] lines = text.split("\n");
    assertTrue(lines[0].endsWith(" - failed"), lines[0]);
    assertEquals("java.lang.IllegalStateException: boom", lines[1]);
    assertTrue(lines[2].startsWith("\tat "), lines[2]);
  }

  @Test
  void jsonModeWritesOneValidJsonObjectPerLineWithTheSameFields() throws Exception {
    LogIdentity.set("hostagent", "h1");
    SandLayout l = layout("json");
    String line;
    try (var s = LogIdentity.scope("app1", "exec1")) {
      MDC.put("grain", "g");
      line = l.doLayout(event("say \"hi\"\n\tand \\ \u0001", new RuntimeException("bad")));
    }
    assertTrue(line.endsWith("}\n"));
    assertEquals(
        1,
        line.split("\n").length,
        "one line, even with a stack trace and newlines in the message");
    JsonNode j = new ObjectMapper().readTree(line);
    assertEquals("2026-12-01T08:15:02.123Z", j.get("time").asText());
    OffsetDateTime.parse(j.get("time").asText());
    assertEquals(
        Map.of(
            "level", "INFO",
            "component", "hostagent",
            "host", "h1",
            "app", "app1",
            "exec", "exec1",
            "grain", "g",
            "thread", "bridge-h1",
            "logger", "sand.hostagent.bridge.PartitionFeeder",
            "message", "say \"hi\"\n\tand \\ \u0001"),
        Map.of(
            "level", j.get("level").asText(),
            "component", j.get("component").asText(),
            "host", j.get("host").asText(),
            "app", j.get("app").asText(),
            "exec", j.get("exec").asText(),
            "grain", j.get("grain").asText(),
            "thread", j.get("thread").asText(),
            "logger", j.get("logger").asText(),
            "message", j.get("message").asText()));
    assertTrue(j.get("error").asText().startsWith("java.lang.RuntimeException: bad\n\tat "));
  }

  @Test
  void jsonModeLeavesOutAppAndExecWhenNotKnown() throws Exception {
    JsonNode j = new ObjectMapper().readTree(layout("json").doLayout(event("up", null)));
    assertFalse(j.has("app"));
    assertFalse(j.has("exec"));
    assertEquals("-", j.get("host").asText());
  }

  @Test
  void anUnknownFormatIsReportedAndLogsAsText() {
    SandLayout l = layout("xml");
    assertTrue(l.doLayout(event("up", null)).startsWith("2026-12-01T08:15:02.123Z INFO "));
    assertTrue(context.getStatusManager().getCopyOfStatusList().stream()
        .anyMatch(s -> s.getMessage().contains("SAND_LOG_FORMAT must be text or json, not 'xml'")));
  }
}
