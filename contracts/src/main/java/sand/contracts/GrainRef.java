package sand.contracts;

/**
 * One grain of one application, as the bridge sees it: the pair names both its Kafka topic (global
 * queue) and its local queue. Construction checks both names against docs/host-agent.md.
 */
public record GrainRef(String app, String grain) {

  public GrainRef {
    TopicNames.checkApplication(app);
    TopicNames.checkGrain(grain);
  }

  /** The grain's topic in the global bus: {@code sand.<app>.<grain>}. */
  public String topic() {
    return TopicNames.PREFIX + app + "." + grain;
  }

  /** The grain's queue in the local bus: {@code <app>/<grain>}. */
  public String localQueue() {
    return app + "/" + grain;
  }

  @Override
  public String toString() {
    return app + "/" + grain;
  }
}
