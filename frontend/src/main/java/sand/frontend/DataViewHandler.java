package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import sand.cluster.globaldata.GlobalDataLayer;
import sand.cluster.globaldata.GlobalUnavailableException;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code GET /api/v1/apps/{app}/data}: a read-only view of an application's key-value data as the global data
 * layer holds it (docs/data-layer.md): keys by {@code prefix}, in key order, a page at a time; {@code ?key=} one
 * value. What grains wrote reaches the global layer by the host agents' write-behind, so the newest writes may
 * show a moment late. Another account's application answers 404; nothing here writes.
 */
public final class DataViewHandler {
  public static final int LIMIT_MAX = 1000;
  public static final int LIMIT_DEFAULT = 100;
  /** The longest key or prefix asked for (the data layer's own names are shorter). */
  public static final int NAME_MAX = 512;

  private final AppsHandler apps;
  private final GlobalDataLayer data;

  public DataViewHandler(AppsHandler apps, GlobalDataLayer data) {
    this.apps = apps;
    this.data = data;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps/{app}/data", true, this::view);
  }

  Reply view(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    if (data == null) {
      throw new ApiException(
          503, "unavailable", "this frontend has no global data layer configured");
    }
    String appId = o.app().appId();
    String key = call.query("key");
    String prefix = call.query("prefix");
    for (String[] q : new String[][] {{"key", key}, {"prefix", prefix}}) {
      if (q[1] != null && q[1].length() > NAME_MAX) {
        throw ApiException.badRequest(
            q[0] + " is " + q[1].length() + " characters; at most " + NAME_MAX);
      }
    }
    try {
      return key != null ? one(o, appId, key) : page(call, o, appId);
    } catch (GlobalUnavailableException e) {
      throw new ApiException(
          502, "unavailable", "the global data layer (Cassandra) did not answer; try again");
    }
  }

  private Reply one(AppsHandler.Owned o, String appId, String key) {
    byte[] v = data.readKv(appId, key)
        .orElseThrow(
            () -> ApiException.notFound("application '" + o.name().name() + "' has no key '" + key
                + "' in the global data layer (a write of the last moment may not be there yet)"));
    ObjectNode out = Json.object().put("key", key).put("bytes", v.length);
    String text = utf8(v);
    if (text != null) {
      out.put("encoding", "utf-8").put("value", text);
    } else {
      out.put("encoding", "base64").put("value", Base64.getEncoder().encodeToString(v));
    }
    return Reply.ok(out);
  }

  private Reply page(Call call, AppsHandler.Owned o, String appId) {
    String prefix = call.query("prefix") == null ? "" : call.query("prefix");
    int limit = call.count("limit", LIMIT_DEFAULT, LIMIT_MAX);
    String cursor = call.query("cursor");
    String after;
    if (cursor != null && !cursor.isEmpty()) {
      try {
        after = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest("cursor '" + cursor
            + "' is not one this API gave: pass the previous page's next as it was");
      }
      if (!after.startsWith(prefix)) {
        throw ApiException.badRequest(
            "cursor is not within prefix '" + prefix + "': keep the same prefix");
      }
    } else {
      after = prefix.isEmpty() ? "" : beforeAll(prefix);
    }
    List<String> keys = data.listKeys(appId, after, limit + 1);
    ObjectNode out = Json.object().put("app", o.name().name()).put("prefix", prefix);
    var arr = out.putArray("keys");
    String last = null;
    boolean more = false;
    for (String k : keys) {
      if (!k.startsWith(prefix)) {
        if (last == null) {
          continue; // a key that sorts between beforeAll(prefix) and the prefix (a non-BMP
          // character)
        }
        break; // keys are in order: past the prefix
      }
      if (arr.size() == limit) {
        more = true;
        break;
      }
      arr.add(k);
      last = k;
    }
    out.put(
        "next",
        more
            ? Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(last.getBytes(StandardCharsets.UTF_8))
            : null);
    return Reply.ok(out);
  }

  /** A string that sorts just before every key starting with {@code prefix} (listKeys starts after it). */
  static String beforeAll(String prefix) {
    char c = prefix.charAt(prefix.length() - 1);
    return c == 0
        ? prefix.substring(0, prefix.length() - 1)
        : prefix.substring(0, prefix.length() - 1) + (char) (c - 1) + Character.MAX_VALUE;
  }

  private static String utf8(byte[] v) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(v))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }
}
