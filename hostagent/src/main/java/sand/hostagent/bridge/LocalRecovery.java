package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.ConditionFlag;
import sand.contracts.Event;
import sand.contracts.TopicNames;
import sand.hostagent.bridge.InFlightEvents.Home;
import sand.localbus.LocalMessageBus;

/**
 * Recovery of lost grain instances on this host (§4.2.1's replay, done locally and at once instead of at
 * the next rebalance). An event in flight here is lost when the run that took it ends without its report:
 * its grain instance was killed by SIGKILL from outside (the grain worker reports it {@code "lost"}), or its
 * grain worker died (the supervisor reports it {@code "exited"}; events the worker had polled and not yet
 * forked are gone with it), or its whole sandbox died. The event is then delivered again at the head of its
 * grain's local queue, its {@code "attempt"} counted up, at most {@link BridgeSettings#lostRetries()} times;
 * after that its caller gets an error result and the event is finished, so the partition's committed offset
 * moves on either way.
 *
 * <p>A run is lost only as far as this host can tell: an instance that outlived its dead worker still reports,
 * and a report may still be on its way in LQ_HA. So the first report that finishes a re-delivered event wins
 * (its outputs and flags go out as usual) and any later run's reports are dropped whole: the condition flag
 * {@code finished} is written once, a result is sent once.
 */
