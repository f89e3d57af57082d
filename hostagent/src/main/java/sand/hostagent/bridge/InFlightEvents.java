package sand.hostagent.bridge;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Events delivered into a local queue of this host whose handling instance has not finished: where
 * their {@code data} and {@code finished} flags go. Shared by the bridge (events it took from Kafka)
 * and the LQ_HA processor (events grain instances delivered locally). Each keeps the event as it went
 * into its local queue, so that {@link LocalRecovery} can deliver it again when its instance was lost.
 *
 * <p>An event a grain instance says it delivered locally is only the instance's word: the agent never saw it.
 * Those ({@link #registerLocal}) are bounded per application, in number and bytes, and expire
 * ({@link #expireLocal}), so outputs forged as local cost a bounded amount and are forgotten.
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
   * @param renewal   the renewals of its {@code processing} backup while it is in flight, for a backup in another
   *                  host's partition (partition null); null otherwise (nothing takes this host's own over)
   */
  record Home(
      String topic,
      Integer partition,
      String app,
      CompletableFuture<?> backup,
      String grain,
      ObjectNode event,
      BackupRenewal renewal) {

    Home(
        String topic,
        Integer partition,
        String app,
        CompletableFuture<?> backup,
        String grain,
        ObjectNode event) {
      this(topic, partition, app, backup, grain, event, null);
    }

    /** No renewal of its backup from now on (it finishes or is forgotten); what its finished flag must follow. */
    CompletableFuture<?> endRenewals() {
      return renewal == null ? CompletableFuture.completedFuture(null) : renewal.end();
    }
  }

  /** Keyed by application and event id: a grain of one application cannot touch another's events. */
  private final ConcurrentHashMap<String, Home> homes = new ConcurrentHashMap<>();

  /** An event an instance claims it delivered locally: its bytes and when it is forgotten. */
  private record Claim(String app, long bytes, long expiresNanos) {}

  /** Claimed local deliveries by key, oldest first (one expiry for all: so also in expiry order). Under this. */
  private final LinkedHashMap<String, Claim> claims = new LinkedHashMap<>();
  /** Per application: claimed events, their bytes. Under {@link #claims}. */
  private final Map<String, long[]> claimed = new HashMap<>();

  /** Bytes of each home (its event as delivered), and their sum per application: what in-flight events hold. */
  private final ConcurrentHashMap<String, Long> sizes = new ConcurrentHashMap<>();

  private final ConcurrentHashMap<String, AtomicLong> held = new ConcurrentHashMap<>();

  /** Register (or replace, keeping its size) the home of an event; a new one counts 0 bytes. */
  void register(String eventId, Home home) {
    homes.put(key(home.app(), eventId), home);
  }

  /** Register the home of an event the agent delivers itself, of {@code bytes}. */
  void register(String eventId, Home home, long bytes) {
    String key = key(home.app(), eventId);
    homes.put(key, home);
    resize(home.app(), key, bytes);
  }

  /**
   * Whether {@code app} may have {@code bytes} more in flight here: its events in flight hold less than
   * {@code max} with them, or it has none (one event always fits). The agent's deliveries wait otherwise.
   */
  boolean hasRoom(String app, long bytes, long max) {
    AtomicLong h = held.get(app);
    long now = h == null ? 0 : h.get();
    return now == 0 || now + bytes <= max;
  }

  /** Bytes of the events in flight here, per application (gauge). */
  Map<String, Number> bytesByApplication() {
    Map<String, Number> out = new HashMap<>();
    held.forEach((app, b) -> {
      if (b.get() > 0) {
        out.put(app, b.get());
      }
    });
    return out;
  }

  /** Bytes of the events of {@code app} in flight here. */
  long bytesOf(String app) {
    AtomicLong h = held.get(app);
    return h == null ? 0 : h.get();
  }

  private void resize(String app, String key, long bytes) {
    Long old = bytes < 0 ? null : sizes.put(key, bytes);
    long delta = (bytes < 0 ? 0 : bytes) - (old == null ? 0 : old);
    if (delta != 0) {
      held.computeIfAbsent(app, a -> new AtomicLong()).addAndGet(delta);
    }
  }

  private void unsize(String app, String key) {
    Long old = sizes.remove(key);
    if (old != null) {
      AtomicLong h = held.get(app);
      if (h != null) {
        h.addAndGet(-old);
      }
    }
  }

  /**
   * Register an event a grain instance says it delivered into a local queue, unless its application already has
   * {@code maxCount} such events or {@code maxBytes} of them in flight here.
   *
   * @param bytes        what the event costs (its backup record's size)
   * @param expiresNanos when ({@link System#nanoTime()}) it is forgotten if not finished by then
   * @return false (nothing registered) when the application is at its bound
   */
  boolean registerLocal(
      String eventId, Home home, long bytes, int maxCount, long maxBytes, long expiresNanos) {
    String key = key(home.app(), eventId);
    synchronized (claims) {
      long[] used = claimed.computeIfAbsent(home.app(), a -> new long[2]);
      Claim old = claims.get(key);
      long count = used[0] - (old == null ? 0 : 1);
      long held = used[1] - (old == null ? 0 : old.bytes());
      if (count + 1 > maxCount || held + bytes > maxBytes) {
        if (used[0] == 0) {
          claimed.remove(home.app());
        }
        return false;
      }
      unclaim(key);
      claims.put(key, new Claim(home.app(), bytes, expiresNanos));
      long[] now = claimed.computeIfAbsent(home.app(), a -> new long[2]);
      now[0]++;
      now[1] += bytes;
      homes.put(key, home);
      resize(home.app(), key, bytes);
    }
    return true;
  }

  /**
   * Forget the claimed local deliveries whose time is up at {@code nowNanos} (still in flight: never finished).
   *
   * @return their homes, by event id, so that their backups stop holding their partitions' commits
   */
  List<Map.Entry<String, Home>> expireLocal(long nowNanos) {
    List<Map.Entry<String, Home>> out = new ArrayList<>();
    synchronized (claims) {
      for (Iterator<Map.Entry<String, Claim>> it = claims.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, Claim> e = it.next();
        if (e.getValue().expiresNanos() - nowNanos > 0) {
          break;
        }
        it.remove();
        release(e.getValue());
        Home h = homes.remove(e.getKey());
        unsize(e.getValue().app(), e.getKey());
        if (h != null) {
          h.endRenewals();
          out.add(Map.entry(e.getKey().substring(e.getValue().app().length() + 1), h));
        }
      }
    }
    return out;
  }

  /** Events in flight here, per application (gauge). */
  Map<String, Number> countByApplication() {
    Map<String, Number> out = new HashMap<>();
    for (Home h : homes.values()) {
      out.merge(h.app(), 1, (a, b) -> a.intValue() + b.intValue());
    }
    return out;
  }

  /** Take the home of {@code app}'s event {@code eventId}; null when this host has none. */
  Home remove(String app, String eventId) {
    String key = key(app, eventId);
    Home h = homes.remove(key);
    if (h != null) {
      h.endRenewals();
      unsize(app, key);
      synchronized (claims) {
        unclaim(key);
      }
    }
    return h;
  }

  private void unclaim(String key) {
    Claim c = claims.remove(key);
    if (c != null) {
      release(c);
    }
  }

  private void release(Claim c) {
    long[] used = claimed.get(c.app());
    if (used != null) {
      used[0]--;
      used[1] -= c.bytes();
      if (used[0] <= 0) {
        claimed.remove(c.app());
      }
    }
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

  /** The events in flight here whose backups are renewed ({@link BackupRenewal}). */
  List<Home> renewable() {
    List<Home> out = new ArrayList<>();
    for (Home h : homes.values()) {
      if (h.renewal() != null) {
        out.add(h);
      }
    }
    return out;
  }

  /**
   * Forget the events of an application no longer running here.
   *
   * @return those of them whose backup is in another host's partition ({@link BackupRenewal#handBack})
   */
  List<Home> forgetApplication(String app) {
    List<Home> renewed = new ArrayList<>();
    homes.values().removeIf(h -> {
      if (h.app().equals(app)) {
        if (h.renewal() != null) {
          renewed.add(h);
        }
        return true;
      }
      return false;
    });
    sizes.keySet().removeIf(k -> k.startsWith(app + "/"));
    held.remove(app);
    synchronized (claims) {
      claims.values().removeIf(c -> c.app().equals(app));
      claimed.remove(app);
    }
    return renewed;
  }

  int size() {
    return homes.size();
  }

  private static String key(String app, String eventId) {
    return app + "/" + eventId;
  }
}
