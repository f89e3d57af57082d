package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * What every {@link GlobalDataLayer} promises, run against the fake ({@link InMemoryGlobalDataLayerTest}) and
 * against Cassandra ({@link CassandraGlobalDataLayerTest}, -Dsand.it=true). All data is keyed by application,
 * so each test works in applications of its own and the Cassandra side can share one keyspace.
 */
abstract class GlobalDataLayerContract {

  /** The store under test: fresh for the fake, one keyspace for all tests on Cassandra. */
  abstract GlobalDataLayer global();

  final String app = uid();
  final String other = uid();

  private static String uid() {
    return "app" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  /** Keys in code point order (UTF-8 byte order), which String.compareTo is not: U+FFFD sorts before U+1F600. */
  static final List<String> ORDERED = List.of("A", "B", "a", "a b", "ab", "é", "\uFFFD", "😀");

  @Test
  void theSchemaCanBeCreatedAgainAndValuesHaveARoom() {
    global().createSchema();
    global().createSchema();
    assertTrue(
        global().maxValueBytes() > 1024 * 1024, "at least 1 MiB: " + global().maxValueBytes());
  }

  @Test
  void aKeyIsWrittenOverwrittenAndDeleted() {
    assertTrue(global().readKv(app, "k").isEmpty());
    assertTrue(global().kvMetadata(app, "k").isEmpty());
    global().writeKv(app, "k", bytes("v1"));
    global().writeKv(app, "k", bytes("v2"));
    assertEquals("v2", text(global().readKv(app, "k").orElseThrow()));
    assertEquals(
        CanonicalEncoding.ofKvValue("k", bytes("v2")),
        global().kvMetadata(app, "k").orElseThrow());
    global().deleteKv(app, "k");
    global().deleteKv(app, "k");
    global().deleteKv(app, "never-there");
    assertTrue(global().readKv(app, "k").isEmpty());
    assertTrue(global().kvMetadata(app, "k").isEmpty());
  }

  @Test
  void valuesKeepEveryByteAndEmptyIsAValue() {
    byte[] all = new byte[256];
    for (int i = 0; i < all.length; i++) {
      all[i] = (byte) i;
    }
    global().writeKv(app, "all", all);
    global().writeKv(app, "empty", new byte[0]);
    assertArrayEquals(all, global().readKv(app, "all").orElseThrow());
    assertArrayEquals(new byte[0], global().readKv(app, "empty").orElseThrow());
    assertEquals(
        new DataMetadata(DataKind.KV, "empty", 0, CanonicalEncoding.sha256Hex(new byte[0])),
        global().kvMetadata(app, "empty").orElseThrow());
    global().writeMapEntry(app, "m", "empty", new byte[0]);
    assertArrayEquals(new byte[0], global().readMapEntry(app, "m", "empty").orElseThrow());
  }

  @Test
  void keysAreListedInCodePointOrderByPage() {
    List<String> shuffled = new ArrayList<>(ORDERED);
    Collections.shuffle(shuffled, new Random(28));
    for (String k : shuffled) {
      global().writeKv(app, k, bytes(k));
    }
    global().writeKv(other, "0-other-app", bytes("x"));
    assertEquals(ORDERED, global().listKeys(app, "", 100));
    assertEquals(ORDERED.subList(0, 3), global().listKeys(app, "", 3));
    assertEquals(
        ORDERED.subList(3, 6), global().listKeys(app, "a", 3), "after a key, that key excluded");
    assertEquals(
        ORDERED.subList(4, 8), global().listKeys(app, "a c", 10), "after a key that is not stored");
    assertEquals(List.of(), global().listKeys(app, "😀", 10));
    assertEquals(List.of(), global().listKeys(app, "", 0), "a page of none");
    assertEquals(List.of(), global().listKeys(uid(), "", 10));
  }

  @Test
  void aMapExistsWhileItHasEntriesInKeyOrder() {
    assertTrue(global().readMapEntry(app, "m", "x").isEmpty());
    assertEquals(Map.of(), global().readMap(app, "m"));
    for (String k : List.of("😀", "b", "\uFFFD", "a")) {
      global().writeMapEntry(app, "m", k, bytes("old " + k));
    }
    global().writeMapEntry(app, "m", "b", bytes("new b"));
    global().writeMapEntry(app, "m2", "a", bytes("m2's"));
    Map<String, byte[]> m = global().readMap(app, "m");
    assertEquals(List.of("a", "b", "\uFFFD", "😀"), List.copyOf(m.keySet()));
    assertEquals("new b", text(m.get("b")));
    assertEquals("new b", text(global().readMapEntry(app, "m", "b").orElseThrow()));

    global().deleteMapEntry(app, "m", "b");
    global().deleteMapEntry(app, "m", "b");
    global().deleteMapEntry(app, "m", "never-there");
    assertTrue(global().readMapEntry(app, "m", "b").isEmpty());
    assertEquals(
        List.of("a", "\uFFFD", "😀"), List.copyOf(global().readMap(app, "m").keySet()));
    for (String k : List.of("a", "\uFFFD", "😀")) {
      global().deleteMapEntry(app, "m", k);
    }
    assertEquals(Map.of(), global().readMap(app, "m"), "no entries: no map");

    global().writeMapEntry(app, "m", "x", bytes("1"));
    global().deleteMap(app, "m");
    global().deleteMap(app, "m");
    assertEquals(Map.of(), global().readMap(app, "m"));
    assertEquals(
        "m2's",
        text(global().readMapEntry(app, "m2", "a").orElseThrow()),
        "another map is untouched");
  }

  @Test
  void aSetExistsWhileItHasItemsInOrder() {
    assertEquals(Set.of(), global().readSet(app, "s"));
    assertFalse(global().containsSetItem(app, "s", "i"));
    for (String item : List.of("😀", "b", "\uFFFD", "a", "b")) {
      global().addSetItem(app, "s", item);
    }
    global().addSetItem(app, "s2", "a");
    assertEquals(List.of("a", "b", "\uFFFD", "😀"), List.copyOf(global().readSet(app, "s")));
    assertTrue(global().containsSetItem(app, "s", "😀"));
    assertFalse(global().containsSetItem(app, "s", "c"));

    global().removeSetItem(app, "s", "b");
    global().removeSetItem(app, "s", "b");
    global().removeSetItem(app, "s", "never-there");
    assertFalse(global().containsSetItem(app, "s", "b"));
    assertEquals(List.of("a", "\uFFFD", "😀"), List.copyOf(global().readSet(app, "s")));
    global().deleteSet(app, "s");
    global().deleteSet(app, "s");
    assertEquals(Set.of(), global().readSet(app, "s"));
    assertFalse(global().containsSetItem(app, "s", "a"));
    assertEquals(Set.of("a"), global().readSet(app, "s2"), "another set is untouched");
  }

  @Test
  void namesOfMapsSetsAndCountersAreListedInOrderByPage() {
    for (String n : List.of("m2", "m1", "m3")) {
      global().writeMapEntry(app, n, "k", bytes("v"));
      global().addSetItem(app, "s" + n, "x");
      global().writeCounter(app, "c" + n, 1);
    }
    global().writeMapEntry(other, "theirs", "k", bytes("v"));
    assertEquals(List.of("m1", "m2", "m3"), global().listMaps(app, "", 10));
    assertEquals(List.of("m2"), global().listMaps(app, "m1", 1), "a page after a name");
    assertEquals(List.of("sm1", "sm2", "sm3"), global().listSets(app, "", 10));
    assertEquals(List.of("cm1", "cm2", "cm3"), global().listCounters(app, "", 10));
    assertEquals(List.of(), global().listCounters(app, "", 0));
    global().deleteMap(app, "m1");
    global().deleteMapEntry(app, "m2", "k"); // emptied entry by entry: no longer a map
    global().removeSetItem(app, "sm3", "x");
    global().deleteCounter(app, "cm2");
    assertEquals(List.of("m3"), global().listMaps(app, "", 10));
    assertEquals(List.of("sm1", "sm2"), global().listSets(app, "", 10));
    assertEquals(List.of("cm1", "cm3"), global().listCounters(app, "", 10));
    assertEquals(List.of("theirs"), global().listMaps(other, "", 10));
  }

  @Test
  void aCounterIsAnAbsoluteValueTheLastWriteWins() {
    assertEquals(Optional.empty(), global().readCounter(app, "c"));
    global().writeCounter(app, "c", 40);
    global().writeCounter(app, "c", 42);
    assertEquals(Optional.of(42L), global().readCounter(app, "c"));
    global().writeCounter(app, "min", Long.MIN_VALUE);
    global().writeCounter(app, "max", Long.MAX_VALUE);
    global().writeCounter(app, "zero", 0);
    assertEquals(Optional.of(Long.MIN_VALUE), global().readCounter(app, "min"));
    assertEquals(Optional.of(Long.MAX_VALUE), global().readCounter(app, "max"));
    assertEquals(
        Optional.of(0L), global().readCounter(app, "zero"), "zero is a value, not absence");
    global().deleteCounter(app, "c");
    global().deleteCounter(app, "c");
    assertEquals(Optional.empty(), global().readCounter(app, "c"));
  }

  @Test
  void storedBytesAddUpAndTheQuotaIsTheLastRecorded() {
    assertEquals(0, global().storedBytes(app));
    global().addStoredBytes(app, 100);
    global().addStoredBytes(app, 50);
    global().addStoredBytes(app, -30);
    assertEquals(120, global().storedBytes(app));

    assertEquals(Optional.empty(), global().storageMax(app));
    global().writeStorageMax(app, 1 << 20);
    global().writeStorageMax(app, 1 << 21);
    assertEquals(Optional.of(1L << 21), global().storageMax(app));
  }

  @Test
  void theSameNamesInTwoApplicationsAreTwoItems() {
    for (String a : List.of(app, other)) {
      global().writeKv(a, "k", bytes(a));
      global().writeMapEntry(a, "m", "k", bytes(a));
      global().addSetItem(a, "s", a);
      global().writeCounter(a, "c", a.equals(app) ? 1 : 2);
      global().addStoredBytes(a, a.equals(app) ? 10 : 20);
      global().writeStorageMax(a, a.equals(app) ? 100 : 200);
    }
    global().deleteKv(other, "k");
    global().deleteMap(other, "m");
    global().deleteSet(other, "s");
    global().deleteCounter(other, "c");
    assertEquals(app, text(global().readKv(app, "k").orElseThrow()));
    assertEquals(List.of("k"), global().listKeys(app, "", 10));
    assertEquals(app, text(global().readMapEntry(app, "m", "k").orElseThrow()));
    assertEquals(Set.of(app), global().readSet(app, "s"));
    assertEquals(Optional.of(1L), global().readCounter(app, "c"));
    assertEquals(10, global().storedBytes(app));
    assertEquals(20, global().storedBytes(other));
    assertEquals(Optional.of(100L), global().storageMax(app));
    assertEquals(List.of(), global().listKeys(other, "", 10));
  }
}
