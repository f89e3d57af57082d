package sand.hostagent;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import sand.contracts.TopicNames;

/** {@link GrainTopics} in memory, for unit tests: remembers the name of every topic asked for. */
public final class InMemoryGrainTopics implements GrainTopics {
  private final Set<String> topics = new TreeSet<>();
  private final Map<String, Integer> hostsAsked = new TreeMap<>();

  @Override
  public synchronized void ensureGrainTopics(String appId, Set<String> grains, int hosts) {
    grains.forEach(g -> topics.add(TopicNames.grainTopic(appId, g)));
    grains.forEach(g -> hostsAsked.merge(TopicNames.grainTopic(appId, g), hosts, Math::max));
  }

  /** The most hosts a topic was ensured for. */
  public synchronized int hostsAsked(String topic) {
    return hostsAsked.getOrDefault(topic, 0);
  }

  /** The topics created so far ({@code sand.<app>.<grain>}), sorted. */
  public synchronized List<String> topics() {
    return List.copyOf(topics);
  }
}
