package sand.hostagent;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables;
import sand.hostagent.bridge.InstanceReport;

/**
 * Stores the log lines of every grain instance (context.log, stdout, stderr, tracebacks) from its LQ_HA
 * report into Cassandra with a time to live, so a frontend on any host can serve them by execution id.
 */
final class ExecutionLogs implements java.util.function.Consumer<InstanceReport> {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutionLogs.class);
  private static final int MAX_LINE = 64 * 1024;

  private final HostAgentTables store;
  private final Duration ttl;

  ExecutionLogs(HostAgentTables store, Duration ttl) {
    this.store = store;
    this.ttl = ttl;
  }

  @Override
  public void accept(InstanceReport report) {
    List<HostAgentTables.LogLine> lines = new ArrayList<>();
    int seq = 0;
    for (JsonNode l : report.json().path("logs")) {
      if (l.isArray() && l.size() == 3) {
        String text = l.get(2).asText();
        lines.add(new HostAgentTables.LogLine(report.executionId(), l.get(0).asLong(), seq++, report.grain(),
            l.get(1).asText(), text.length() > MAX_LINE ? text.substring(0, MAX_LINE) + "..." : text));
      }
    }
    if (lines.isEmpty() || report.executionId().isEmpty()) {
      return;
    }
    try {
      store.appendLogs(lines, ttl);
    } catch (RuntimeException e) {
      // Logs are best effort: losing them must never hold up events.
      LOG.warn("[app {} grain {} execution {}] could not store {} log lines: {}", report.app(), report.grain(),
          report.executionId(), lines.size(), e.toString());
    }
  }
}
