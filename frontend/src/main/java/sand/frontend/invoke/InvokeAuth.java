package sand.frontend.invoke;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import sand.cluster.ClusterStore;
import sand.cluster.EndpointTables.EndpointAuth;
import sand.cluster.SecretBox;
import sand.frontend.AuthHandler;
import sand.frontend.FrontendMetrics;
import sand.frontend.internal.ApiException;
import sand.frontend.internal.Call;
import sand.frontend.internal.Reply;

/**
 * The check of an application's end-user endpoint (docs/security.md, "Protected endpoints"), made by every door to
 * it: {@code POST /app/{app}}, its async result {@code GET /app/{app}/executions/{id}} and the KNIX door. A public
 * endpoint lets everyone in; a {@code key} endpoint wants {@value #KEY_HEADER} with one of its invoke keys; an
 * {@code hmac} endpoint wants {@value #TIMESTAMP_HEADER} and {@value #SIGNATURE_HEADER}, {@code sha256=} and the hex
 * HMAC-SHA256 of {@code "<timestamp>.<raw body>"} under its signing secret, the timestamp within
 * {@link #WINDOW_S} seconds of this frontend's clock (the replay bound). Failures answer 401 with
 * {@code WWW-Authenticate} and are counted as the invocation outcome {@code unauthorized}.
 *
 * <p>The rule comes from {@link AppDirectory} with the rest of the application (no cluster-state read per request).
 * Comparisons are constant-time ({@link MessageDigest#isEqual}) and every key is compared, so timing tells nothing.
 */
public final class InvokeAuth {
  /** The header carrying an invoke key (not Authorization: that one is the account API key's, checked before). */
  public static final String KEY_HEADER = "X-Sand-Key";

  public static final String TIMESTAMP_HEADER = "X-Sand-Timestamp";
  public static final String SIGNATURE_HEADER = "X-Sand-Signature";
  /** How far a signed request's timestamp may be from now, either way, in seconds. */
  public static final long WINDOW_S = 300;
  /** The name the signing secret is sealed under ({@link SecretBox}'s associated data; no env name looks like it). */
  public static final String SECRET_NAME = "endpoint:signing-secret";

  /** An endpoint's protection. */
  public enum Mode {
    PUBLIC,
    KEY,
    HMAC;

    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** The mode called {@code s}, or 400 naming the ones there are. */
    public static Mode parse(String s) {
      for (Mode m : values()) {
        if (m.wire().equals(s)) {
          return m;
        }
      }
      throw ApiException.badRequest(
          "unknown endpoint mode '" + (s == null ? "" : s) + "': it is one of public, key, hmac");
    }
  }

  /** What a request is checked against: the mode, the keys' SHA-256 (hex) and the signing secret (null: none). */
  public record Rule(Mode mode, List<String> keyHashes, byte[] secret) {
    public static final Rule PUBLIC = new Rule(Mode.PUBLIC, List.of(), null);

    /** The rule stored for {@code appId}, the secret opened with {@code box}. */
    public static Rule read(ClusterStore store, SecretBox box, String appId) {
      EndpointAuth a = store.endpoints().endpointAuth(appId).orElse(null);
      if (a == null) {
        return PUBLIC;
      }
      Mode mode = Mode.parse(a.mode());
      List<String> hashes = mode == Mode.KEY
          ? store.endpoints().invokeKeys(appId).stream().map(k -> k.sha256()).toList()
          : List.of();
      byte[] secret = null;
      if (mode == Mode.HMAC && a.sealedSecret() != null) {
        try {
          secret = box.open(appId, SECRET_NAME, a.sealedSecret()).getBytes(StandardCharsets.UTF_8);
        } catch (SecretBox.Unsealable e) {
          secret = null; // refuses every request (no secret), which is what an altered row deserves
        }
      }
      return new Rule(mode, hashes, secret);
    }
  }

  private final AppDirectory apps;
  private final FrontendMetrics metrics;
  private final Clock clock;

