package sand.frontend;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.Account;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Json;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;
import sand.frontend.internal.Throttle;

/**
 * {@code POST /api/v1/accounts}: sign-up (open, or by the operator's admin key only); {@code DELETE
 * /api/v1/accounts/{account}}: the account's own key (or the admin key) deletes it with its applications and
 * grains, once none of them runs. A deleted account's name stays taken for {@link AuthHandler#DELETED_NAME_HELD}
 * (sign-up answers 409 saying when it is free): other frontends may still serve its old key from their caches, and
 * that key must never act for a new account of the same name.
 */
public final class AccountsHandler {
  /** Account names: lower-case letters, digits, '_' and '-', like application names. */
  public static final String NAME_FORM = "[a-z0-9][a-z0-9_-]{0,62}";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final ClusterStore store;
  private final boolean openSignup;
  private final Clock clock;
  private final AppsHandler apps;
  private final DisabledAccounts disabled;
  private Throttle signUps;

  AccountsHandler(
      ClusterStore store,
      boolean openSignup,
      Clock clock,
      AppsHandler apps,
      DisabledAccounts disabled) {
    this.store = store;
    this.openSignup = openSignup;
    this.clock = clock;
    this.apps = apps;
    this.disabled = disabled;
  }

  /** Sign-ups per client address (the operator's and the KNIX door's own calls are not counted here). */
  void limitSignUps(Throttle perAddress) {
    this.signUps = perAddress;
  }

  public void routes(Router r) {
    r.add("POST", "/api/v1/accounts", false, this::create);
    r.add("DELETE", "/api/v1/accounts/{account}", false, this::delete);
  }

  Reply delete(Call call) {
    String name = call.param("account");
    if (!call.isAdmin()) {
      if (call.account() == null) {
        throw ApiException.missingKey();
      }
      if (!call.account().equals(name)) {
        throw new ApiException(
            403,
            "forbidden",
            "an account can delete only itself; you are '" + call.account() + "'");
      }
    }
    Account account =
        store.account(name).orElseThrow(() -> ApiException.notFound("no account '" + name + "'"));
    List<ApplicationRecord> owned =
        store.applications().stream().filter(a -> a.owner().equals(name)).toList();
    Set<String> live = apps.liveHosts();
    List<String> running = owned.stream()
        .filter(a -> !"undeployed".equals(apps.status(a, live)))
        .map(ApplicationRecord::name)
        .sorted()
        .toList();
    if (!running.isEmpty()) {
      throw ApiException.conflict(
          "account '" + name + "' still runs " + String.join(", ", running)
              + "; undeploy them first (POST /api/v1/apps/{app}/undeploy) and wait for status undeployed");
    }
    var out = Json.object().put("name", name).put("deleted", true);
    var deleted = out.putArray("applications");
    for (ApplicationRecord a : owned) {
      apps.remove(a);
      deleted.add(a.name());
    }
    store.grains(name).forEach(g -> store.deleteGrain(name, g.name()));
    // the name stays taken while a frontend may still serve the old key from its cache
    store.deleteAccount(account, AuthHandler.DELETED_NAME_HELD);
    disabled.keyDeleted(account.apiKeySha256());
    return Reply.ok(out);
  }

  Reply create(Call call) {
    if (!openSignup && !call.isAdmin()) {
      if (call.account() == null) {
        throw new ApiException(
            401,
            "unauthorized",
            "sign-up is closed on this platform: the operator creates "
                + "accounts with the admin key (Authorization: Bearer <admin key>)");
      }
      throw new ApiException(
          403,
          "forbidden",
          "only the operator's admin key may create accounts " + "(open sign-up is off)");
    }
    if (!call.isAdmin() && !call.isLoopback() && signUps != null) {
      signUps.take(call.clientAddress());
    }
    var body = call.json("request body");
    String name = body.path("name").isTextual() ? body.path("name").asText() : "";
    if (!name.matches(NAME_FORM)) {
      throw ApiException.badRequest(
          "account name '" + name + "' is invalid: 1-63 of a-z 0-9 _ -, starting "
              + "with a letter or digit (send {\"name\": \"alice\"})");
    }
    byte[] raw = new byte[24];
    RANDOM.nextBytes(raw);
    String key = "sand_" + HexFormat.of().formatHex(raw);
    if (!store.createAccount(new Account(name, AuthHandler.sha256(key), clock.instant()))) {
      Optional<Instant> held = store.accountNameHeldUntil(name);
      if (held.isPresent()) {
        long s =
            Math.max(1, (Duration.between(clock.instant(), held.get()).toMillis() + 999) / 1000);
        throw new ApiException(
            409,
            "conflict",
            "account name '" + name + "' belonged to an account deleted less than "
                + AuthHandler.DELETED_NAME_HELD.toSeconds() + " s ago; it is free again at "
                + held.get()
                + " (in " + s + " s): until then its old key may still be remembered by a frontend,"
                + " and it must never act for a new account. Choose another name or try again then",
            Map.of(Reply.RETRY_AFTER_S, Long.toString(s)));
      }
      throw ApiException.conflict("account '" + name + "' exists; choose another name");
    }
    return Reply.json(201, Json.object().put("name", name).put("api_key", key));
  }
}
