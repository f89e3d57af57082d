package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.common.Credentials;

/** A value limit the global layer cannot store is refused at start, not discovered by a stuck backup. */
class GlobalLimitsTest {

  @Test
  void valueLimitAboveWhatTheGlobalLayerStoresFailsAtStart() {
    InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();
    global.setMaxValueBytes(8_000_000);
    IllegalArgumentException e = assertThrows(
        IllegalArgumentException.class,
        () -> new LocalDataLayer(
            new Credentials(Layers.AGENT), global, LocalDataLayer.Options.defaults()));
    assertTrue(
        e.getMessage().contains("value.max.bytes=10485760") && e.getMessage().contains("8000000"),
        e.getMessage());
    new LocalDataLayer(
            new Credentials(Layers.AGENT),
            global,
            LocalDataLayer.Options.defaults().withValueMaxBytes(8_000_000))
        .close();
  }
}
