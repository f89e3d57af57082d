package sand.frontend.knix;

import static sand.frontend.knix.KnixRequests.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.cluster.FrontendTables.KnixRecord;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Json;
import sand.frontend.internal.LoopbackApi;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Throttle;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * KNIX's account actions: sign-up (a SAND account through the API, and a login record by e-mail), login (the
 * e-mail's password checked against that record, {@link KnixLogins}) and deleting the account with all its KNIX
 * records.
 */
final class KnixAccounts {
  private static final Logger LOG = LoggerFactory.getLogger(KnixAccounts.class);
  private static final String LOGIN_SCOPE = "login";
  /** How long a login waits for a free derivation slot before it answers 503 busy. */
  static final long HASH_WAIT_MS = 5_000;
  /** Logins that may wait for a slot, per slot; more answer 503 busy at once. */
  static final int WAITERS_PER_SLOT = 8;

  private final ClusterStore store;
  private final LoopbackApi.Api api;
  private final int iterations;
  private Throttle signUpsPerAddress = new Throttle("sign-ups per client address", "-", 0);
  private Throttle loginsPerAddress = new Throttle("logins per client address", "-", 0);
  private Throttle loginsPerEmail = new Throttle("logins per e-mail", "-", 0);
  /** Password derivations at once: each takes a core for a fraction of a second (PBKDF2, {@link KnixLogins}). */
  private Semaphore hashing = new Semaphore(2, true);

  private int hashSlots = 2;
  private final AtomicInteger hashWaiters = new AtomicInteger();
  private volatile JsonNode decoy;

  KnixAccounts(ClusterStore store, LoopbackApi.Api api, int iterations) {
    this.store = store;
    this.api = api;
    this.iterations = iterations;
  }

  /** See {@link KnixManagement#limitLogins}. */
  void limitLogins(
      Throttle signUps, Throttle loginsByAddress, Throttle loginsByEmail, int hashSlots) {
    this.signUpsPerAddress = signUps;
    this.loginsPerAddress = loginsByAddress;
    this.loginsPerEmail = loginsByEmail;
    this.hashing = new Semaphore(hashSlots, true);
    this.hashSlots = hashSlots;
  }

