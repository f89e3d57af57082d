package sand.frontend.invoke;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.FrontendTables;
import sand.cluster.FrontendTables.FrontendInfo;

/**
 * Results go to the response topic of the frontend that took the request; when that frontend is dead, a live one
 * reads its topic for it, so its asynchronous executions end instead of staying 'running'. Every round this frontend
 * renews its heartbeat in the cluster state ({@code frontends}); each frontend whose heartbeat is older than
 * {@code maxAge} is taken over by one live frontend, the same one whichever frontend computes it (rendezvous
 * hashing over the live ones: no election, no lock; two that disagree for a round both read, and the first result
 * still wins by its rank). Its topic is read from the offset its own reader last committed, with its id's tag check,
 * until its heartbeat is young again (it is back) or another live frontend is the one picked.
 */
public final class ResponseTopicTakeover extends AbstractLifeCycle {
  private static final Logger LOG = LoggerFactory.getLogger(ResponseTopicTakeover.class);

  private volatile int liveCount = 1;
  private final FrontendTables store;
  private final Clock clock;
  private final Duration maxAge;
  private final Duration every;
  private final String self;
  private final Function<String, ResponseListener> listeners;
  private final Map<String, ResponseListener> adopted = new HashMap<>();
  private ScheduledExecutorService timer;

  /**
   * @param listeners a (not started) reader of a dead frontend's response topic, given its id
   */
  public ResponseTopicTakeover(
      FrontendTables store,
      Clock clock,
      Duration maxAge,
      Duration every,
      String self,
      Function<String, ResponseListener> listeners) {
    this.store = store;
    this.clock = clock;
    this.maxAge = maxAge;
    this.every = every;
    this.self = self;
    this.listeners = listeners;
  }

  /** How many frontends were live (this one included) at the last round; 1 before the first. */
  public int liveFrontends() {
    return liveCount;
  }

  /** The ids of the frontends whose response topics this one reads now. */
  synchronized Set<String> adopted() {
    return Set.copyOf(adopted.keySet());
  }

  /** One round: renew this frontend's heartbeat, then take over the dead frontends picked for it, release the rest. */
  synchronized void round() {
    Instant now = clock.instant();
    store.frontendHeartbeat(self, now);
    List<FrontendInfo> all = store.frontends();
    List<String> live = new ArrayList<>(List.of(self));
    List<String> dead = new ArrayList<>();
    for (FrontendInfo f : all) {
      if (f.frontendId().equals(self)) {
        continue;
      }
      (f.heartbeat().isBefore(now.minus(maxAge)) ? dead : live).add(f.frontendId());
    }
    liveCount = live.size();
    Set<String> mine = new HashSet<>();
    for (String d : dead) {
      if (self.equals(pick(d, live))) {
        mine.add(d);
      }
    }
    for (String id : new ArrayList<>(adopted.keySet())) {
      if (!mine.contains(id)) {
        LOG.info(
            "[frontend {}] releasing response topic of frontend {}: {}",
            self,
            id,
            dead.contains(id) ? "another live frontend reads it" : "it is back");
        stopQuietly(id, adopted.remove(id));
      }
    }
    for (String id : mine) {
      if (!adopted.containsKey(id)) {
        ResponseListener l = listeners.apply(id);
        try {
          l.start();
          adopted.put(id, l);
          LOG.info(
              "[frontend {}] frontend {} is dead (no heartbeat for {} ms): reading its response topic",
              self,
              id,
              maxAge.toMillis());
        } catch (Exception e) {
          LOG.warn(
              "[frontend {}] cannot read the response topic of dead frontend {}, next round retries: {}",
              self,
              id,
              e.toString());
        }
      }
    }
  }

  /** The live frontend that reads {@code dead}'s topic: the highest hash of the pair (String.hashCode is stable). */
  static String pick(String dead, List<String> live) {
    return live.stream()
        .max(Comparator.<String>comparingInt(l -> mix((dead + "\n" + l).hashCode()))
            .thenComparing(Comparator.naturalOrder()))
        .orElseThrow();
  }

  private static int mix(int h) { // spread String.hashCode's low entropy (murmur3's finalizer)
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    return h ^ (h >>> 16);
  }

  private void stopQuietly(String id, ResponseListener l) {
    try {
      l.stop();
    } catch (Exception e) {
      LOG.warn(
          "[frontend {}] stopping the reader of frontend {}'s response topic: {}",
          self,
          id,
          e.toString());
    }
  }

  @Override
  protected void doStart() {
    timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "frontend-heartbeat-" + self);
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(
        () -> {
          try {
            round();
          } catch (RuntimeException e) {
            LOG.warn(
                "[frontend {}] heartbeat round failed, next one in {} ms: {}",
                self,
                every.toMillis(),
                e.toString());
          }
        },
        0,
        every.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  @Override
  protected void doStop() throws InterruptedException {
    timer.shutdownNow();
    timer.awaitTermination(5, TimeUnit.SECONDS);
    synchronized (this) {
      adopted.forEach(this::stopQuietly);
      adopted.clear();
    }
  }
}
