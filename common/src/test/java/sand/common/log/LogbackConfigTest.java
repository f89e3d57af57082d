package sand.common.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.status.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.MDC;

/** The shipped logback.xml and logback-file.xml: they load cleanly, and that rolling by size keeps every line across a restart. */
class LogbackConfigTest {
  @TempDir
  Path dir;

  @AfterEach
  void clear() {
    System.clearProperty("sand.log.file");
    System.clearProperty("SAND_LOG_MAX_MB");
  }

  private static LoggerContext configured(String resource) throws Exception {
    LoggerContext ctx = new LoggerContext();
    ctx.setMDCAdapter(MDC.getMDCAdapter());
    JoranConfigurator jc = new JoranConfigurator();
    jc.setContext(ctx);
    jc.doConfigure(LogbackConfigTest.class.getResource("/" + resource));
    for (Status s : ctx.getStatusManager().getCopyOfStatusList()) {
      assertTrue(s.getLevel() < Status.WARN, "logback.xml: " + s);
    }
    return ctx;
  }

  @Test
  void logbackXmlLogsToTheConsoleWithTheSharedLevels() throws Exception {
    LoggerContext ctx = configured("logback.xml");
    Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
    assertTrue(root.getAppender("CONSOLE") != null);
    assertEquals(Level.WARN, ctx.getLogger("org.apache.kafka").getLevel());
    assertEquals(Level.INFO, ctx.getLogger("sand").getLevel());
    ctx.stop();
  }

  @Test
  void aLogFileRollsBySizeAndARestartAppendsSoNoLineIsLost() throws Exception {
    Path log = dir.resolve("hostagent.log");
    System.setProperty("sand.log.file", log.toString());
    System.setProperty(
        "SAND_LOG_MAX_MB", "1"); // logback reads system properties before the environment
    String pad = "x".repeat(200);
    int n = 0;
    for (int run = 0;
        run < 2;
        run++) { // two runs of the process: the second appends, never truncates
      LoggerContext ctx = configured("logback-file.xml");
      Logger l = ctx.getLogger("sand.test");
      assertTrue(ctx.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("FILE") != null);
      for (int i = 0; i < 6000; i++) { // ~1.4 MB a run
        l.info("line {} {}", n++, pad);
      }
      ctx.stop();
    }
    List<Path> rolled;
    try (Stream<Path> s = Files.list(dir)) {
      rolled = s.filter(p -> !p.equals(log)).sorted().toList();
    }
    assertFalse(rolled.isEmpty(), "the file rolled past 1 MB");
    Pattern rolledName = Pattern.compile("hostagent\\.log\\.\\d{4}-\\d{2}-\\d{2}\\.\\d+");
    for (Path p : rolled) {
      assertTrue(rolledName.matcher(p.getFileName().toString()).matches(), p.toString());
      assertTrue(Files.size(p) <= 1024 * 1024 + 1024, p + " is about SAND_LOG_MAX_MB");
    }
    List<Path> all = new ArrayList<>(rolled);
    all.add(log);
    boolean[] seen = new boolean[n];
    Pattern number = Pattern.compile(" - line (\\d+) ");
    for (Path p : all) {
      for (String line : lines(p)) {
        Matcher m = number.matcher(line);
        assertTrue(m.find(), line);
        int i = Integer.parseInt(m.group(1));
        assertFalse(seen[i], "line " + i + " twice");
        seen[i] = true;
      }
    }
    for (int i = 0; i < n; i++) {
      assertTrue(seen[i], "line " + i + " lost");
    }
  }

  private static List<String> lines(Path p) throws IOException {
    return Files.readAllLines(p);
  }
}