  /** One password derivation, in one of the few slots (503 busy when none frees up in time). */
  private <T> T hashed(Derivation<T> d) throws KnixLogins.WrongPassword {
    boolean got;
    // a wait holds a Jetty thread: only a few may wait (logins from many addresses must not take
    // every thread)
    if (hashWaiters.incrementAndGet() > WAITERS_PER_SLOT * hashSlots) {
      got = false;
    } else {
      try {
        got = hashing.tryAcquire(HASH_WAIT_MS, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        got = false;
      }
    }
    hashWaiters.decrementAndGet();
    if (!got) {
      throw new ApiException(
          503,
          "busy",
          "this frontend is checking as many passwords as it can at once; try again "
              + "in a moment",
          Map.of(Reply.RETRY_AFTER_S, "1"));
    }
    try {
      return d.run();
    } finally {
      hashing.release();
    }
  }

  @FunctionalInterface
  private interface Derivation<T> {
    T run() throws KnixLogins.WrongPassword;
  }

  private JsonNode decoy() {
    JsonNode d = decoy;
    if (d == null) {
      d = KnixLogins.decoy(iterations);
      decoy = d;
    }
    return d;
  }

  ObjectNode signUp(JsonNode user, Call call) {
    String email = text(user, "email", "user");
    String password = text(user, "password", "user");
    signUpsPerAddress.take(call.clientAddress());
    String name = user.path("name").asText(email);
    if (email.chars().anyMatch(Character::isWhitespace)) {
      throw new Failure("The e-mail may not contain spaces.");
    }
    if (!store.claimKnixRecord(new KnixRecord(
        LOGIN_SCOPE, "user", email, Json.bytes(Json.object().put("pending", true))))) {
      throw new Failure("User already exists.");
    }
    try {
      String base = accountName(email);
      for (int attempt = 0; ; attempt++) {
        String account =
            attempt == 0 ? base : base.substring(0, Math.min(base.length(), 55)) + "-" + Ids.hex(3);
        LoopbackApi.Answer a = api.call(
            "POST",
            "/api/v1/accounts",
            "",
            "application/json",
            Json.bytes(Json.object().put("name", account)));
        if (a.status() == 409 && attempt < 5) {
          continue;
        }
        if (!a.ok()) {
          throw new Failure("Sign-up failed: " + a.message());
        }
        String key = a.body().path("api_key").asText();
        ObjectNode login;
        try {
          login = hashed(() -> KnixLogins.record(account, name, password, key, iterations));
        } catch (KnixLogins.WrongPassword e) {
          throw new IllegalStateException(e); // making a record checks no password
        }
        store.putKnixRecord(new KnixRecord(LOGIN_SCOPE, "user", email, Json.bytes(login)));
        LOG.info("[knix] {} signed up as account {}", email, account);
        return Json.object().put("message", "User created successfully.").put("account", account);
      }
    } catch (RuntimeException e) {
      store.deleteKnixRecord(LOGIN_SCOPE, "user", email);
      throw e;
    }
  }

  ObjectNode logIn(JsonNode user, Call call) {
    String email = text(user, "email", "user");
    String password = text(user, "password", "user");
    // the e-mail's limit first: a flood against one e-mail does not also use up its address's
    // logins
    loginsPerEmail.take(email.toLowerCase(Locale.ROOT));
    loginsPerAddress.take(call.clientAddress());
    JsonNode rec = store
        .knixRecord(LOGIN_SCOPE, "user", email)
        .map(r -> Json.parse(r.value(), "login"))
        .filter(r -> !r.path("pending").asBoolean(false))
        .orElse(null);
    String key;
    try {
      // an unknown e-mail is checked against a decoy record: the same work, so the same time, as a
      // known one
      key = hashed(() -> KnixLogins.apiKey(rec == null ? decoy() : rec, password));
      if (rec == null) {
        throw new KnixLogins.WrongPassword();
      }
    } catch (KnixLogins.WrongPassword e) {
      throw new Failure("Authentication failed; wrong username and/or password.");
    }
    String account = rec.path("account").asText();
    return Json.object()
        .put("message", "Successfully logged in.")
        .put("token", key)
        .put("storageEndpoint", "/storage/" + account)
        .put("name", rec.path("name").asText(email))
        .put("email", email)
        .put("account", account);
  }

  ObjectNode deleteAccount(Caller c) {
    LoopbackApi.Answer a =
        api.call("DELETE", "/api/v1/accounts/" + c.account(), c.token(), null, null);
    if (!a.ok()) {
      throw new Failure("Couldn't delete account: " + a.message());
    }
    KnixFunctions.forgetAll(store, c.account());
    KnixWorkflows.forgetAll(store, c.account());
    KnixTriggers.forgetAll(store, c.account());
    for (KnixRecord r : loginsOf(c.account())) {
      store.deleteKnixRecord(LOGIN_SCOPE, "user", r.id());
    }
    return Json.object().put("message", "Account deleted.");
  }

  private List<KnixRecord> loginsOf(String account) {
    return store.knixRecords(LOGIN_SCOPE, "user").stream()
        .filter(
            r -> account.equals(Json.parse(r.value(), "login").path("account").asText()))
        .toList();
  }

  /** A SAND account name for an e-mail: its letters and digits, the rest as '-'. */
  static String accountName(String email) {
    String s = email
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^a-z0-9_-]+", "-")
        .replaceAll("^[^a-z0-9]+", "");
    s = s.length() > 48 ? s.substring(0, 48) : s;
    return s.isEmpty() ? "knix-" + Ids.hex(4) : s;
  }
}
