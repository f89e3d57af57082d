package sand.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.common.log.LogThrottle;
import sand.contracts.ClusterKeys;

/**
 * Keeps a process' {@link ClusterKeys} what the cluster state says: reads {@link ClusterSecrets}' rows every
 * {@link #EVERY} and, when they changed, makes with {@link ClusterSecrets#CURRENT} and accepts the next and previous
 * ones too. A rotation step waits {@link #SETTLED} for every process to have read it (ClusterSecretRotation).
 */
public final class ClusterKeysRefresher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterKeysRefresher.class);
  /** How often every process reads the cluster secret's rows. */
  public static final Duration EVERY = Duration.ofSeconds(5);
  /** By then every live process has read a change (two reads, and a slow one). */
  public static final Duration SETTLED = EVERY.multipliedBy(3);

  private final ClusterSecrets secrets;
  private final ClusterKeys keys;
  private final String who;
  private final LogThrottle failures = new LogThrottle(Duration.ofMinutes(1));
  private final ScheduledExecutorService timer;

  /** Starts reading at once, then every {@link #EVERY}; {@code who} names the process in its log lines. */
  public ClusterKeysRefresher(ClusterSecrets secrets, ClusterKeys keys, String who) {
    this.secrets = secrets;
    this.keys = keys;
    this.who = who;
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "cluster-keys-" + who);
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::refresh, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The keys the cluster state holds now (one read): for what uses them once, e.g. a deploy opening secrets. */
  public static ClusterKeys read(HostAgentTables store) {
    ClusterKeys k = ClusterKeys.of(store.clusterSecret());
    Map<String, ClusterSecrets.Row> rows = store.clusterSecrets().rows();
    if (rows.containsKey(ClusterSecrets.CURRENT)) {
      k.use(rows.get(ClusterSecrets.CURRENT).value(), others(rows));
    }
    return k;
  }

  private static List<byte[]> others(Map<String, ClusterSecrets.Row> rows) {
    List<byte[]> others = new ArrayList<>();
    for (String name : List.of(ClusterSecrets.NEXT, ClusterSecrets.PREVIOUS)) {
      if (rows.containsKey(name)) {
        others.add(rows.get(name).value());
      }
    }
    return others;
  }

  /**
   * Read the rows now and use them (also what the timer runs). Synchronized: a read that started earlier (the
   * timer's) must not be applied after a later one, putting back keys the cluster state no longer holds.
   */
  public synchronized void refresh() {
    try {
      Map<String, ClusterSecrets.Row> rows = secrets.rows();
      ClusterSecrets.Row current = rows.get(ClusterSecrets.CURRENT);
      if (current == null) {
        return; // not made yet: the process started with what clusterSecret() made
      }
      List<byte[]> others = others(rows);
      if (!keys.holds(current.value(), others)) {
        keys.use(current.value(), others);
        LOG.info(
            "[{}] cluster secret: making with the current one, accepting {} ({})",
            who,
            others.size() + 1,
            rows.keySet().stream().sorted().toList());
      }
    } catch (RuntimeException e) {
      if (failures.allow()) { // Cassandra away: the keys held stay in use
        LOG.warn("[{}] could not read the cluster secret's rows: {}", who, e.toString());
      }
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
