package sand.frontend.knix;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.InMemoryGlobalDataLayer;
import sand.frontend.internal.Json;

/** KNIX's listMaps/listSets/listCounters through the door, as mfn-sdk 0.8.9 reads them. */
class KnixStorageTest {
  private final KnixStorage storage = new KnixStorage(new InMemoryGlobalDataLayer());

  private ObjectNode act(String type, String action, Object... kv) {
    ObjectNode s = Json.object().put("data_type", type);
    ObjectNode p = s.putObject("parameters").put("action", action);
    for (int i = 0; i < kv.length; i += 2) {
      p.set((String) kv[i], Json.MAPPER.valueToTree(kv[i + 1]));
    }
    return storage.perform("ann@example.org", s, wid -> "app-" + wid);
  }

  private static List<String> list(JsonNode n) {
    List<String> out = new java.util.ArrayList<>();
    n.forEach(e -> out.add(e.asText()));
    return out;
  }

  @Test
  void mapsWithEntriesAreListedAndADeletedMapIsNot() {
    act("map", "putmapentry", "mapname", "m1", "key", "k", "value", "v");
    act("map", "putmapentry", "mapname", "m2", "key", "k", "value", "v");
    assertEquals(
        List.of("m1", "m2"),
        list(act("map", "listmaps", "start", 0, "count", 100).get("maplist")));
    act("map", "deletemap", "mapname", "m1");
    assertEquals(
        List.of("m2"), list(act("map", "listmaps", "start", 0, "count", 100).get("maplist")));
    assertEquals(
        List.of(), list(act("map", "listmaps", "start", 1, "count", 100).get("maplist")));
  }

  @Test
  void setsAreListed() {
    act("set", "addsetentry", "setname", "s1", "item", "a");
    assertEquals(
        List.of("s1"), list(act("set", "listsets", "start", 0, "count", 10).get("setlist")));
    act("set", "clearset", "setname", "s1");
    assertEquals(List.of(), list(act("set", "listsets", "start", 0, "count", 10).get("setlist")));
  }

  @Test
  void countersAreListedWithoutThePlatformsOwn() {
    act("counter", "createcounter", "countername", "c1", "countervalue", 3);
    // the quota bookkeeping wrote sand.quota.bytes_used in the account's space: not listed
    assertEquals(
        List.of("c1"),
        list(act("counter", "listcounters", "start", 0, "count", 10).get("counterlist")));
  }
}
