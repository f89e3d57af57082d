package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Json;

/**
 * KNIX's {@code performStorageAction}: the data of a workflow (with {@code workflowid}: its SAND application's data,
 * what its grains see) or of the user (without: the account's own space, which only this door reaches), read and
 * written in the global data layer. Differences from a grain's view, in docs/knix.md: a host's local data layer
 * may serve a grain a value it cached before a write made here; counters are read, changed and written (the global
 * layer keeps absolute values), so an increment here can race one made by a grain.
 *
 * <p>Replies follow KNIX, including mfn-sdk 0.8.9's decoding: a kv value and a map entry come back base64.
 *
 * <p>What an account stores through this door (in its own space and its workflows') counts against a quota of
 * bytes per account (issue 26, finding 12): a write that would pass it fails with {@code QUOTA_EXCEEDED} naming the
 * setting. The bytes used are a counter in the account's own space ({@link #USED_COUNTER}, a name the door does not
 * let the account touch), kept by read-change-write: two frontends writing for one account at the same instant can
 * miscount by one write. An item counts its key (or map and key, set and item, counter name) and its value.
 */
public final class KnixStorage {
  /** Most keys or items one listing returns. */
  static final int MAX_LIST = 10_000;
  /** The default of the frontend setting knix.storage.bytes.per.account. */
  public static final long DEFAULT_QUOTA_BYTES = 64L << 20;
  /** Where an account's bytes used are counted: in its own space, under a name reserved to the platform. */
  public static final String USED_COUNTER = "sand.quota.bytes_used";

  private static final String RESERVED = "sand.";
  private static final int STRIPES = 64;

  private final GlobalDataLayer data;
  private final long quotaBytes;
  /** One account's writes through this frontend change its count one at a time. */
  private final Object[] locks = new Object[STRIPES];

  public KnixStorage(GlobalDataLayer data) {
    this(data, DEFAULT_QUOTA_BYTES);
  }

