package sand.frontend;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.cluster.ClusterStore;
import sand.common.log.LogThrottle;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Errors;
import sand.frontend.internal.Ids;
import sand.frontend.internal.Reply;
import sand.frontend.internal.Router;

/**
 * Authentication: {@code Authorization: Bearer <api key>} becomes the request's account (only the key's
 * SHA-256 is stored and looked up). A key that is present but unknown answers 401 here; a route that
 * needs an account and got none answers 401 in the {@link Router}. The operator's admin key marks the
 * request as admin (it may create accounts when open sign-up is off) and belongs to no account.
 *
 * <p>Known keys are remembered for {@link #KEY_MAX_AGE} (no Cassandra read on every request) and, while
 * Cassandra does not answer, up to {@link #KEY_MAX_STALE} after they were read: a slow or restarting cluster state
 * refuses no caller it knew a moment ago (a fault test under load saw 1% of requests refused with 502 otherwise).
 * The price: a deleted account's key keeps working on a frontend that read it before, for up to
 * {@link #KEY_MAX_AGE} (up to {@link #KEY_MAX_STALE} while that frontend cannot read Cassandra), and it names
 * the account by its name. So that it can never act for a new account of the same name, a deleted account's name
 * stays taken for {@link #DELETED_NAME_HELD}, longer than any frontend serves the old key (AccountsHandler;
 * docs/security.md, "API keys of deleted accounts"). Holding the name costs one row with a TTL per deletion and
 * nothing per request, where checking an account identity on each use would cost a read per request or be as
 * stale as this cache.
 */
public final class AuthHandler extends Handler.Wrapper {
  public static final String ACCOUNT_ATTRIBUTE = Call.ACCOUNT_ATTRIBUTE;
  public static final String ADMIN_ATTRIBUTE = Call.ADMIN_ATTRIBUTE;

  static final Duration KEY_MAX_AGE = Duration.ofSeconds(30);

  /** While Cassandra does not answer, a key read at most this long ago is still served (older: 502). */
  static final Duration KEY_MAX_STALE = Duration.ofSeconds(90);

  /**
   * How long a deleted account's name stays taken: beyond {@link #KEY_MAX_STALE}, the longest any frontend serves a
   * key it read before the delete, with a margin for that read's own time and the clocks (Cassandra's TTL).
   */
  static final Duration DELETED_NAME_HELD = KEY_MAX_STALE.plusSeconds(30);

  private static final Logger LOG = LoggerFactory.getLogger(AuthHandler.class);
  private static final int MAX_KEYS =
      100_000; // beyond, forget them all (bounded memory; a re-read each)

  private record Known(String account, long readAtNanos) {}

  private final ClusterStore store;
  private final String adminKeySha256;
  private final String previousKeySha256;
  private final LogThrottle previousLogged = new LogThrottle(Duration.ofMinutes(1));
  private final DisabledAccounts disabled;
  private final LongSupplier nanoTime;
  private final Map<String, Known> known = new ConcurrentHashMap<>();
  private final Map<String, String> delegated = new ConcurrentHashMap<>();
  static final int MAX_DELEGATIONS = 256;

  public AuthHandler(ClusterStore store, String adminKey, Handler next) {
    this(store, adminKey, "", new DisabledAccounts(store, KEY_MAX_AGE), next);
  }

  /**
   * {@code previousAdminKey}: during a rotation (frontend setting admin.key.previous), the old admin key, accepted
   * as well until its clients have the new one; each use of it is logged (at most once a minute) so the operator
   * sees who still sends it. Empty: none.
   */
  AuthHandler(
      ClusterStore store,
      String adminKey,
      String previousAdminKey,
      DisabledAccounts disabled,
      Handler next) {
    this(store, adminKey, previousAdminKey, disabled, System::nanoTime, next);
  }

