package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;
import static sand.datalayer.Layers.text;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.cluster.globaldata.CassandraGlobalDataLayer;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.common.Credentials;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * Integration test against the real Cassandra at 127.0.0.1:9042 (deploy/cassandra.sh start); runs only
 * with -Dsand.it=true. Uses a throwaway keyspace, dropped at the end. It runs the contract every global data
 * layer keeps ({@link GlobalDataLayerContract}, also run against the fake), and what only Cassandra does.
 */
class CassandraGlobalDataLayerTest extends GlobalDataLayerContract {
  private static final InetSocketAddress CASSANDRA = new InetSocketAddress("127.0.0.1", 9042);
  private static final String KEYSPACE =
      "sand_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

  private static CassandraGlobalDataLayer.Settings settings;
  private static CassandraGlobalDataLayer shared;

  @BeforeAll
  static void cassandra() {
    Assumptions.assumeTrue(
        Boolean.getBoolean("sand.it"), "integration tests run with -Dsand.it=true");
    settings = new CassandraGlobalDataLayer.Settings(
        List.of(CASSANDRA), "datacenter1", KEYSPACE, 1, Duration.ofSeconds(10));
    shared = CassandraGlobalDataLayer.connect(settings);
  }

  @AfterAll
  static void dropKeyspace() {
    if (settings == null) {
      return;
    }
    if (shared != null) {
      shared.close();
    }
    try (CqlSession s = CqlSession.builder()
        .addContactPoint(CASSANDRA)
        .withLocalDatacenter("datacenter1")
        .build()) {
      s.execute(SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS " + KEYSPACE)
          .setTimeout(Duration.ofSeconds(60)));
    }
  }

  @Override
  GlobalDataLayer global() {
    return shared;
  }

  @Test
  void aSecondHostReadsThroughCassandraWhatTheFirstWrote() {
    Credentials credentials = new Credentials(Layers.AGENT);
    credentials.grant("appa", Layers.CRED_A);
    credentials.grant("appb", Layers.CRED_B);
    LocalDataLayer.Options options = LocalDataLayer.Options.defaults().withValueMaxBytes(1 << 20);
    DataMetadata kvMeta;
    DataMetadata mapMeta;
    DataMetadata setMeta;
    DataMetadata counterMeta;
    try (CassandraGlobalDataLayer global = CassandraGlobalDataLayer.connect(settings);
        LocalDataLayer host1 = new LocalDataLayer(credentials, global, options)) {
      ApplicationData a = host1.forCredential(Layers.CRED_A);
      a.put("doc", bytes("hello grain"));
      a.put("empty", new byte[0]);
      a.put("gone", bytes("x"));
      a.remove("gone");
      a.putMapEntry("m", "x", bytes("1"));
      a.putMapEntry("m", "y", bytes("2"));
      a.addSetEntry("s", "i");
      a.addSetEntry("s", "j");
      a.createCounter("c", 40);
      a.incrementCounter("c", 2);
      host1.forCredential(Layers.CRED_B).put("doc", bytes("b's"));
      assertTrue(a.flush(30_000));
      assertTrue(host1.forCredential(Layers.CRED_B).flush(30_000));
      // bytes stored (StorageQuota): values of keys and map entries with their keys, set items;
      // "gone" gave its back
      assertEquals("doc".length() + 11 + "empty".length() + 2 * 2 + 2, global.storedBytes("appa"));
      assertEquals("doc".length() + 3, global.storedBytes("appb"));
      kvMeta = a.metadata(DataKind.KV, "doc");
      mapMeta = a.metadata(DataKind.MAP, "m");
      setMeta = a.metadata(DataKind.SET, "s");
      counterMeta = a.metadata(DataKind.COUNTER, "c");
      assertTrue(a.verifyGlobal(kvMeta));
    }

    // Another host: its own Cassandra session, empty memory.
    try (CassandraGlobalDataLayer global = CassandraGlobalDataLayer.connect(settings);
        LocalDataLayer host2 = new LocalDataLayer(credentials, global, options)) {
      ApplicationData a = host2.forCredential(Layers.CRED_A);
      assertEquals("hello grain", text(a.get("doc").orElseThrow()));
      assertArrayEquals(new byte[0], a.get("empty").orElseThrow());
      assertTrue(a.get("gone").isEmpty());
      assertTrue(a.get("never-written").isEmpty());
      assertEquals(List.of("doc", "empty"), a.listKeys("", 10));
      assertEquals(List.of("empty"), a.listKeys("doc", 10));
      assertEquals(
          Map.of("x", "1", "y", "2"),
          Map.of(
              "x",
              text(a.getMapEntry("m", "x").orElseThrow()),
              "y",
              text(a.getMapEntry("m", "y").orElseThrow())));
      assertEquals(Set.of("i", "j"), a.retrieveSet("s"));
      assertEquals(42, a.getCounterValue("c"));
      assertEquals("b's", text(host2.forCredential(Layers.CRED_B).get("doc").orElseThrow()));

      // Recovery's check (§4.3): the flag's metadata against the global layer.
      for (DataMetadata m : List.of(kvMeta, mapMeta, setMeta, counterMeta)) {
        assertTrue(a.verifyGlobal(m), m.toString());
        assertEquals(m, a.metadata(m.kind(), m.name()));
      }
      a.put("doc", bytes("changed"));
      a.deleteMap("m");
      a.removeSetEntry("s", "i");
      assertTrue(a.flush(30_000));
      assertFalse(a.verifyGlobal(kvMeta));
      assertTrue(a.verifyGlobal(DataMetadata.absent(DataKind.MAP, "m")));
      assertFalse(a.verifyGlobal(setMeta));
      assertTrue(a.verifyGlobal(a.metadata(DataKind.SET, "s")));
    }
  }

  /** The largest value the local layer accepts by default (value.max.bytes) must fit in one Cassandra write. */
  @Test
  void theLargestAcceptedValueRoundTrips() {
    byte[] big = new byte[(int) LocalDataLayer.Options.defaults().valueMaxBytes()];
    big[big.length - 1] = 7;
    try (CassandraGlobalDataLayer global = CassandraGlobalDataLayer.connect(settings)) {
      assertTrue(
          global.maxValueBytes() >= big.length,
          "Cassandra takes values up to " + global.maxValueBytes()
              + " bytes, below the default value.max.bytes " + big.length
              + ": set commitlog_segment_size: 32MiB");
      global.writeKv("appbig", "big", big);
      assertArrayEquals(big, global.readKv("appbig", "big").orElseThrow());
      assertEquals(
          CanonicalEncoding.ofKvValue("big", big),
          global.kvMetadata("appbig", "big").orElseThrow());
    }
  }
}