  public InvokeAuth(AppDirectory apps, FrontendMetrics metrics, Clock clock) {
    this.apps = apps;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Check the call against the application named by its {@code app}; a missing one is the caller's 404. */
  public void check(Call call) {
    String name = call.param("app");
    apps.find(name).ifPresent(t -> check(call, t));
  }

  /** Check the call against {@code app}'s rule: nothing when it may go on, else 401. */
  public void check(Call call, AppDirectory.Target app) {
    Rule rule = app.auth();
    if (rule.mode() == Mode.PUBLIC) {
      return;
    }
    try {
      verify(
          rule,
          call.header(KEY_HEADER),
          call.header(TIMESTAMP_HEADER),
          call.header(SIGNATURE_HEADER),
          rule.mode() == Mode.HMAC ? call.body() : null,
          clock.instant().getEpochSecond());
    } catch (ApiException e) {
      metrics.invocation(app.name(), "unauthorized");
      throw e;
    }
  }

  /** The check itself, without a request: nothing when the credentials fit the rule, else 401. */
  static void verify(
      Rule rule, String key, String timestamp, String signature, byte[] body, long nowS) {
    switch (rule.mode()) {
      case PUBLIC -> {}
      case KEY -> {
        if (key == null || key.isBlank()) {
          throw refused(
              Mode.KEY,
              "missing_key",
              "this endpoint needs an invoke key: send '" + KEY_HEADER
                  + ": <key>' (its developer creates keys with sand keys create)");
        }
        if (!anyEqual(AuthHandler.sha256(key.trim()), rule.keyHashes())) {
          throw refused(
              Mode.KEY,
              "bad_key",
              "the invoke key is not one of this endpoint's (unknown or revoked)");
        }
      }
      case HMAC -> {
        if (timestamp == null || signature == null) {
          throw refused(
              Mode.HMAC,
              "missing_signature",
              "this endpoint needs a signed request: send '"
                  + TIMESTAMP_HEADER + ": <unix seconds>' and '" + SIGNATURE_HEADER
                  + ": sha256=<hex HMAC-SHA256 of \"<timestamp>.<body>\">'");
        }
        if (!timestamp.matches("[0-9]{1,12}")) {
          throw refused(
              Mode.HMAC, "bad_timestamp", TIMESTAMP_HEADER + " must be unix seconds (digits)");
        }
        long ts = Long.parseLong(timestamp);
        if (Math.abs(nowS - ts) > WINDOW_S) {
          throw refused(
              Mode.HMAC,
              "stale_timestamp",
              TIMESTAMP_HEADER + " is " + (nowS - ts) + " s from this frontend's clock: at most "
                  + WINDOW_S + " s either way (sign just before sending)");
        }
        String expected = "sha256=" + hmacHex(rule.secret(), timestamp, body);
        boolean ok = rule.secret() != null
            && MessageDigest.isEqual(
                expected.getBytes(StandardCharsets.US_ASCII),
                signature.trim().toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
        if (!ok) {
          throw refused(
              Mode.HMAC,
              "bad_signature",
              SIGNATURE_HEADER + " does not match the body under this endpoint's signing secret");
        }
      }
      default -> throw new IllegalStateException("mode " + rule.mode());
    }
  }

  /** The hex HMAC-SHA256 of {@code "<timestamp>.<body>"}; a missing secret signs with an empty key (never matches). */
  public static String hmacHex(byte[] secret, String timestamp, byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      byte[] k = secret == null || secret.length == 0 ? new byte[] {0} : secret;
      mac.init(new SecretKeySpec(k, "HmacSHA256"));
      mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
      return HexFormat.of().formatHex(mac.doFinal(body == null ? new byte[0] : body));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
    }
  }

  /** Whether {@code hash} is one of {@code hashes}, comparing with every one in constant time. */
  static boolean anyEqual(String hash, List<String> hashes) {
    byte[] h = hash.getBytes(StandardCharsets.US_ASCII);
    boolean found = false;
    for (String x : hashes) {
      found |= MessageDigest.isEqual(h, x.getBytes(StandardCharsets.US_ASCII));
    }
    return found;
  }

  private static ApiException refused(Mode mode, String reason, String message) {
    return new ApiException(
        401,
        "unauthorized",
        message,
        Map.of(
            "reason",
            reason,
            Reply.AUTHENTICATE,
            mode == Mode.KEY ? "SandKey header=\"" + KEY_HEADER + "\"" : "SandSignature"));
  }
}
