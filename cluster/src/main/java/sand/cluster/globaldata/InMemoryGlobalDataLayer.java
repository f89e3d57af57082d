package sand.cluster.globaldata;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import sand.contracts.DataMetadata;

/**
 * A global data layer in memory: the fake for unit tests (no Cassandra), and {@code global=memory}
 * for benchmarks of the local layer alone. Nothing survives the process.
 *
 * <p>Tests can make it {@link #setAvailable unavailable} (every call throws
 * {@link GlobalUnavailableException}, as when Cassandra is down), {@link #setDelay slow}, and read the
 * {@link #writes() log of applied writes} to check their order.
 */
public final class InMemoryGlobalDataLayer implements GlobalDataLayer {

  /** One write that reached this store; {@code key} is the map key or set item, when there is one. */
  public record AppliedWrite(String operation, String app, String name, String key, byte[] value) {}

  private final Map<String, TreeMap<String, byte[]>> kv = new HashMap<>();
  private final Map<String, Map<String, TreeMap<String, byte[]>>> maps = new HashMap<>();
  private final Map<String, Map<String, TreeSet<String>>> sets = new HashMap<>();
  private final Map<String, Map<String, Long>> counters = new HashMap<>();
  private final Map<String, Long> stored = new HashMap<>();
  private final Map<String, Long> storageMax = new HashMap<>();
  private final List<AppliedWrite> writes = new ArrayList<>();
  private final AtomicLong reads = new AtomicLong();
  private volatile boolean available = true;
  private volatile boolean writesFailing;
  private volatile Predicate<AppliedWrite> refused = w -> false;
  private volatile Duration delay = Duration.ZERO;
  private volatile long maxValueBytes = Long.MAX_VALUE;

  /** When false, every call fails with {@link GlobalUnavailableException}. */
  public void setAvailable(boolean available) {
    this.available = available;
  }

  /** When true, writes fail with {@link GlobalUnavailableException} while reads are still served. */
  public void setWritesFailing(boolean failing) {
    this.writesFailing = failing;
  }

  /**
   * Refuse (with {@link GlobalUnavailableException}) the writes {@code which} selects, e.g. one item's,
   * while every other call is served; {@code w -> false} serves all again. The refused write is not logged.
   */
  public void refuseWrites(Predicate<AppliedWrite> which) {
    this.refused = which;
  }

  /** Make every call take at least {@code delay} (a slow Cassandra). */
  public void setDelay(Duration delay) {
    this.delay = delay;
  }

  /** Every write applied so far, in the order applied. */
  public synchronized List<AppliedWrite> writes() {
    return new ArrayList<>(writes);
  }

  /** How many reads were served (reads refused while unavailable do not count). */
  public long reads() {
    return reads.get();
  }

  @Override
  public void createSchema() {
    enter();
  }

  @Override
  public long maxValueBytes() {
    return maxValueBytes;
  }

  /** Pretend one write can carry at most {@code bytes} (as Cassandra's max_mutation_size does). */
  public void setMaxValueBytes(long bytes) {
    this.maxValueBytes = bytes;
  }

  // ---- key-value