  /** {@code nanoTime}: the clock of the known keys' ages (tests move it). */
  AuthHandler(
      ClusterStore store,
      String adminKey,
      String previousAdminKey,
      DisabledAccounts disabled,
      LongSupplier nanoTime,
      Handler next) {
    super(next);
    this.nanoTime = nanoTime;
    this.store = store;
    this.adminKeySha256 = adminKey == null || adminKey.isEmpty() ? null : sha256(adminKey);
    this.previousKeySha256 =
        previousAdminKey == null || previousAdminKey.isEmpty() ? null : sha256(previousAdminKey);
    this.disabled = disabled;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String header = request.getHeaders().get(HttpHeader.AUTHORIZATION);
    if (header != null) {
      if (!header.regionMatches(true, 0, "Bearer ", 0, 7) || header.substring(7).isBlank()) {
        Router.write(
            request,
            response,
            callback,
            Reply.error(new ApiException(
                401, "unauthorized", "the Authorization header must be 'Bearer <api key>'")));
        return true;
      }
      String key = header.substring(7).trim();
      String hash = sha256(key);
      if (hash.equals(adminKeySha256)) {
        request.setAttribute(ADMIN_ATTRIBUTE, Boolean.TRUE);
      } else if (hash.equals(previousKeySha256)) {
        request.setAttribute(ADMIN_ATTRIBUTE, Boolean.TRUE);
        previousKeyUsed(request);
      } else {
        String account;
        try {
          account = account(key);
        } catch (ApiException a) {
          Router.write(request, response, callback, Reply.error(a));
          return true;
        }
        request.setAttribute(ACCOUNT_ATTRIBUTE, account);
      }
    }
    return super.handle(request, response, callback);
  }

  private void previousKeyUsed(Request request) {
    if (previousLogged.allow()) {
      LOG.warn(
          "[admin] the previous admin key (being rotated out) was used by {} for {} {}: that client still needs"
              + " the new key before the rotation is finished",
          Call.origin(request),
          request.getMethod(),
          Request.getPathInContext(request));
    }
  }

  /**
   * The account an API key acts for (the operator's key is none: 401 here), or the error a call with it answers:
   * 401 for an unknown key, 403 for a disabled account, 502 while Cassandra does not answer a key not seen before.
   * The one check of a key, for the Authorization header and for the KNIX door's tokens (KnixManagement).
   */
  String account(String key) {
    String hash = sha256(key);
    String account =
        delegated.get(hash); // a delegation of this process; disabling still applies below
    if (account == null) {
      account = stored(hash);
    }
    if (account == null) {
      throw new ApiException(
          401,
          "unauthorized",
          "unknown API key: sign up with POST /api/v1/accounts or check the key you were given");
    }
    Optional<String> off;
    try {
      off = disabled.why(account);
    } catch (RuntimeException e) {
      if (Errors.platform(e) instanceof ApiException a) {
        throw a;
      }
      throw e;
    }
    if (off.isPresent()) {
      throw new ApiException(
          403,
          "account_disabled",
          "account '" + account + "' is disabled by the operator (" + off.get()
              + "); ask the operator to enable it");
    }
    return account;
  }

  /** A key that acts for an account on this frontend alone, until it is closed ({@link #delegate}). */
  public record Delegation(String key, Runnable end) implements AutoCloseable {
    @Override
    public void close() {
      end.run();
    }
  }

  /**
   * A fresh key acting for {@code account} in this process only, until closed: a grain's management request runs
   * as its application's owner (sand.frontend.knix.GrainManagement) through the same API calls and checks as the
   * owner's own, without the owner's key, which SAND does not keep. Never stored nor sent outside this process
   * (the KNIX door's calls to the API go to this frontend's own port). At most {@link #MAX_DELEGATIONS} at once.
   */
  public Delegation delegate(String account) {
    if (delegated.size() >= MAX_DELEGATIONS) {
      throw new ApiException(
          503,
          "busy",
          "this frontend runs as many grains' management "
              + "requests as it may; call again in a moment");
    }
    String key = "delegated-" + Ids.hex(32);
    String hash = sha256(key);
    delegated.put(hash, account);
    return new Delegation(key, () -> delegated.remove(hash));
  }

  /** The account of a key's hash in the cluster state (remembered for {@link #KEY_MAX_AGE}); null if none. */
  private String stored(String hash) {
    Known k = disabled.isDeleted(hash) ? null : known.get(hash);
    if (k != null && nanoTime.getAsLong() - k.readAtNanos() < KEY_MAX_AGE.toNanos()) {
      return k.account();
    }
    try {
      String account = store.accountByKey(hash).orElse(null);
      remember(hash, account);
      return account;
    } catch (RuntimeException e) {
      if (k != null && nanoTime.getAsLong() - k.readAtNanos() < KEY_MAX_STALE.toNanos()) {
        return k.account(); // Cassandra away: the account this key had when it last answered
      } else if (Errors.platform(e) instanceof ApiException a) {
        throw a;
      }
      throw e;
    }
  }

  private void remember(String hash, String account) {
    if (account == null) {
      known.remove(hash);
      return;
    }
    if (known.size() >= MAX_KEYS) {
      known.clear();
    }
    known.put(hash, new Known(account, nanoTime.getAsLong()));
  }

  public static String sha256(String s) {
    return sha256(s.getBytes(StandardCharsets.UTF_8));
  }

  public static String sha256(byte[] b) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no SHA-256 in this JVM", e);
    }
  }
}
