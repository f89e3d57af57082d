package sand.cluster.globaldata;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** Cassandra's size settings as its settings table writes them (the global layer's value limit comes from one). */
class CassandraSizesTest {
  @Test
  void cassandraSizeSettingsParse() {
    assertEquals(8388608, CassandraGlobalDataLayer.parseSize("8388608B"));
    assertEquals(8388608, CassandraGlobalDataLayer.parseSize("8192KiB"));
    assertEquals(16777216, CassandraGlobalDataLayer.parseSize("16MiB"));
    assertEquals(1L << 30, CassandraGlobalDataLayer.parseSize("1GiB"));
    assertThrows(
        IllegalArgumentException.class, () -> CassandraGlobalDataLayer.parseSize("16 parsecs"));
  }
}
