package sand.cluster.globaldata;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import sand.contracts.DataMetadata;

/**
 * The global data layer (paper §4.3): durable storage shared by all hosts, which the local data layer
 * backs its writes up to and reads through on a miss.
 *
 * <p>Every operation names the application first, and implementations key all data by application
 * first, so a call made for one application cannot reach another's rows. Names (keys, maps, sets,
 * counters) are opaque non-empty strings. Listings are in {@link CanonicalEncoding#ORDER}.
 *
 * <p>Every method throws {@link GlobalUnavailableException} when the store cannot serve it. Writes are
 * idempotent (a retried write leaves the same state), which the write-behind relies on.
 * Implementations: {@link CassandraGlobalDataLayer}, and {@link InMemoryGlobalDataLayer} for tests.
 */
public interface GlobalDataLayer extends AutoCloseable {
  /** The longest name (key, map, set, counter, map key, set item) in UTF-8 bytes, as the local layer takes. */
  int MAX_NAME_BYTES = 4096;

  /** Create the keyspace and tables when they do not exist yet (idempotent). */
  void createSchema();

  /**
   * The largest value one write can carry (a key-value value or a map entry), names included with a
   * margin; the local layer refuses to start with a larger {@code value.max.bytes}, since such a write
   * could never be backed up.
   */
  long maxValueBytes();

  // ---- key-value

  Optional<byte[]> readKv(String app, String key);

  /** Size and SHA-256 of a stored value, without transferring it; empty when absent. */
  Optional<DataMetadata> kvMetadata(String app, String key);

  void writeKv(String app, String key, byte[] value);

  void deleteKv(String app, String key);

  /** Up to {@code count} keys of {@code app} after {@code startAfter} ("" = from the first), in order. */
  List<String> listKeys(String app, String startAfter, int count);

  // ---- maps (a map with no entries does not exist)

  Optional<byte[]> readMapEntry(String app, String map, String key);

  /** Every entry of the map, in key order; empty when the map does not exist. */
  Map<String, byte[]> readMap(String app, String map);

  void writeMapEntry(String app, String map, String key, byte[] value);

  void deleteMapEntry(String app, String map, String key);

  void deleteMap(String app, String map);

  // ---- sets (a set with no items does not exist)

  /** Every item of the set, in order; empty when the set does not exist. */
  Set<String> readSet(String app, String set);

  /** Whether the set holds {@code item} (one row read, whatever the set's size). */
  boolean containsSetItem(String app, String set, String item);

  void addSetItem(String app, String set, String item);

  void removeSetItem(String app, String set, String item);

  void deleteSet(String app, String set);

  // ---- counters (stored as absolute values: the last write wins)

  Optional<Long> readCounter(String app, String name);

  void writeCounter(String app, String name, long value);

  void deleteCounter(String app, String name);

  // ---- bytes stored per application ({@link StorageQuota} counts them; a shared counter,
  // approximate)

  /** Add {@code delta} (negative: freed) to the bytes {@code app} stores. Not idempotent: a retry counts twice. */
  void addStoredBytes(String app, long delta);

  /** The bytes {@code app} stores, as counted by {@link #addStoredBytes}; 0 when nothing was counted. */
  long storedBytes(String app);

  /** Record the storage quota in force for {@code app}, for whoever shows it (GET /api/v1/apps/{app}). */
  void writeStorageMax(String app, long maxBytes);

  /** The storage quota a host last recorded for {@code app}; empty before any. */
  Optional<Long> storageMax(String app);

  // ---- names of maps, sets and counters (KNIX's listMaps/listSets/listCounters)

  /**
   * Up to {@code count} names of {@code app}'s maps that have entries, after {@code startAfter} ("" = from the
   * first), in order. A map emptied entry by entry may be listed until a listing or deleteMap drops its name.
   */
  List<String> listMaps(String app, String startAfter, int count);

  /** As {@link #listMaps}, for sets. */
  List<String> listSets(String app, String startAfter, int count);

  /** Up to {@code count} counter names of {@code app} after {@code startAfter}, in order. */
  List<String> listCounters(String app, String startAfter, int count);

  /** Release connections; the data stays. */
  @Override
  void close();
}
