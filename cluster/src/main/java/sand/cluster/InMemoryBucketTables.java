package sand.cluster;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** {@link BucketTables} in memory, for unit tests. */
final class InMemoryBucketTables implements BucketTables {
  private final Map<String, NavigableMap<String, Bucket>> buckets = new ConcurrentHashMap<>();
  private final Map<String, FiredEvent> fired =
      new ConcurrentHashMap<>(); // kept until the test ends

  private NavigableMap<String, Bucket> of(String owner) {
    return buckets.computeIfAbsent(owner, k -> new ConcurrentSkipListMap<>());
  }

  @Override
  public boolean createBucket(Bucket b) {
    return of(b.owner())
            .putIfAbsent(
                b.name(), new Bucket(b.owner(), b.name(), List.copyOf(b.targets()), b.created()))
        == null;
  }

  @Override
  public Optional<Bucket> bucket(String owner, String name) {
    return Optional.ofNullable(of(owner).get(name));
  }

  @Override
  public List<Bucket> buckets(String owner) {
    return List.copyOf(of(owner).values());
  }

  @Override
  public boolean setTargets(String owner, String name, List<String> targets) {
    return of(owner)
            .computeIfPresent(
                name, (k, b) -> new Bucket(owner, name, List.copyOf(targets), b.created()))
        != null;
  }

  @Override
  public boolean deleteBucket(String owner, String name) {
    return of(owner).remove(name) != null;
  }

  @Override
  public void putFiredEvent(FiredEvent e, Duration keep) {
    fired.put(e.executionId(), e);
  }

  @Override
  public Optional<FiredEvent> firedEvent(String executionId) {
    return Optional.ofNullable(fired.get(executionId));
  }
}
