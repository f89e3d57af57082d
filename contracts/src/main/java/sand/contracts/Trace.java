package sand.contracts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The per-hop timeline an event carries (its {@code "trace"}): every part of the platform it passes appends
 * one entry {@code [hop, where, t1, t2, ...]} of monotonic-clock nanoseconds ({@code System.nanoTime()} in
 * Java, {@code time.monotonic_ns()} in Python: the same clock for every process of one host, sandboxes
 * included). An output inherits its input's trace, so the result that reaches the frontend carries the
 * whole path. The frontend stores it with the execution ({@code GET /api/v1/executions/{id}}, "timings").
 * Times taken on different hosts are not comparable: the {@code where} of an entry says whose clock it is.
 */
public final class Trace {
  /**
   * A trigger started the execution (docs/triggers.md): [fired]. Its {@code where} names the trigger and the frontend
   * that fired it, e.g. {@code timer:nightly@fe-8081}.
   */
  public static final String TRIGGER = "trigger";

  /** The frontend took the request: [receive]. */
  public static final String FRONTEND = "frontend";
  /** A host agent took the event (from Kafka or a frontend) and put it into a local queue: [taken, queued]. */
  public static final String AGENT_IN = "agent.in";
  /** A grain ran it: [worker polled, instance started, handler started, handler ended, outputs published]. */
  public static final String GRAIN = "grain";
  /** A host agent took the last grain's report from LQ_HA and sent the result on: [taken, sent]. */
  public static final String AGENT_OUT = "agent.out";
  /** The frontend got the result and answered: [result received, reply sent]. */
  public static final String FRONTEND_OUT = "frontend.out";

  /** The name of each time of each hop, in order: the one declaration both languages follow. */
  public static final Map<String, List<String>> STEPS = orderedSteps();

  private static Map<String, List<String>> orderedSteps() {
    Map<String, List<String>> m = new LinkedHashMap<>();
    m.put(TRIGGER, List.of("event fired"));
    m.put(FRONTEND, List.of("request received"));
    m.put(AGENT_IN, List.of("event taken", "event queued"));
    m.put(
        GRAIN,
        List.of(
            "worker polled",
            "instance started",
            "handler started",
            "handler ended",
            "outputs published"));
    m.put(AGENT_OUT, List.of("report taken", "result sent"));
    m.put(FRONTEND_OUT, List.of("result received", "reply sent"));
    return Collections.unmodifiableMap(m);
  }

  /** One instant of the timeline. */
  public record Step(String hop, String where, String step, long nanos) {}

  private final ArrayNode entries;

  Trace(ArrayNode entries) {
    this.entries = entries;
  }

  /** A trace of its own (the frontend's part of an execution). */
  public static Trace empty() {
    return new Trace(JsonNodeFactory.instance.arrayNode());
  }

  /** A trace read back from storage (a JSON array as {@link #entries()} wrote it); malformed entries are skipped. */
  public static Trace of(JsonNode entries) {
    return new Trace(entries instanceof ArrayNode a ? a : JsonNodeFactory.instance.arrayNode());
  }

  static void append(ArrayNode a, String hop, String where, long... times) {
    ArrayNode e = a.addArray().add(hop).add(where);
    for (long t : times) {
      e.add(t);
    }
  }

  public Trace add(String hop, String where, long... times) {
    append(entries, hop, where, times);
    return this;
  }

  /** This trace followed by {@code other}'s entries. */
  public Trace plus(Trace other) {
    ArrayNode all = entries.deepCopy();
    all.addAll(other.entries);
    return new Trace(all);
  }

  /** The entries as they travel. */
  public ArrayNode entries() {
    return entries;
  }

  /** Every instant, in the trace's order; entries of unknown hops or with missing times are skipped. */
  public List<Step> steps() {
    List<Step> out = new ArrayList<>();
    for (JsonNode e : entries) {
      List<String> names = e.isArray() && e.size() >= 2 ? STEPS.get(e.get(0).asText()) : null;
      if (names == null || e.size() != 2 + names.size()) {
        continue;
      }
      for (int i = 0; i < names.size(); i++) {
        out.add(new Step(
            e.get(0).asText(), e.get(1).asText(), names.get(i), e.get(2 + i).asLong()));
      }
    }
    return out;
  }

