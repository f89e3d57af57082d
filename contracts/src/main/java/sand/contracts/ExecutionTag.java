package sand.contracts;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The proof that an execution entered the platform through one application (docs/security.md, "Results are
 * bound to their execution"): a frontend that takes a request tags its event with
 * HMAC-SHA256(cluster secret, application, execution id, frontend), truncated to 128 bits; the tag travels
 * with every event of the execution. A host agent forwards a result only when the tag matches the
 * application the local bus says produced it, and a frontend accepts a result only when the tag matches the
 * application the host agent names. A grain sees its own execution's tag but cannot make one for another
 * application's execution (or another frontend) without the secret, which only frontends and host agents
 * hold (Cassandra's {@code cluster_secrets}, never in a sandbox).
 */
public final class ExecutionTag {
  /** The event field that carries the tag. */
  public static final String FIELD = "tag";

  private static final int TAG_BYTES = 16;
  private static final String ALGORITHM = "HmacSHA256";

  private final ClusterKeys keys;

  /**
   * A Mac is not thread-safe: one per thread, initialised once per key (a provider lookup and init per call showed
   * up in the frontend's and the host agent's profiles, twice per request in each). doFinal resets it.
   */
  private static final class MacOf {
    byte[] key;
    Mac mac;
  }

  private final ThreadLocal<MacOf> macs = ThreadLocal.withInitial(MacOf::new);

  /** @param secret the cluster secret: at least 16 bytes */
  public ExecutionTag(byte[] secret) {
    this(ClusterKeys.of(secret));
  }

  /** Tags made with the current key and verified with every accepted one (a rotation: {@link ClusterKeys}). */
  public ExecutionTag(ClusterKeys keys) {
    this.keys = keys;
  }

  /** The tag of {@code executionId} of {@code app}, answered on {@code frontend}'s response topic (32 hex digits). */
  public String of(String app, String executionId, String frontend) {
    return of(keys.now().current(), app, executionId, frontend);
  }

  private String of(byte[] key, String app, String executionId, String frontend) {
    Mac mac = mac(key);
    // Lengths first, so ("ab", "c") and ("a", "bc") can never share a tag.
    for (String part : new String[] {app, executionId, frontend}) {
      byte[] b = (part == null ? "" : part).getBytes(StandardCharsets.UTF_8);
      mac.update(new byte[] {
        (byte) (b.length >>> 24), (byte) (b.length >>> 16), (byte) (b.length >>> 8), (byte) b.length
      });
      mac.update(b);
    }
    byte[] full = mac.doFinal();
    return HexFormat.of().formatHex(full, 0, TAG_BYTES);
  }

  private Mac mac(byte[] key) {
    MacOf m = macs.get();
    if (m.key != key) { // the same array while the keys do not change: an identity check
      m.mac = newMac(key);
      m.key = key;
    }
    return m.mac;
  }

  private static Mac newMac(byte[] key) {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(new SecretKeySpec(key, ALGORITHM));
      return mac;
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  /**
   * A credential platform processes derive from the same cluster secret for {@code purpose} (e.g. "gate": the
   * frontends' credential at the host agents' gate), 64 hex digits; nothing outside the platform can make it.
   */
  public String credential(String purpose) {
    return credentials(purpose).current();
  }

  /** The credentials of one purpose under one set of keys (a gate checks one on every call: made once). */
  private record Credentials(
      ClusterKeys.Keys keys, String purpose, String current, List<byte[]> accepted) {}

  private volatile Credentials credentials;

  /** Whether {@code credential} is {@code purpose}'s under any accepted key (compared in constant time). */
  public boolean acceptsCredential(String credential, String purpose) {
    if (credential == null) {
      return false;
    }
    byte[] given = credential.getBytes(StandardCharsets.US_ASCII);
    boolean ok = false;
    for (byte[] accepted : credentials(purpose).accepted()) {
      ok |= MessageDigest.isEqual(given, accepted);
    }
    return ok;
  }

  /** The current keys' credentials of {@code purpose}, the current one's first (made once per change of keys). */
  private Credentials credentials(String purpose) {
    ClusterKeys.Keys now = keys.now();
    Credentials c = credentials;
    if (c == null || c.keys() != now || !c.purpose().equals(purpose)) {
      c = new Credentials(
          now,
          purpose,
          credential(now.current(), purpose),
          now.all().stream()
              .map(k -> credential(k, purpose).getBytes(StandardCharsets.US_ASCII))
              .toList());
      credentials = c;
    }
    return c;
  }

  private static String credential(byte[] key, String purpose) {
    return HexFormat.of()
        .formatHex(
            newMac(key).doFinal(("credential\0" + purpose).getBytes(StandardCharsets.UTF_8)));
  }

  /** Whether {@code tag} is the tag of this execution under any accepted key (compared in constant time). */
  public boolean verify(String tag, String app, String executionId, String frontend) {
    if (tag == null || tag.length() != 2 * TAG_BYTES) {
      return false;
    }
    byte[] given = tag.getBytes(StandardCharsets.US_ASCII);
    for (byte[] key : keys.now().all()) {
      if (MessageDigest.isEqual(
          given, of(key, app, executionId, frontend).getBytes(StandardCharsets.US_ASCII))) {
        return true;
      }
    }
    return false;
  }
}
