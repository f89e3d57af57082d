package sand.hostagent.bridge;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Events delivered into a local queue of this host whose handling instance has not finished: where
 * their {@code data} and {@code finished} flags go. Shared by the bridge (events it took from Kafka)
 * and the LQ_HA processor (events grain instances delivered locally).
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
   */
  record Home(String topic, Integer partition, String app, CompletableFuture<?> backup) {}

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
