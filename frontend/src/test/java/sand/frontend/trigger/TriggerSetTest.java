package sand.frontend.trigger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.InMemoryClusterStore;
import sand.cluster.TriggerTables.Trigger;

class TriggerSetTest {
  private static final String WORKFLOW =
      "{\"name\":\"shop\",\"entry\":\"a\",\"functions\":[{\"name\":\"a\",\"next\":[\"end\"]}]}";

  @Test
  void aChangeMadeHereIsSeenAtTheNextLookNotAfterTheRefreshPeriod() {
    InMemoryClusterStore store = new InMemoryClusterStore();
    store.putApplication(
        new ApplicationRecord(
            "id-1", "shop", "alice", WORKFLOW, "", "{}", 1, "deployed", List.of()),
        Map.of());
    TriggerSet set = new TriggerSet(store);
    assertEquals(0, set.all(10_000, false).size());
    store
        .triggers()
        .putTrigger(new Trigger(
            "id-1", "tick", TriggerSpec.TIMER, "{\"every\":\"1s\"}", Instant.ofEpochMilli(10_001)));
    assertEquals(0, set.all(10_002, false).size(), "read at most every REFRESH_MS otherwise");
    set.changed();
    assertEquals(1, set.all(10_003, false).size());
    assertEquals("shop", set.all(10_004, false).get(0).appName());
  }
}
