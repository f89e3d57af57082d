package sand.hostagent;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables;
import sand.hostagent.bridge.InstanceReport;

/**
 * Stores the log lines of every grain instance (context.log, stdout, stderr, tracebacks) from its LQ_HA
 * report into Cassandra with a time to live, so a frontend on any host can serve them by execution id.
 *
 * <p>Only under the execution the host agent knows for the report's event ({@link InstanceReport#executionBound()}):
 * a report is the grain's own writing, and an execution id is no secret (any caller of an application gets one),
 * so a grain naming another tenant's execution writes nothing there. The writes go to Cassandra on a thread of their
 * own with a bounded queue ({@value #QUEUE} reports, {@link #MAX_QUEUED_CHARS} characters; full: the lines are
 * dropped and counted), never on the threads serving reports.
 */
final class ExecutionLogs implements Consumer<InstanceReport>, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutionLogs.class);
  private static final int MAX_LINE = 64 * 1024;
  /** Most lines kept of one report (a grain logging more has the rest cut, with a line saying so). */
  static final int MAX_LINES = 1000;

  private static final int QUEUE = 1024;
  /** Most characters of log lines waiting for Cassandra, all reports together (the queue's memory). */
  static final long MAX_QUEUED_CHARS = 16L << 20;

  private final HostAgentTables store;
  private final Duration ttl;
  private final ThreadPoolExecutor writer;
  private final LongAdder dropped = new LongAdder();
  private final AtomicLong queuedChars = new AtomicLong();

  ExecutionLogs(HostAgentTables store, Duration ttl) {
    this.store = store;
    this.ttl = ttl;
    this.writer = new ThreadPoolExecutor(
        1,
        1,
        30,
        TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(QUEUE),
        r -> {
          Thread t = new Thread(r, "sand-execution-logs");
          t.setDaemon(true);
          return t;
        },
        new ThreadPoolExecutor.AbortPolicy());
    writer.allowCoreThreadTimeOut(true);
  }

  @Override
  public void accept(InstanceReport report) {
    if (!report.executionBound() || report.executionId().isEmpty()) {
      return;
    }
    List<HostAgentTables.LogLine> lines = new ArrayList<>();
    int seq = 0;
    JsonNode logs = report.json().path("logs");
    for (JsonNode l : logs) {
      if (l.isArray() && l.size() == 3) {
        if (lines.size() == MAX_LINES) {
          lines.add(new HostAgentTables.LogLine(
              report.executionId(),
              l.get(0).asLong(),
              seq,
              report.grain(),
              "WARNING",
              "(" + (logs.size() - MAX_LINES)
                  + " more log lines of this instance not kept: at most " + MAX_LINES + ")"));
          break;
        }
        String text = l.get(2).asText();
        lines.add(new HostAgentTables.LogLine(
            report.executionId(),
            l.get(0).asLong(),
            seq++,
            report.grain(),
            cap(l.get(1).asText(), 16),
            text.length() > MAX_LINE ? text.substring(0, MAX_LINE) + "..." : text));
      }
    }
    if (lines.isEmpty()) {
      return;
    }
    long chars = 0;
    for (HostAgentTables.LogLine l : lines) {
      chars += l.text().length() + 64;
    }
    if (queuedChars.addAndGet(chars)
        > MAX_QUEUED_CHARS) { // Cassandra is behind: these lines are not kept
      queuedChars.addAndGet(-chars);
      dropped.add(lines.size());
      return;
    }
    long held = chars;
    try {
      writer.execute(() -> {
        try {
          store(report, lines);
        } finally {
          queuedChars.addAndGet(-held);
        }
      });
    } catch (RejectedExecutionException e) {
      queuedChars.addAndGet(-chars);
      dropped.add(lines.size());
    }
  }

  private void store(InstanceReport report, List<HostAgentTables.LogLine> lines) {
    try {
      store.appendLogs(lines, ttl);
    } catch (RuntimeException e) {
      // Logs are best effort: losing them must never hold up events.
      LOG.warn(
          "[app {} grain {} execution {}] could not store {} log lines: {}",
          report.app(),
          report.grain(),
          InstanceReport.shown(report.executionId()),
          lines.size(),
          e.toString());
    }
  }

  private static String cap(String s, int chars) {
    return s.length() > chars ? s.substring(0, chars) : s;
  }

  /** Log lines dropped because Cassandra was behind (the queue was full). */
  long dropped() {
    return dropped.sum();
  }

  /** Wait (bounded) for the lines queued so far, for tests and shutdown. */
  boolean drain(long timeoutMs) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (writer.getActiveCount() > 0 || !writer.getQueue().isEmpty()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  @Override
  public void close() {
    writer.shutdown();
    try {
      writer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
