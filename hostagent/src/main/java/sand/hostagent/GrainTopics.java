package sand.hostagent;

import java.util.Set;

/**
 * The Kafka topics of an application's grains (global queues, {@code sand.<app>.<grain>}), created by the host
 * agent before anyone uses them. {@link KafkaTopics} creates them in Kafka; {@link InMemoryGrainTopics} stands in
 * for it in tests.
 */
public interface GrainTopics {
  /**
   * Create the topic of each of {@code grains} of {@code appId} that does not exist yet, with at least {@code
   * hosts} partitions (the cluster's live hosts: each host that runs a grain must be able to own one of its
   * partitions, else it gets no work from it); a topic that exists with fewer gets more partitions. Throws naming
   * the topic when Kafka refuses one or does not answer.
   */
  void ensureGrainTopics(String appId, Set<String> grains, int hosts);
}
