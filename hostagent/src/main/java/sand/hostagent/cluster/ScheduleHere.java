package sand.hostagent.cluster;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.HostAgentTables;
import sand.cluster.HostSchedules;
import sand.cluster.HostSchedules.HostSchedule;

/**
 * This host's schedule as operators set it ({@link HostSchedules}: cordoned, draining), read from the cluster state
 * at most once per {@link #FRESH} (a reconcile of many applications reads it once), and at once after {@link
 * #changed()} (a {@code host} control event). When it cannot be read the last one read stands.
 */
public final class ScheduleHere {
  private static final Logger LOG = LoggerFactory.getLogger(ScheduleHere.class);
  static final Duration FRESH = Duration.ofSeconds(1);

  private final HostAgentTables store;
  private final String hostId;
  private final Clock clock;
  private Optional<HostSchedule> last = Optional.empty();
  private Instant readAt = Instant.MIN;

  public ScheduleHere(HostAgentTables store, String hostId, Clock clock) {
    this.store = store;
    this.hostId = hostId;
    this.clock = clock;
  }

  /** Read it again at the next question. */
  public synchronized void changed() {
    readAt = Instant.MIN;
  }

  synchronized Optional<HostSchedule> now() {
    Instant t = clock.instant();
    if (readAt == Instant.MIN || !t.isBefore(readAt.plus(FRESH))) {
      try {
        Optional<HostSchedule> read = store.hostSchedules().of(hostId);
        if (!read.equals(last)) {
          LOG.info(
              "[host {}] schedule: {}",
              hostId,
              read.map(s -> s.state() + " (" + s.reason() + ")").orElse("schedulable"));
        }
        last = read;
        readAt = t;
      } catch (RuntimeException e) {
        LOG.warn("[host {}] cannot read its schedule, keeping the last: {}", hostId, e.toString());
      }
    }
    return last;
  }

  /**
   * Whether an application wanted on this host may run here: always when schedulable; when cordoned only if it
   * runs here already (its new versions too: nothing new is placed on a cordoned host); never while draining.
   */
  public boolean admits(boolean runsHere) {
    return now().map(s -> HostSchedules.CORDONED.equals(s.state()) && runsHere).orElse(true);
  }

  /** Whether operators drain this host (its applications are undeployed). */
  public boolean draining() {
    return now().map(s -> HostSchedules.DRAINING.equals(s.state())).orElse(false);
  }
}
