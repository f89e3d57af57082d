package sand.datalayer;

import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;

/** The global data layer contract against the fake; {@link CassandraGlobalDataLayerTest} runs it on Cassandra. */
class InMemoryGlobalDataLayerTest extends GlobalDataLayerContract {
  private final InMemoryGlobalDataLayer global = new InMemoryGlobalDataLayer();

  @Override
  GlobalDataLayer global() {
    return global;
  }
}
