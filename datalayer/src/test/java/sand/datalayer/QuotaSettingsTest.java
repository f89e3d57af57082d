package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.ConfigDef.ConfigException;
import sand.common.Credentials;

/** app.max.bytes and max.bytes: declared once, checked against each other and value.max.bytes at start. */
class QuotaSettingsTest {

  @Test
  void defaultsAre64MiBPerApplicationAnd512MiBPerHost() {
    LocalDataLayer.Options o =
        DataLayerSettings.options(DataLayerSettings.DEF.parse(Map.of(), Map.of()));
    assertEquals(64L << 20, o.appMaxBytes());
    assertEquals(512L << 20, o.maxBytes());
    assertEquals(LocalDataLayer.Options.defaults(), o.withRetryMaxBackoff(o.retryMaxBackoff()));
    LocalDataLayer.Options set = DataLayerSettings.options(DataLayerSettings.DEF.parse(
        Map.of("SAND_DATALAYER_APP_MAX_BYTES", "1000000"), Map.of("max.bytes", "5000000000")));
    assertEquals(1_000_000, set.appMaxBytes());
    assertEquals(5_000_000_000L, set.maxBytes());
  }

  @Test
  void badValuesFailNamingTheKey() {
    ConfigException e = assertThrows(
        ConfigException.class,
        () -> DataLayerSettings.DEF.parse(Map.of(), Map.of("app.max.bytes", "0")));
    assertTrue(e.getMessage().contains("app.max.bytes=0"), e.getMessage());
    assertThrows(
        ConfigException.class,
        () -> DataLayerSettings.DEF.parse(Map.of(), Map.of("max.bytes", "lots")));
  }

  @Test
  void anApplicationQuotaAboveTheHostCapOrBelowOneLargestWriteFailsAtStart() {
    InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();
    Credentials credentials = new Credentials(Layers.AGENT);
    IllegalArgumentException above = assertThrows(
        IllegalArgumentException.class,
        () -> new LocalDataLayer(
            credentials, global, LocalDataLayer.Options.defaults().withAppMaxBytes(600L << 20)));
    assertTrue(
        above.getMessage().contains("app.max.bytes=629145600")
            && above.getMessage().contains("max.bytes=536870912"),
        above.getMessage());
    IllegalArgumentException below = assertThrows(
        IllegalArgumentException.class,
        () -> new LocalDataLayer(
            credentials, global, LocalDataLayer.Options.defaults().withAppMaxBytes(10L << 20)));
    assertTrue(
        below.getMessage().contains("app.max.bytes=10485760")
            && below.getMessage().contains("value.max.bytes=10485760"),
        below.getMessage());
    new LocalDataLayer(
            credentials,
            global,
            LocalDataLayer.Options.defaults()
                .withAppMaxBytes((10L << 20) + LocalDataLayer.WRITE_MARGIN_BYTES))
        .close();
  }
}
