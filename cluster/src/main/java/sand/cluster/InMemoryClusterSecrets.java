package sand.cluster;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/** {@link ClusterSecrets} in memory (tests, the emulator's cluster state): {@link #CURRENT} made at random. */
final class InMemoryClusterSecrets implements ClusterSecrets {
  private final Map<String, Row> rows = new HashMap<>();
  private final Clock clock;

  InMemoryClusterSecrets(byte[] current, Clock clock) {
    this.clock = clock;
    rows.put(CURRENT, new Row(current.clone(), clock.instant()));
  }

  @Override
  public synchronized Map<String, Row> rows() {
    Map<String, Row> out = new HashMap<>();
    rows.forEach((k, v) -> out.put(k, new Row(v.value().clone(), v.written())));
    return out;
  }

  @Override
  public synchronized boolean putIfAbsent(String name, byte[] value) {
    return rows.putIfAbsent(name, new Row(value.clone(), clock.instant())) == null;
  }

  @Override
  public synchronized void promote(byte[] current, byte[] next) {
    rows.put(PREVIOUS, new Row(current.clone(), clock.instant()));
    rows.put(CURRENT, new Row(next.clone(), clock.instant()));
    rows.remove(NEXT);
  }

  @Override
  public synchronized void delete(String name) {
    rows.remove(name);
  }

  /** As if every row had been written {@code d} earlier. */
  synchronized void age(java.time.Duration d) {
    rows.replaceAll((k, v) -> new Row(v.value(), v.written().minus(d)));
  }

  synchronized byte[] current() {
    return rows.get(CURRENT).value().clone();
  }
}
