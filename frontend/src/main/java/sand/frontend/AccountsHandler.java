package sand.frontend;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.HexFormat;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.Account;

/** {@code POST /api/v1/accounts}: sign-up (open, or by the operator's admin key only). */
public final class AccountsHandler {
  /** Account names: lower-case letters, digits, '_' and '-', like application names. */
  public static final String NAME_FORM = "[a-z0-9][a-z0-9_-]{0,62}";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ClusterStore store;
  private final boolean openSignup;
  private final Clock clock;

  public AccountsHandler(ClusterStore store, boolean openSignup, Clock clock) {
    this.store = store;
    this.openSignup = openSignup;
    this.clock = clock;
  }

  public void routes(Router r) {
    r.add("POST", "/api/v1/accounts", false, this::create);
  }

  Reply create(Call call) {
    if (!openSignup && !call.isAdmin()) {
      if (call.account() == null) {
        throw new ApiException(401, "unauthorized", "sign-up is closed on this platform: the operator creates "
            + "accounts with the admin key (Authorization: Bearer <admin key>)");
      }
      throw new ApiException(403, "forbidden", "only the operator's admin key may create accounts "
          + "(open sign-up is off)");
    }
    var body = call.json("request body");
    String name = body.path("name").isTextual() ? body.path("name").asText() : "";
    if (!name.matches(NAME_FORM)) {
      throw ApiException.badRequest("account name '" + name + "' is invalid: 1-63 of a-z 0-9 _ -, starting "
          + "with a letter or digit (send {\"name\": \"alice\"})");
    }
    byte[] raw = new byte[24];
    RANDOM.nextBytes(raw);
    String key = "sand_" + HexFormat.of().formatHex(raw);
    if (!store.createAccount(new Account(name, AuthHandler.sha256(key), clock.instant()))) {
      throw ApiException.conflict("account '" + name + "' exists; choose another name");
    }
    return Reply.json(201, Json.object().put("name", name).put("api_key", key));
  }
}
