// SAND local data layer (paper §4.3): an in-memory key-value store per host, per application, backed
// by the global data layer (Cassandra). Writes go to memory and are backed up to Cassandra
// asynchronously (write-behind, in order per key); a read that misses memory reads Cassandra.
//
// Every call carries a credential that names one application; all names (keys, maps, sets, counters)
// are scoped to that application, so one application can never name another's data.

namespace java sand.datalayer.thrift
namespace py datalayer

enum DataErrorCode {
  UNAUTHORIZED = 1,   // unknown credential
  TOO_LARGE = 2,      // value above the configured size limit (default 10 MB)
  NOT_FOUND = 3,      // a counter that does not exist
  BAD_REQUEST = 4,    // empty name, bad argument
  UNAVAILABLE = 5,    // the global data layer could not be read (a miss while Cassandra is down)
  QUOTA_EXCEEDED = 6, // the application's memory quota on this host (or the host's cap) is full of
                      // writes not yet in the global data layer; nothing changed: retry later
}

exception DataError {
  1: DataErrorCode code,
  2: string message,
}

// A value that may be absent (Thrift cannot return null).
struct Value {
  1: optional binary data,
}

// The data backup flag's content (§4.3): what was written, so recovery can tell whether the write
// reached the global data layer. kind is "kv", "map", "set" or "counter"; name is the key, map, set or
// counter name; sha256 is the hex digest of the stored value (for maps and sets: of their canonical
// encoding, see docs/data-layer.md).
struct DataMetadata {
  1: string kind,
  2: string name,
  3: i64 size,
  4: string sha256,
}

service LocalDataLayer {
  // ---- key-value
  void put(1: string credential, 2: string key, 3: binary value) throws (1: DataError err),
  Value get(1: string credential, 2: string key) throws (1: DataError err),
  bool remove(1: string credential, 2: string key) throws (1: DataError err),
  // Keys in order, starting after `start` ("" = from the beginning), at most `count`.
  list<string> listKeys(1: string credential, 2: string start, 3: i32 count) throws (1: DataError err),

  // ---- maps
  void putMapEntry(1: string credential, 2: string mapName, 3: string key, 4: binary value)
      throws (1: DataError err),
  Value getMapEntry(1: string credential, 2: string mapName, 3: string key) throws (1: DataError err),
  bool deleteMapEntry(1: string credential, 2: string mapName, 3: string key) throws (1: DataError err),
  bool containsMapKey(1: string credential, 2: string mapName, 3: string key) throws (1: DataError err),
  list<string> getMapKeys(1: string credential, 2: string mapName) throws (1: DataError err),
  map<string, binary> retrieveMap(1: string credential, 2: string mapName) throws (1: DataError err),
  bool deleteMap(1: string credential, 2: string mapName) throws (1: DataError err),

  // ---- sets
  bool addSetEntry(1: string credential, 2: string setName, 3: string item) throws (1: DataError err),
  bool removeSetEntry(1: string credential, 2: string setName, 3: string item) throws (1: DataError err),
  bool containsSetItem(1: string credential, 2: string setName, 3: string item) throws (1: DataError err),
  set<string> retrieveSet(1: string credential, 2: string setName) throws (1: DataError err),
  bool deleteSet(1: string credential, 2: string setName) throws (1: DataError err),

  // ---- counters (atomic on this host)
  void createCounter(1: string credential, 2: string counter, 3: i64 initial) throws (1: DataError err),
  i64 getCounterValue(1: string credential, 2: string counter) throws (1: DataError err),
  i64 incrementCounter(1: string credential, 2: string counter, 3: i64 delta) throws (1: DataError err),
  i64 decrementCounter(1: string credential, 2: string counter, 3: i64 delta) throws (1: DataError err),
  bool deleteCounter(1: string credential, 2: string counter) throws (1: DataError err),

  // ---- data backup flag (§4.3)
  // Metadata of the current local value of each named item (kind + name); an absent item has size -1
  // and sha256 "".
  list<DataMetadata> metadata(1: string credential, 2: list<DataMetadata> items) throws (1: DataError err),
  // True when the global data layer holds exactly the value the metadata describes (used in recovery).
  bool verifyGlobal(1: string credential, 2: DataMetadata expected) throws (1: DataError err),
  // Wait up to timeoutMs until every write made so far by this application reached the global layer.
  bool flush(1: string credential, 2: i32 timeoutMs) throws (1: DataError err),

  // ---- the platform's management API, as the application's owner (docs/knix.md "From a grain")
  // One KNIX management request ({"action", "data"} JSON, at most 1 MiB) run by a frontend for the owner of
  // the credential's application; the reply is KNIX's ({"status": "success"|"failure", "data"}). The host
  // agent relays it through the gate to a frontend that polls it (a sandbox has no network). UNAVAILABLE:
  // no frontend answered within a minute; QUOTA_EXCEEDED: the application has as many calls under way on
  // this host as it may (4).
  binary manage(1: string credential, 2: binary request) throws (1: DataError err),

  // ---- administration (host agent credential only; in-process in the host agent)
  void grantApplication(1: string credential, 2: string application, 3: string applicationCredential)
      throws (1: DataError err),
  void revokeApplication(1: string credential, 2: string application) throws (1: DataError err),
}