final class LocalRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(LocalRecovery.class);
  /** Re-delivered events remembered for de-duplication (the oldest are forgotten first). */
  static final int REMEMBERED = 100_000;

  private final String host;
  private final LocalMessageBus bus;
  private final String credential;
  private final InFlightEvents inFlight;
  private final int retries;
  /** "app/event" of events delivered again: false until one of their runs finished them, then true. */
  private final Map<String, Boolean> redelivered = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > REMEMBERED;
    }
  };

  LocalRecovery(
      String host, LocalMessageBus bus, String credential, InFlightEvents inFlight, int retries) {
    this.host = host;
    this.bus = bus;
    this.credential = credential;
    this.inFlight = inFlight;
    this.retries = retries;
  }

  /**
   * The grain worker of {@code app}'s {@code grain} died: every event of that grain in flight here that is
   * no longer in its local queue was taken by it (the next worker is not started before this report).
   */
  synchronized void workerExited(String app, String grain) {
    recoverTaken(app, grain, "its grain worker died");
  }

  /** {@code app}'s sandbox died (it is being started again): every event it had taken is lost. */
  synchronized void sandboxExited(String app) {
    recoverTaken(app, null, "its sandbox died");
  }

  /**
   * A grain worker reported {@code r} {@code "lost"} (its instance killed from outside).
   *
   * @return true when the event runs again (the report's error result must not be sent); false when it is
   *     not in flight here or has used its retries: then the report is handled as the error it carries
   */
  synchronized boolean instanceLost(String app, InstanceReport r) {
    Home home = inFlight.get(app, r.eventId());
    if (home == null || home.event() == null || !home.grain().equals(r.grain())) {
      return false;
    }
    int runs = runs(home);
    if (runs > retries) {
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] event {}: its instance was killed, run {} of it; not run "
              + "again: its caller gets the error",
          host,
          app,
          r.grain(),
          r.executionId(),
          r.eventId(),
          runs);
      finishing(app, r.eventId());
      for (ObjectNode out : r.outputs()) {
        if (out.path("value").path("error") instanceof ObjectNode err) {
          err.put(
              "message",
              err.path("message").asText() + " (run " + runs + " of the event; not run again)");
        }
      }
      return false;
    }
    again(app, List.of(Map.entry(r.eventId(), home)), "its instance was killed");
    return true;
  }

  /**
   * Whether {@code r} comes from a run of an event that another run already finished (drop it whole).
   * Otherwise a finishing report of a re-delivered event is noted as the one that finished it.
   */
  synchronized boolean duplicate(String app, InstanceReport r) {
    String key = app + "/" + r.eventId();
    Boolean done = redelivered.get(key);
    if (done == null) {
      return false;
    }
    if (done) {
      return true;
    }
    if (r.finished() && !"lost".equals(r.status())) {
      redelivered.put(key, true);
    }
    return false;
  }

  /** How many runs of the event have started here: its {@code "attempt"}, 1 for the first. */
  private static int runs(Home home) {
    return Math.max(1, home.event().path("attempt").asInt(1));
  }

  private void finishing(String app, String eventId) {
    redelivered.computeIfPresent(app + "/" + eventId, (k, v) -> true);
  }

  /** Deliver again the events of {@code app} (of {@code grain} only, unless null) no longer in their queue. */
  private void recoverTaken(String app, String grain, String why) {
    Map<String, List<Map.Entry<String, Home>>> byGrain = new TreeMap<>();
    for (Map.Entry<String, Home> e : inFlight.of(app, grain)) {
      if (e.getValue().event() != null) {
        byGrain.computeIfAbsent(e.getValue().grain(), g -> new ArrayList<>()).add(e);
      }
    }
    for (Map.Entry<String, List<Map.Entry<String, Home>>> g : byGrain.entrySet()) {
      Set<String> queued = queuedIds(app + "/" + g.getKey());
      List<Map.Entry<String, Home>> taken = new ArrayList<>();
      for (Map.Entry<String, Home> e : g.getValue()) {
        if (!queued.contains(e.getKey())) {
          taken.add(e);
        }
      }
      // oldest first, as they were taken
      taken.sort(
          Comparator.comparingLong(e -> e.getValue().event().path(Event.SENT_NS).asLong()));
      if (!taken.isEmpty()) {
        again(app, taken, why);
      }
    }
  }

  private Set<String> queuedIds(String queue) {
    Set<String> ids = new HashSet<>();
    for (byte[] p : bus.queued(credential, queue)) {
      try {
        ids.add(ConditionFlag.JSON.readTree(p).path(Event.ID).asText());
      } catch (IOException e) {
        // not an event: nothing to match
      }
    }
    return ids;
  }

  /** Re-deliver the events of one grain (in this order, at the head of its queue), or give them up. */
  private void again(String app, List<Map.Entry<String, Home>> events, String why) {
    List<byte[]> payloads = new ArrayList<>();
    String grain = events.get(0).getValue().grain();
    for (Map.Entry<String, Home> e : events) {
      String id = e.getKey();
      Home home = e.getValue();
      int runs = runs(home);
      String exec = home.event().path(Event.EXECUTION_ID).asText();
      redelivered.putIfAbsent(app + "/" + id, false);
      if (runs > retries) {
        LOG.warn(
            "[host {}] [app {} grain {}] [exec {}] event {} lost again ({}), run {} of it: not run again, its "
                + "caller gets an error",
            host,
            app,
            grain,
            exec,
            id,
            why,
            runs);
        giveUp(
            app,
            id,
            home,
            "grain instance of " + grain + " was lost (" + why + ") in run " + runs
                + " of the event; not run again");
        continue;
      }
      ObjectNode next = home.event().deepCopy();
      next.put("attempt", runs + 1);
      inFlight.register(
          id,
          new Home(
              home.topic(), home.partition(), app, home.backup(), grain, next, home.renewal()));
      payloads.add(ConditionFlag.toBytes(next));
      LOG.warn(
          "[host {}] [app {} grain {}] [exec {}] event {} lost ({}): delivered again, run {} of {}",
          host,
          app,
          grain,
          exec,
          id,
          why,
          runs + 1,
          retries + 1);
    }
    if (!payloads.isEmpty()) {
      bus.redeliver(credential, app + "/" + grain, payloads);
    }
  }

  /**
   * Answer the caller with an error and finish the event: a report as the grain worker writes one for a dead
   * instance, put on LQ_HA by the host agent, so its result and flags go out in order with the rest.
   */
  private void giveUp(String app, String id, Home home, String message) {
    ObjectNode event = home.event();
    ObjectNode error = errorResult(app, home.grain(), event, "Lost", message);
    error.put("local", false);
    ObjectNode report = ConditionFlag.JSON.createObjectNode();
    report
        .put("type", "finished")
        .put("app", app)
        .put("grain", home.grain())
        .put("execution_id", event.path(Event.EXECUTION_ID).asText())
        .put("event_id", id)
        .put("frontend", event.path(Event.FRONTEND).asText())
        .put("status", "error");
    report.putArray("outputs").add(error);
    report.putArray("data");
    report
        .putArray("logs")
        .addArray()
        .add(System.currentTimeMillis() * 1_000_000L)
        .add("ERROR")
        .add(message);
    bus.publish(credential, LocalMessageBus.HOST_AGENT_QUEUE, ConditionFlag.toBytes(report));
  }

  /**
   * The error event that answers {@code event}'s caller in place of the result of its {@code grain} (as the grain
   * worker writes one for a failed instance): to {@code end}, with the event's execution, frontend, tag and trace.
   */
  static ObjectNode errorResult(
      String app, String grain, ObjectNode event, String type, String message) {
    ObjectNode error = ConditionFlag.JSON.createObjectNode();
    error
        .put(Event.ID, UUID.randomUUID().toString().replace("-", ""))
        .put(Event.EXECUTION_ID, event.path(Event.EXECUTION_ID).asText())
        .put(Event.APP, app)
        .put(Event.GRAIN, TopicNames.END)
        .put(Event.FROM, grain)
        .put(Event.FRONTEND, event.path(Event.FRONTEND).asText());
    error
        .putObject(Event.VALUE)
        .putObject("error")
        .put("type", type)
        .put("message", message)
        .put("grain", grain);
    error
        .put(Event.SENT_NS, System.currentTimeMillis() * 1_000_000L)
        .put(Event.TAG, event.path(Event.TAG).asText());
    JsonNode trace = event.get(Event.TRACE);
    if (trace != null && trace.isArray()) {
      error.set(Event.TRACE, trace.deepCopy());
    } else {
      error.putArray(Event.TRACE);
    }
    return error;
  }
}
