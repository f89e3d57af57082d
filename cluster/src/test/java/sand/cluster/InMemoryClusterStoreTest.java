package sand.cluster;

import org.junit.jupiter.api.BeforeEach;

/** The cluster store contract against the fake; {@link CassandraClusterStoreTest} runs it against Cassandra. */
class InMemoryClusterStoreTest
    implements HostAgentTablesContract,
        FrontendTablesContract,
        ApplicationRecordsContract,
        SecretTablesContract,
        EndpointTablesContract,
        TriggerTablesContract {
  private ClusterStore store;

  @BeforeEach
  void freshStore() {
    store = new InMemoryClusterStore();
  }

  @Override
  public ClusterStore store() {
    return store;
  }
}
