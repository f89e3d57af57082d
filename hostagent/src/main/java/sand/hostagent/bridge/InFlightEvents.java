package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Events delivered into a local queue of this host whose handling instance has not finished: where
 * their {@code data} and {@code finished} flags go. Shared by the bridge (events it took from Kafka)
 * and the LQ_HA processor (events grain instances delivered locally). Each keeps the event as it went
 * into its local queue, so that {@link LocalRecovery} can deliver it again when its instance was lost.
 */
final class InFlightEvents {

  /**
   * Where an event's flags go.
   *
   * @param topic     the grain topic of the event
   * @param partition its partition, or null when its {@code processing} backup was keyed to a partition
   *                  by Kafka (this host had none of the topic): the flags use the same key, so the
   *                  same partition
   * @param app       the application the event belongs to (a report may only finish its own events)
   * @param backup    completes when the event's {@code new}/{@code processing} record is in Kafka, so
   *                  its later flags cannot overtake it
   * @param grain     the grain whose local queue the event is in
   * @param event     the event (envelope) as delivered; its {@code "attempt"} counts its runs here. Only
   *                  {@link LocalRecovery} changes it, under its lock
   */
  record Home(String topic, Integer partition, String app, CompletableFuture<?> backup, String grain,
              ObjectNode event) {}

  /** Keyed by application and event id: a grain of one application cannot touch another's events. */
  private final ConcurrentHashMap<String, Home> homes = new ConcurrentHashMap<>();

  void register(String eventId, Home home) {
    homes.put(key(home.app(), eventId), home);
  }

  /** Take the home of {@code app}'s event {@code eventId}; null when this host has none. */
  Home remove(String app, String eventId) {
    return homes.remove(key(app, eventId));
  }

  Home get(String app, String eventId) {
    return homes.get(key(app, eventId));
  }

  /** The events of {@code app} (of its {@code grain} only, unless null) in flight here, by event id. */
  List<Map.Entry<String, Home>> of(String app, String grain) {
    List<Map.Entry<String, Home>> out = new ArrayList<>();
    String prefix = app + "/";
    for (Map.Entry<String, Home> e : homes.entrySet()) {
      Home h = e.getValue();
      if (h.app().equals(app) && (grain == null || h.grain().equals(grain))) {
        out.add(Map.entry(e.getKey().substring(prefix.length()), h));
      }
    }
    return out;
  }

  /** Forget the events of an application no longer running here. */
  void forgetApplication(String app) {
    homes.values().removeIf(h -> h.app().equals(app));
  }

  int size() {
    return homes.size();
  }

  private static String key(String app, String eventId) {
    return app + "/" + eventId;
  }
}
