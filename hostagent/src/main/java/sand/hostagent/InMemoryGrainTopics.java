package sand.hostagent;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import sand.contracts.TopicNames;

/** {@link GrainTopics} in memory, for unit tests: remembers the name of every topic asked for. */
public final class InMemoryGrainTopics implements GrainTopics {
  private final Set<String> topics = new TreeSet<>();

  @Override
  public synchronized void ensureGrainTopics(String appId, Set<String> grains) {
    grains.forEach(g -> topics.add(TopicNames.grainTopic(appId, g)));
  }

  /** The topics created so far ({@code sand.<app>.<grain>}), sorted. */
  public synchronized List<String> topics() {
    return List.copyOf(topics);
  }
}