  /**
   * The timeline as the API shows it: {@code [{"step", "where", "at_ms", "delta_ms"}]}, times relative to the
   * first instant, each with the time since the one before.
   */
  public ArrayNode timeline() {
    ArrayNode out = JsonNodeFactory.instance.arrayNode();
    List<Step> steps = steps();
    if (steps.isEmpty()) {
      return out;
    }
    long first = steps.get(0).nanos();
    long prev = first;
    for (Step s : steps) {
      ObjectNode o = out.addObject();
      o.put(
          "step",
          s.hop().equals(GRAIN) ? s.where() + ": " + s.step() : label(s.hop()) + ": " + s.step());
      o.put("where", s.where());
      o.put("at_ms", Math.round((s.nanos() - first) / 1e3) / 1e3);
      o.put("delta_ms", Math.round((s.nanos() - prev) / 1e3) / 1e3);
      prev = s.nanos();
    }
    return out;
  }

  /** A join's label on a branch's grain entry (grainworker/aslrun.py): {@code "<grain> [<state> item|branch <i>]"}. */
  private static final Pattern BRANCH =
      Pattern.compile("^(.*?) \\[([^\\]\\s]+) (item|branch) (\\d+)\\](.*)$");

  /**
   * One row per grain entry, in the trace's order: {@code {"instance", "grain", "polled_ms", "started_ms",
   * "ended_ms", "host", "parent", and for a fan-out's branch "state", "item" or "branch"}}, times as {@link #timeline()}'s.
   * The parent is the instance before it on the same branch, the first one's the instance that fanned out (an
   * ASL state run inline is a row whose parent is the instance that ran it). The host is the one whose agent
   * queued its event ({@code agent.in}), else its parent's (the local bus). Python writes the labels
   * (aslrun._merge_traces); an entry it did not label is on the machine's main path.
   */
  public ArrayNode instances() {
    ArrayNode out = JsonNodeFactory.instance.arrayNode();
    List<Step> steps = steps();
    long first = steps.isEmpty() ? 0 : steps.get(0).nanos();
    Map<String, Integer> lastOnPath =
        new LinkedHashMap<>(); // the branch labels after the grain -> last row
    String queuedOn =
        null; // the host agent that queued the next grain's event (an event from Kafka)
    for (JsonNode e : entries) {
      if (e.isArray() && e.size() >= 2 && AGENT_IN.equals(e.get(0).asText())) {
        queuedOn = e.get(1).asText();
      }
      if (!e.isArray()
          || e.size() != 2 + STEPS.get(GRAIN).size()
          || !GRAIN.equals(e.get(0).asText())) {
        continue;
      }
      String where = e.get(1).asText();
      Matcher m = BRANCH.matcher(where);
      String path = m.matches() ? where.substring(m.group(1).length()) : "";
      Integer parent = lastOnPath.get(path);
      if (parent == null
          && m.matches()) { // a branch's first instance: the fan-out's, one label out
        parent = lastOnPath.get(m.group(5));
      }
      ObjectNode o = out.addObject().put("instance", out.size() - 1);
      o.put("grain", m.matches() ? m.group(1) : where);
      o.put("polled_ms", ms(e.get(2).asLong() - first));
      o.put("started_ms", ms(e.get(3).asLong() - first));
      o.put("ended_ms", ms(e.get(6).asLong() - first));
      // over the local bus an event stays on its sender's host: the parent's
      String host = queuedOn != null
          ? queuedOn
          : parent == null ? null : out.get(parent).path("host").asText(null);
      queuedOn = null;
      o.put("host", host);
      if (parent == null) {
        o.putNull("parent");
      } else {
        o.put("parent", parent);
      }
      if (m.matches()) {
        o.put("state", m.group(2)).put(m.group(3), Integer.parseInt(m.group(4)));
      }
      lastOnPath.put(path, out.size() - 1);
    }
    return out;
  }

  private static double ms(long nanos) {
    return Math.round(nanos / 1e3) / 1e3;
  }

  private static String label(String hop) {
    return switch (hop) {
      case FRONTEND, FRONTEND_OUT -> "frontend";
      case AGENT_IN, AGENT_OUT -> "host agent";
      default -> hop;
    };
  }
}
