package sand.cluster;

/**
 * The whole cluster state in one store (Cassandra in a cluster, memory in tests): the host agents' tables and the
 * frontends'. A host agent is handed it as {@link HostAgentTables}; a frontend uses both parts.
 */
public interface ClusterStore
    extends HostAgentTables, FrontendTables, ApplicationRecords, AutoCloseable {
  /** How applications' end-user endpoints are protected (deleted with the application). */
  EndpointTables endpoints();

  /** Triggers, tick claims, idempotency keys and dead letters (deleted with the application). */
  TriggerTables triggers();

  /** Triggerable buckets of accounts (frontends write, host agents read). */
  BucketTables buckets();

  @Override
  void close();
}