  public KnixStorage(GlobalDataLayer data, long quotaBytes) {
    this.data = data;
    this.quotaBytes = quotaBytes;
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new Object();
    }
  }

  /** The account's own space (no application id has this form: they are hex). */
  static String userSpace(String account) {
    return "user:" + account;
  }

  /**
   * @param appOf the application id of a KNIX workflow id of the caller (a Failure when it is not theirs)
   */
  ObjectNode perform(String account, JsonNode storage, Function<String, String> appOf) {
    if (data == null) {
      throw new KnixManagement.Failure(
          "Storage actions are not available: this frontend has no global data layer");
    }
    String type = storage.path("data_type").asText("kv").toLowerCase(Locale.ROOT);
    JsonNode p = storage.path("parameters");
    String action = p.path("action").asText("").toLowerCase(Locale.ROOT);
    String wid = storage.path("workflowid").asText("");
    String space = wid.isEmpty() ? userSpace(account) : appOf.apply(wid);
    ObjectNode out = Json.object().put("status", true);
    if (wid.isEmpty() && p.path("countername").asText("").startsWith(RESERVED)) {
      throw new KnixManagement.Failure(
          "Error while performing storage operation; counter names starting with '" + RESERVED
              + "' are the platform's");
    }
    try {
      synchronized (locks[Math.floorMod(account.hashCode(), STRIPES)]) {
        long change = change(space, type.isEmpty() ? "kv" : type, action, p);
        if (change != 0) {
          charge(account, change);
        }
        perform(space, type, action, p, out);
      }
    } catch (GlobalUnavailableException e) {
      throw new ApiException(
          503,
          "unavailable",
          "Error while performing storage operation; the global data layer " + "is not available: "
              + e.getMessage());
    } catch (IllegalArgumentException e) {
      throw new KnixManagement.Failure(
          "Error while performing storage operation; " + e.getMessage());
    }
    return out.put("message", "Successful storage op: " + action);
  }

  /** Bytes the account uses through this door (what its counter says). */
  long used(String account) {
    return data.readCounter(userSpace(account), USED_COUNTER).orElse(0L);
  }

  /** Add {@code change} bytes to the account's count, or fail with QUOTA_EXCEEDED when a growth would pass it. */
  private void charge(String account, long change) {
    long used = used(account);
    if (change > 0 && used + change > quotaBytes) {
      throw new KnixManagement.Failure(
          "QUOTA_EXCEEDED: the account '" + account + "' stores " + used + " bytes "
              + "through the KNIX door; this write (" + change + " more) would pass its quota of "
              + quotaBytes
              + " bytes (frontend setting knix.storage.bytes.per.account); delete data first");
    }
    data.writeCounter(userSpace(account), USED_COUNTER, Math.max(0, used + change));
  }

  /** How many bytes an action adds (positive) or frees (negative), from what is stored now; 0 for reads. */
  private long change(String space, String type, String action, JsonNode p) {
    return switch (type + "/" + action) {
      case "kv/putdata" ->
        size(p, "key")
            + size(p, "value")
            - data.kvMetadata(space, str(p, "key"))
                .map(m -> m.size() < 0 ? 0 : size(p, "key") + m.size())
                .orElse(0L);
      case "kv/deletedata" ->
        -data.kvMetadata(space, str(p, "key"))
            .map(m -> m.size() < 0 ? 0 : size(p, "key") + m.size())
            .orElse(0L);
      case "map/putmapentry" ->
        size(p, "key")
            + size(p, "value")
            - data.readMapEntry(space, str(p, "mapname"), str(p, "key"))
                .map(v -> size(p, "key") + (long) v.length)
                .orElse(0L);
      case "map/deletemapentry" ->
        -data.readMapEntry(space, str(p, "mapname"), str(p, "key"))
            .map(v -> size(p, "key") + (long) v.length)
            .orElse(0L);
      case "map/clearmap", "map/deletemap" ->
        -data.readMap(space, str(p, "mapname")).entrySet().stream()
            .mapToLong(e ->
                e.getKey().getBytes(StandardCharsets.UTF_8).length + (long) e.getValue().length)
            .sum();
      case "set/addsetentry" ->
        data.readSet(space, str(p, "setname")).contains(str(p, "item")) ? 0 : size(p, "item");
      case "set/removesetentry" ->
        data.readSet(space, str(p, "setname")).contains(str(p, "item")) ? -size(p, "item") : 0;
      case "set/clearset", "set/deleteset" ->
        -data.readSet(space, str(p, "setname")).stream()
            .mapToLong(i -> i.getBytes(StandardCharsets.UTF_8).length)
            .sum();
      case "counter/createcounter" ->
        data.readCounter(space, str(p, "countername")).isPresent() ? 0 : size(p, "countername") + 8;
      case "counter/deletecounter" ->
        data.readCounter(space, str(p, "countername")).isPresent()
            ? -(size(p, "countername") + 8)
            : 0;
      default -> 0;
    };
  }

  private static long size(JsonNode p, String field) {
    return str(p, field).getBytes(StandardCharsets.UTF_8).length;
  }

  private void perform(String space, String type, String action, JsonNode p, ObjectNode out) {
    {
      switch ((type.isEmpty() ? "kv" : type) + "/" + action) {
        case "kv/putdata" -> data.writeKv(space, str(p, "key"), bytes(str(p, "value")));
        case "kv/getdata" ->
          out.put(
              "value", data.readKv(space, str(p, "key")).map(KnixStorage::b64).orElse(null));
        case "kv/deletedata" -> data.deleteKv(space, str(p, "key"));
        case "kv/listkeys" -> out.set("keylist", page(data.listKeys(space, "", MAX_LIST), p));
        case "map/createmap" -> {} // a map exists once it has an entry (KNIX's createMap does
        // nothing either)
        case "map/putmapentry" ->
          data.writeMapEntry(space, str(p, "mapname"), str(p, "key"), bytes(str(p, "value")));
        case "map/getmapentry" ->
          out.put(
              "value",
              data.readMapEntry(space, str(p, "mapname"), str(p, "key"))
                  .map(KnixStorage::b64)
                  .orElse(null));
        case "map/deletemapentry" -> data.deleteMapEntry(space, str(p, "mapname"), str(p, "key"));
        case "map/retrievemap" -> {
          ObjectNode m = out.putObject("mapentries");
          for (Map.Entry<String, byte[]> e :
              data.readMap(space, str(p, "mapname")).entrySet()) {
            m.put(e.getKey(), new String(e.getValue(), StandardCharsets.UTF_8));
          }
        }
        case "map/containsmapkey" ->
          out.put(
              "containskey",
              data.readMapEntry(space, str(p, "mapname"), str(p, "key")).isPresent());
        case "map/getmapkeys" ->
          out.set(
              "mapkeys",
              Json.MAPPER.valueToTree(data.readMap(space, str(p, "mapname")).keySet()));
        case "map/clearmap", "map/deletemap" -> data.deleteMap(space, str(p, "mapname"));
        case "set/createset" -> {} // a set exists once it has an item
        case "set/addsetentry" -> data.addSetItem(space, str(p, "setname"), str(p, "item"));
        case "set/removesetentry" -> data.removeSetItem(space, str(p, "setname"), str(p, "item"));
        case "set/containssetitem" ->
          out.put("containsitem", data.readSet(space, str(p, "setname")).contains(str(p, "item")));
        case "set/retrieveset" ->
          out.set("items", Json.MAPPER.valueToTree(data.readSet(space, str(p, "setname"))));
        case "set/clearset", "set/deleteset" -> data.deleteSet(space, str(p, "setname"));
        case "counter/createcounter" ->
          data.writeCounter(space, str(p, "countername"), num(p, "countervalue"));
        case "counter/getcounter" ->
          out.put(
              "countervalue",
              data.readCounter(space, str(p, "countername"))
                  .orElseThrow(() -> new KnixManagement.Failure(
                      "Error while performing storage operation; counter '"
                          + p.path("countername").asText() + "' does not exist")));
        case "counter/incrementcounter", "counter/decrementcounter" -> {
          String name = str(p, "countername");
          long by = action.startsWith("inc") ? num(p, "increment") : -num(p, "decrement");
          long now = data.readCounter(space, name).orElse(0L) + by;
          data.writeCounter(space, name, now);
          out.put("countervalue", now);
        }
        case "counter/deletecounter" -> data.deleteCounter(space, str(p, "countername"));
        case "map/listmaps" -> out.set("maplist", page(data.listMaps(space, "", MAX_LIST), p));
        case "set/listsets" -> out.set("setlist", page(data.listSets(space, "", MAX_LIST), p));
        case "counter/listcounters" ->
          // the platform's own counters (quota bookkeeping, names starting "sand.") are not the
          // account's
          out.set(
              "counterlist",
              page(
                  data.listCounters(space, "", MAX_LIST).stream()
                      .filter(n -> !n.startsWith(RESERVED))
                      .toList(),
                  p));
        default ->
          throw new KnixManagement.Failure(
              "Error while performing storage operation; unknown data_type/" + "action '" + type
                  + "/" + action + "' (data_type kv, map, set or counter; see docs/knix.md)");
      }
    }
  }

  private static JsonNode page(List<String> all, JsonNode p) {
    int start = Math.max(0, p.path("start").asInt(0));
    int count = Math.max(0, Math.min(MAX_LIST, p.path("count").asInt(2000)));
    return Json.MAPPER.valueToTree(
        all.subList(Math.min(start, all.size()), Math.min(all.size(), start + count)));
  }

  private static String str(JsonNode p, String field) {
    JsonNode v = p.path(field);
    if (!v.isTextual() || v.asText().isEmpty()) {
      throw new KnixManagement.Failure("Error while performing storage operation; parameters."
          + field + " must be a non-empty string");
    }
    return v.asText();
  }

  private static long num(JsonNode p, String field) {
    JsonNode v = p.path(field);
    if (!v.canConvertToLong()) {
      throw new KnixManagement.Failure(
          "Error while performing storage operation; parameters." + field + " must be an integer");
    }
    return v.asLong();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String b64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }
}
