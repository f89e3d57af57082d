package sand.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/** {@link TriggerTables} in memory, for unit tests (claims never expire here). */
final class InMemoryTriggerTables implements TriggerTables {
  private final Map<String, NavigableMap<String, Trigger>> triggers = new ConcurrentHashMap<>();
  private final Map<String, String> tickClaims = new ConcurrentHashMap<>();
  private final Map<String, KeyClaim> keys = new ConcurrentHashMap<>();
  private final Map<String, NavigableMap<String, DeadLetter>> dead = new ConcurrentHashMap<>();

  @Override
  public void putTrigger(Trigger t) {
    triggers.computeIfAbsent(t.appId(), k -> new ConcurrentSkipListMap<>()).put(t.name(), t);
  }

  @Override
  public List<Trigger> triggers(String appId) {
    return List.copyOf(
        triggers.getOrDefault(appId, new ConcurrentSkipListMap<>()).values());
  }

  @Override
  public List<Trigger> allTriggers(int limit) {
    List<Trigger> out = new ArrayList<>();
    triggers.values().forEach(m -> out.addAll(m.values()));
    return out.subList(0, Math.min(limit, out.size()));
  }

  @Override
  public boolean deleteTrigger(String appId, String name) {
    var m = triggers.get(appId);
    return m != null && m.remove(name) != null;
  }

  @Override
  public void deleteTriggers(String appId) {
    triggers.remove(appId);
    dead.remove(appId);
  }

  @Override
  public boolean claimTick(String appId, String trigger, long tickEpochMs, String by) {
    String k = appId + "\0" + trigger + "\0" + tickEpochMs;
    return by.equals(tickClaims.computeIfAbsent(k, x -> by));
  }

  @Override
  public Optional<KeyClaim> claimKey(String appId, String key, KeyClaim claim, Duration window) {
    KeyClaim first = keys.putIfAbsent(appId + "\0" + key, claim);
    return Optional.ofNullable(first);
  }

  @Override
  public void releaseKey(String appId, String key, String executionId) {
    keys.computeIfPresent(
        appId + "\0" + key, (k, c) -> c.executionId().equals(executionId) ? null : c);
  }

  @Override
  public boolean moveKey(
      String appId, String key, String fromExecutionId, KeyClaim next, Duration window) {
    boolean[] moved = {false};
    keys.computeIfPresent(appId + "\0" + key, (k, c) -> {
      if (!c.executionId().equals(fromExecutionId)) {
        return c;
      }
      moved[0] = true;
      return next;
    });
    return moved[0];
  }

  @Override
  public Optional<KeyClaim> readKey(String appId, String key) {
    return Optional.ofNullable(keys.get(appId + "\0" + key));
  }

  @Override
  public void putDeadLetter(DeadLetter d, Duration keep) {
    dead.computeIfAbsent(
            d.appId(), k -> new ConcurrentSkipListMap<String, DeadLetter>().descendingMap())
        .put(d.id(), d);
  }

  @Override
  public List<DeadLetter> deadLetters(String appId, String before, int limit) {
    NavigableMap<String, DeadLetter> m = dead.get(appId);
    if (m == null) {
      return List.of();
    }
    var view = before == null ? m : m.tailMap(before, false);
    return view.values().stream().limit(limit).toList();
  }

  @Override
  public Optional<DeadLetter> deadLetter(String appId, String id) {
    NavigableMap<String, DeadLetter> m = dead.get(appId);
    return m == null ? Optional.empty() : Optional.ofNullable(m.get(id));
  }

  @Override
  public boolean deleteDeadLetter(String appId, String id) {
    NavigableMap<String, DeadLetter> m = dead.get(appId);
    return m != null && m.remove(id) != null;
  }
}
