package sand.cluster;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * What operators said of hosts (docs/operations.md, "Cordon, drain, remove a host"), kept apart from the hosts' own
 * rows so it outlives a host agent's restart (a clean stop removes the host's row):
 *
 * <ul>
 *   <li>{@value #CORDONED}: nothing new is placed there (a host agent deploys no application it does not run yet);
 *       what runs there keeps running and serving, new versions included;
 *   <li>{@value #DRAINING}: as cordoned, and its host agent undeploys every application (the bridge gives up their
 *       partitions first, running instances finish in the stop grace), so requests and events move to the others.
 * </ul>
 *
 * Frontends write it (the admin API); host agents read it at each reconcile.
 */
public interface HostSchedules {
  String CORDONED = "cordoned";
  String DRAINING = "draining";

  /** One host's schedule: {@link #CORDONED} or {@link #DRAINING}, why, since when. */
  record HostSchedule(String hostId, String state, String reason, Instant since) {
    public HostSchedule {
      if (!CORDONED.equals(state) && !DRAINING.equals(state)) {
        throw new IllegalArgumentException("a host schedule is cordoned or draining, not " + state);
      }
    }
  }

  /** Every host an operator cordoned or drained, by host id (a host not listed is schedulable). */
  Map<String, HostSchedule> all();

  default Optional<HostSchedule> of(String hostId) {
    return Optional.ofNullable(all().get(hostId));
  }

  void set(HostSchedule schedule);

  /** Schedulable again (uncordon); nothing if it was. */
  void clear(String hostId);
}
