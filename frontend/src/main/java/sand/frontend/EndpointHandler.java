package sand.frontend;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import sand.cluster.ClusterStore;
import sand.cluster.EndpointTables.EndpointAuth;
import sand.cluster.EndpointTables.InvokeKey;
import sand.cluster.SecretBox;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.invoke.InvokeAuth;
import sand.frontend.invoke.InvokeAuth.Mode;

/**
 * How an application's end-user endpoint is protected (docs/api.md, "Protecting an application's endpoint"):
 * {@code /api/v1/apps/{app}/endpoint} (the mode), {@code .../keys} (invoke keys, answered once, stored as SHA-256)
 * and {@code .../signing-secret} (the HMAC secret, answered once, stored sealed by {@link SecretBox}). Every change
 * is forgotten by this frontend's application cache at once; other frontends see it within their
 * {@code app.cache.ms} plus one read. Another account's application answers 404, as every app route does.
 */
public final class EndpointHandler {
  /** Invoke keys an application may have at once. */
  static final int MAX_KEYS = 20;
  /** A key's name: a label for the developer. */
  static final int MAX_KEY_NAME = 64;

  static final String KEY_PREFIX = "sik_";
  static final String SECRET_PREFIX = "sss_";
  /** Characters of a key shown in lists, after its prefix. */
  private static final int SHOWN = 6;

  private final ClusterStore store;
  private final AppsHandler apps;
  private final Clock clock;
  private final SecretBox box;
  private final SecureRandom random = new SecureRandom();

  public EndpointHandler(ClusterStore store, AppsHandler apps, Clock clock, SecretBox box) {
    this.store = store;
    this.apps = apps;
    this.clock = clock;
    this.box = box;
  }

  public void routes(Router r) {
    r.add("GET", "/api/v1/apps/{app}/endpoint", true, this::get);
    r.add("PUT", "/api/v1/apps/{app}/endpoint", true, this::put);
    r.add("GET", "/api/v1/apps/{app}/keys", true, this::listKeys);
    r.add("POST", "/api/v1/apps/{app}/keys", true, this::createKey);
    r.add("DELETE", "/api/v1/apps/{app}/keys/{id}", true, this::revokeKey);
    r.add("POST", "/api/v1/apps/{app}/signing-secret", true, this::createSecret);
  }

  Reply get(Call call) {
    return Reply.ok(describe(apps.owned(call)));
  }

  Reply put(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    JsonNode body = call.json("an endpoint protection");
    if (!body.isObject() || !body.path("auth").isTextual()) {
      throw ApiException.badRequest("the body must be {\"auth\": \"public\" | \"key\" | \"hmac\"}");
    }
    Mode mode = Mode.parse(body.path("auth").asText());
    store.endpoints().putEndpointMode(o.app().appId(), mode.wire());
    apps.changed(o.name().name());
    return Reply.ok(describe(o));
  }

  Reply listKeys(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    ObjectNode out = Json.object().put("app", o.name().name());
    var arr = out.putArray("keys");
    store.endpoints().invokeKeys(o.app().appId()).forEach(k -> arr.add(describe(k)));
    return Reply.ok(out);
  }

  Reply createKey(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String name = "";
    if (call.body().length > 0) {
      JsonNode body = call.json("an invoke key");
      JsonNode n = body.path("name");
      if (!body.isObject() || !(n.isMissingNode() || n.isTextual())) {
        throw ApiException.badRequest("the body must be empty or {\"name\": \"...\"}");
      }
      name = n.asText("");
    }
    if (name.length() > MAX_KEY_NAME || !name.matches("[A-Za-z0-9._-]*")) {
      throw ApiException.badRequest(
          "a key's name is at most " + MAX_KEY_NAME + " letters, digits, '.', '_' or '-'");
    }
    String appId = o.app().appId();
    List<InvokeKey> existing = store.endpoints().invokeKeys(appId);
    if (existing.size() >= MAX_KEYS) {
      throw ApiException.conflict("application '" + o.name().name() + "' has " + existing.size()
          + " invoke keys: at most " + MAX_KEYS + "; revoke one first (sand keys revoke)");
    }
    byte[] b = new byte[32];
    random.nextBytes(b);
    String key = KEY_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    byte[] id = new byte[8];
    random.nextBytes(id);
    InvokeKey k = new InvokeKey(
        appId,
        HexFormat.of().formatHex(id),
        name,
        AuthHandler.sha256(key),
        key.substring(0, KEY_PREFIX.length() + SHOWN),
        clock.instant());
    store.endpoints().putInvokeKey(k);
    apps.changed(o.name().name());
    return Reply.json(
        201,
        describe(k)
            .put("app", o.name().name())
            .put("key", key)
            .put(
                "note",
                "the key is shown only now; callers send it as " + InvokeAuth.KEY_HEADER
                    + " (it is checked when the endpoint's mode is 'key')"));
  }

  Reply revokeKey(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    String id = call.param("id");
    if (!id.matches("[0-9a-f]{16}")
        || !store.endpoints().deleteInvokeKey(o.app().appId(), id)) {
      throw ApiException.notFound("application '" + o.name().name() + "' has no invoke key "
          + (id.matches("[0-9a-f]{16}") ? id : "of that id") + "; list them with GET /api/v1/apps/"
          + o.name().name() + "/keys");
    }
    apps.changed(o.name().name());
    return Reply.ok(
        Json.object()
            .put("app", o.name().name())
            .put("id", id)
            .put("revoked", true)
            .put(
                "note",
                "refused at once by this frontend, by the others within their app.cache.ms (at most 5 times it)"));
  }

  Reply createSecret(Call call) {
    AppsHandler.Owned o = apps.owned(call);
    byte[] b = new byte[32];
    random.nextBytes(b);
    String secret = SECRET_PREFIX + HexFormat.of().formatHex(b);
    String appId = o.app().appId();
    store.endpoints().putSigningSecret(appId, box.seal(appId, InvokeAuth.SECRET_NAME, secret));
    apps.changed(o.name().name());
    return Reply.json(
        201,
        Json.object()
            .put("app", o.name().name())
            .put("secret", secret)
            .put(
                "note",
                "the secret is shown only now and replaces any earlier one; callers sign "
                    + "\"<timestamp>.<body>\" with HMAC-SHA256 (it is checked when the endpoint's mode is 'hmac')"));
  }

  private ObjectNode describe(AppsHandler.Owned o) {
    String appId = o.app().appId();
    EndpointAuth a = store.endpoints().endpointAuth(appId).orElse(null);
    String mode = a == null ? Mode.PUBLIC.wire() : a.mode();
    int keys = store.endpoints().invokeKeys(appId).size();
    boolean secret = a != null && a.sealedSecret() != null;
    ObjectNode out = Json.object()
        .put("app", o.name().name())
        .put("auth", mode)
        .put("keys", keys)
        .put("signing_secret", secret);
    if (mode.equals(Mode.KEY.wire()) && keys == 0) {
      out.put(
          "note",
          "no invoke key yet: every request is refused until one is created (sand keys create)");
    } else if (mode.equals(Mode.HMAC.wire()) && !secret) {
      out.put(
          "note",
          "no signing secret yet: every request is refused until one is created "
              + "(POST /api/v1/apps/" + o.name().name() + "/signing-secret)");
    }
    return out;
  }

  private static ObjectNode describe(InvokeKey k) {
    return Json.object()
        .put("id", k.id())
        .put("name", k.name())
        .put("prefix", k.prefix())
        .put("created", AppStatus.iso(k.created()));
  }
}
