package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import sand.cluster.ClusterStore;
import sand.cluster.SecretBox;
import sand.cluster.SecretTables.StoredSecret;
import sand.contracts.AppEnv;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * {@code /api/v1/apps/{app}/secrets}: an application's secrets (docs/security.md, "Secrets"). Values go in and
 * never come out: the list gives names, sizes and update times. They are sealed by {@link SecretBox} before they
 * reach the cluster state, and the host agent opens them at the next deploy (the answer says so). Another
 * account's application answers 404, as every app route does.
 */
public final class SecretsHandler {
  /** What every change answers: a sandbox already running keeps the environment it started with. */
  static final String TAKES_EFFECT =
      "takes effect at the next deploy (POST /api/v1/apps/{app}/deploy)";

  private final ClusterStore store;
  private final AppsHandler apps;
  private final Clock clock;
  private final SecretBox box;

  public SecretsHandler(ClusterStore store, AppsHandler apps, Clock clock, SecretBox box) {
    this.store = store;
    this.apps = apps;
    this.clock = clock;
    this.box = box;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps/{app}/secrets", true, this::list);
    r.add("PUT", "/api/v1/apps/{app}/secrets/{name}", true, this::put);
    r.add("DELETE", "/api/v1/apps/{app}/secrets/{name}", true, this::delete);
  }

  private static String name(Call call) {
    try {
      return AppEnv.checkName("secret", call.param("name"));
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(e.getMessage());
    }
  }

  Reply put(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = name(call);
    JsonNode body = call.json("a secret");
    JsonNode v = body.path("value");
    if (!body.isObject() || !v.isTextual()) {
      throw ApiException.badRequest(
          "the body must be {\"value\": \"...\"} with the secret as a string");
    }
    String value;
    try {
      value = AppEnv.checkValue("secret", name, v.asText());
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(e.getMessage());
    }
    String appId = o.app().appId();
    List<StoredSecret> existing = store.secrets(appId);
    boolean replaces = existing.stream().anyMatch(s -> s.name().equals(name));
    int max = AppEnv.RULES.maxSecrets();
    if (!replaces && existing.size() >= max) {
      throw ApiException.badRequest("application '" + o.name().name() + "' has " + existing.size()
          + " secrets: at most " + max + "; delete one first (sand secret delete)");
    }
    checkTotal(existing, o.app().settings(), name, value);
    StoredSecret s = new StoredSecret(appId, name, box.seal(appId, name, value), clock.instant());
    store.putSecret(s);
    return Reply.ok(describe(s).put("app", o.name().name()).put("note", note(o)));
  }

  Reply list(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    ObjectNode out = Json.object().put("app", o.name().name());
    var arr = out.putArray("secrets");
    store.secrets(o.app().appId()).forEach(s -> arr.add(describe(s)));
    return Reply.ok(out);
  }

  Reply delete(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = call.param("name"); // a name no secret may have is simply not there: 404
    if (!valid(name) || !store.deleteSecret(o.app().appId(), name)) {
      throw ApiException.notFound("application '" + o.name().name() + "' has no secret "
          + (valid(name) ? name : "of that name") + "; list them with GET /api/v1/apps/"
          + o.name().name() + "/secrets");
    }
    return Reply.ok(Json.object()
        .put("app", o.name().name())
        .put("name", name)
        .put("deleted", true)
        .put("note", note(o)));
  }

  /**
   * settings.env and the secrets, with {@code name} set to {@code value} (null: none), fit max_total_bytes together;
   * else 400. PUT of a secret and PUT of the application both check, so neither can push the other over.
   */
  static void checkTotal(
      List<StoredSecret> secrets, String settingsJson, String name, String value) {
    Map<String, Integer> sizes = new LinkedHashMap<>();
    try {
      AppEnv.fromSettingsJson(settingsJson).forEach((k, x) -> sizes.put(k, bytes(x)));
      secrets.forEach(s -> sizes.put(s.name(), s.valueBytes()));
      if (name != null) {
        sizes.put(name, bytes(value));
      }
      AppEnv.checkTotal(sizes);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(e.getMessage());
    }
  }

  private static boolean valid(String name) {
    try {
      AppEnv.checkName("secret", name);
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static ObjectNode describe(StoredSecret s) {
    return Json.object()
        .put("name", s.name())
        .put("bytes", s.valueBytes())
        .put("updated", AppStatus.iso(s.updated()));
  }

  private static String note(AppsHandler.Owned o) {
    return TAKES_EFFECT.replace("{app}", o.name().name());
  }

  private static int bytes(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
  }
}
