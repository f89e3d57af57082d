/**
 * The host agent's coordination of the local and global message buses and data layers (paper §3.2
 * "Coordination", §4.2 Figure 4, §4.2.1, §4.3; contract in docs/host-agent.md).
 *
 * <p>Public: {@link sand.hostagent.bridge.GlobalBusBridge} (Kafka consumer side: partitions into local
 * queues, offsets, recovery), {@link sand.hostagent.bridge.HostAgentQueueProcessor} (LQ_HA: backups,
 * forwards, results, data and finished flags), {@link sand.contracts.ConditionFlag} and
 * {@link sand.contracts.TopicNames} (the record format and names), {@link
 * sand.hostagent.bridge.OffsetTracker}, {@link sand.hostagent.bridge.BridgeSettings}, {@link
 * sand.cluster.KafkaClients}. The package-private classes are their machinery; the recovery of §4.2.1
 * is {@code Recovery}, its steps in order.
 */
package sand.hostagent.bridge;