  @Override
  public Optional<byte[]> readKv(String app, String key) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      return Optional.ofNullable(kvOf(app).get(key));
    }
  }

  @Override
  public Optional<DataMetadata> kvMetadata(String app, String key) {
    return readKv(app, key).map(v -> CanonicalEncoding.ofKvValue(key, v));
  }

  @Override
  public void writeKv(String app, String key, byte[] value) {
    AppliedWrite w = new AppliedWrite("writeKv", app, key, null, value);
    enterWrite(w);
    synchronized (this) {
      kvOf(app).put(key, value);
      writes.add(w);
    }
  }

  @Override
  public void deleteKv(String app, String key) {
    AppliedWrite w = new AppliedWrite("deleteKv", app, key, null, null);
    enterWrite(w);
    synchronized (this) {
      kvOf(app).remove(key);
      writes.add(w);
    }
  }

  @Override
  public List<String> listKeys(String app, String startAfter, int count) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      List<String> out = new ArrayList<>();
      for (String k : kvOf(app).tailMap(startAfter, false).keySet()) {
        if (out.size() >= count) {
          break;
        }
        out.add(k);
      }
      return out;
    }
  }

  // ---- maps

  @Override
  public Optional<byte[]> readMapEntry(String app, String map, String key) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      TreeMap<String, byte[]> m =
          maps.computeIfAbsent(app, a -> new HashMap<>()).get(map);
      return Optional.ofNullable(m == null ? null : m.get(key));
    }
  }

  @Override
  public Map<String, byte[]> readMap(String app, String map) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      TreeMap<String, byte[]> m =
          maps.computeIfAbsent(app, a -> new HashMap<>()).get(map);
      return m == null ? Collections.emptyMap() : new LinkedHashMap<>(m);
    }
  }

  @Override
  public void writeMapEntry(String app, String map, String key, byte[] value) {
    AppliedWrite w = new AppliedWrite("writeMapEntry", app, map, key, value);
    enterWrite(w);
    synchronized (this) {
      maps.computeIfAbsent(app, a -> new HashMap<>())
          .computeIfAbsent(map, m -> new TreeMap<>(CanonicalEncoding.ORDER))
          .put(key, value);
      writes.add(w);
    }
  }

  @Override
  public void deleteMapEntry(String app, String map, String key) {
    AppliedWrite w = new AppliedWrite("deleteMapEntry", app, map, key, null);
    enterWrite(w);
    synchronized (this) {
      Map<String, TreeMap<String, byte[]>> ofApp = maps.computeIfAbsent(app, a -> new HashMap<>());
      TreeMap<String, byte[]> m = ofApp.get(map);
      if (m != null) {
        m.remove(key);
        if (m.isEmpty()) {
          ofApp.remove(map);
        }
      }
      writes.add(w);
    }
  }

  @Override
  public void deleteMap(String app, String map) {
    AppliedWrite w = new AppliedWrite("deleteMap", app, map, null, null);
    enterWrite(w);
    synchronized (this) {
      maps.computeIfAbsent(app, a -> new HashMap<>()).remove(map);
      writes.add(w);
    }
  }

  // ---- sets

  @Override
  public Set<String> readSet(String app, String set) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      TreeSet<String> s = sets.computeIfAbsent(app, a -> new HashMap<>()).get(set);
      return s == null ? Collections.emptySet() : new LinkedHashSet<>(s);
    }
  }

  @Override
  public boolean containsSetItem(String app, String set, String item) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      TreeSet<String> s = sets.computeIfAbsent(app, a -> new HashMap<>()).get(set);
      return s != null && s.contains(item);
    }
  }

  @Override
  public void addSetItem(String app, String set, String item) {
    AppliedWrite w = new AppliedWrite("addSetItem", app, set, item, null);
    enterWrite(w);
    synchronized (this) {
      sets.computeIfAbsent(app, a -> new HashMap<>())
          .computeIfAbsent(set, s -> new TreeSet<>(CanonicalEncoding.ORDER))
          .add(item);
      writes.add(w);
    }
  }

  @Override
  public void removeSetItem(String app, String set, String item) {
    AppliedWrite w = new AppliedWrite("removeSetItem", app, set, item, null);
    enterWrite(w);
    synchronized (this) {
      Map<String, TreeSet<String>> ofApp = sets.computeIfAbsent(app, a -> new HashMap<>());
      TreeSet<String> s = ofApp.get(set);
      if (s != null) {
        s.remove(item);
        if (s.isEmpty()) {
          ofApp.remove(set);
        }
      }
      writes.add(w);
    }
  }

  @Override
  public void deleteSet(String app, String set) {
    AppliedWrite w = new AppliedWrite("deleteSet", app, set, null, null);
    enterWrite(w);
    synchronized (this) {
      sets.computeIfAbsent(app, a -> new HashMap<>()).remove(set);
      writes.add(w);
    }
  }

  // ---- counters

  @Override
  public Optional<Long> readCounter(String app, String name) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      return Optional.ofNullable(
          counters.computeIfAbsent(app, a -> new HashMap<>()).get(name));
    }
  }

  @Override
  public void writeCounter(String app, String name, long value) {
    AppliedWrite w =
        new AppliedWrite("writeCounter", app, name, null, CanonicalEncoding.ofCounter(value));
    enterWrite(w);
    synchronized (this) {
      counters.computeIfAbsent(app, a -> new HashMap<>()).put(name, value);
      writes.add(w);
    }
  }

  @Override
  public void deleteCounter(String app, String name) {
    AppliedWrite w = new AppliedWrite("deleteCounter", app, name, null, null);
    enterWrite(w);
    synchronized (this) {
      counters.computeIfAbsent(app, a -> new HashMap<>()).remove(name);
      writes.add(w);
    }
  }

  @Override
  public List<String> listMaps(String app, String startAfter, int count) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      return names(maps.getOrDefault(app, Map.of()).keySet(), startAfter, count);
    }
  }

  @Override
  public List<String> listSets(String app, String startAfter, int count) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      return names(sets.getOrDefault(app, Map.of()).keySet(), startAfter, count);
    }
  }

  @Override
  public List<String> listCounters(String app, String startAfter, int count) {
    enter();
    reads.incrementAndGet();
    synchronized (this) {
      return names(counters.getOrDefault(app, Map.of()).keySet(), startAfter, count);
    }
  }

  private static List<String> names(Set<String> all, String startAfter, int count) {
    TreeSet<String> sorted = new TreeSet<>(CanonicalEncoding.ORDER);
    sorted.addAll(all);
    List<String> out = new ArrayList<>();
    for (String n : sorted.tailSet(startAfter, false)) {
      if (out.size() >= count) {
        break;
      }
      out.add(n);
    }
    return out;
  }

  @Override
  public void addStoredBytes(String app, long delta) {
    enter();
    synchronized (this) {
      stored.merge(app, delta, Long::sum);
    }
  }

  @Override
  public long storedBytes(String app) {
    enter();
    synchronized (this) {
      return stored.getOrDefault(app, 0L);
    }
  }

  @Override
  public void writeStorageMax(String app, long maxBytes) {
    enter();
    synchronized (this) {
      storageMax.put(app, maxBytes);
    }
  }

  @Override
  public Optional<Long> storageMax(String app) {
    enter();
    synchronized (this) {
      return Optional.ofNullable(storageMax.get(app));
    }
  }

  @Override
  public void close() {
    // nothing to release
  }

  /** Simulated latency and outage; the delay is served outside the lock, like a network round trip. */
  private void enter() {
    Duration d = delay;
    if (!d.isZero()) {
      try {
        Thread.sleep(d.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new GlobalUnavailableException(
            "interrupted while waiting for the (fake) global data layer");
      }
    }
    if (!available) {
      throw new GlobalUnavailableException("the in-memory global data layer is set unavailable");
    }
  }

  private void enterWrite(AppliedWrite w) {
    enter();
    if (writesFailing) {
      throw new GlobalUnavailableException(
          "the in-memory global data layer is set to refuse writes");
    }
    if (refused.test(w)) {
      throw new GlobalUnavailableException(
          "the in-memory global data layer is set to refuse this " + w.operation());
    }
  }

  private TreeMap<String, byte[]> kvOf(String app) {
    return kv.computeIfAbsent(app, a -> new TreeMap<>(CanonicalEncoding.ORDER));
  }
}
