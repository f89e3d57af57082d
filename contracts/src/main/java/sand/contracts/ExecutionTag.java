package sand.contracts;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
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

  private final SecretKeySpec key;
  /** A Mac is not thread-safe; one per thread, initialised once (a provider lookup and init per call showed up in
   * the frontend's and the host agent's profiles, twice per request in each). doFinal resets it for the next tag. */
  private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

  /** @param secret the cluster secret: at least 16 bytes */
  public ExecutionTag(byte[] secret) {
    if (secret == null || secret.length < 16) {
      throw new IllegalArgumentException("the cluster secret must have at least 16 bytes");
    }
    this.key = new SecretKeySpec(secret.clone(), ALGORITHM);
  }

  /** The tag of {@code executionId} of {@code app}, answered on {@code frontend}'s response topic (32 hex digits). */
  public String of(String app, String executionId, String frontend) {
    Mac mac = macs.get();
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

  private Mac newMac() {
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
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
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(key);
      return HexFormat.of()
          .formatHex(mac.doFinal(("credential\0" + purpose).getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  /** Whether {@code tag} is the tag of this execution (compared in constant time). */
  public boolean verify(String tag, String app, String executionId, String frontend) {
    if (tag == null || tag.length() != 2 * TAG_BYTES) {
      return false;
    }
    return MessageDigest.isEqual(
        tag.getBytes(StandardCharsets.US_ASCII),
        of(app, executionId, frontend).getBytes(StandardCharsets.US_ASCII));
  }
}
