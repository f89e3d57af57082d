package sand.cluster;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.List;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import sand.contracts.ClusterKeys;

/**
 * Seals application secrets for the cluster state: AES-256-GCM with a fresh 96-bit nonce per write, under a key
 * derived from the cluster secret ({@link HostAgentTables#clusterSecret()}, shared by frontends and host agents)
 * with HMAC-SHA256 and the label {@value #LABEL}, so the key used for secrets is not the key of anything else.
 * The application id and the secret's name are the associated data: a sealed value copied to another application
 * or name does not open. Layout: version byte (1) | nonce (12) | ciphertext | tag (16).
 */
public final class SecretBox {
  static final String LABEL = "sand secrets v1";
  private static final byte VERSION = 1;
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  /** Bytes a sealed value has beyond the value itself. */
  public static final int OVERHEAD = 1 + NONCE_BYTES + TAG_BITS / 8;

  private final ClusterKeys keys;
  private final SecureRandom random = new SecureRandom();

  /** The AES keys of one set of cluster keys, the current one's first (derived once per change of keys). */
  private record Derived(ClusterKeys.Keys from, List<SecretKeySpec> keys) {}

  private volatile Derived derived;

  /** Thrown when a sealed value does not open: altered, moved to another app or name, or another cluster's. */
  public static final class Unsealable extends Exception {
    Unsealable(String message) {
      super(message);
    }
  }

  public SecretBox(byte[] clusterSecret) {
    this(ClusterKeys.of(clusterSecret)); // refuses a secret under 16 bytes
  }

  /** Sealing with the current key, opening with any accepted one (a rotation: {@link ClusterKeys}). */
  public SecretBox(ClusterKeys keys) {
    this.keys = keys;
  }

  private List<SecretKeySpec> aesKeys() {
    ClusterKeys.Keys now = keys.now();
    Derived d = derived;
    if (d == null || d.from() != now) {
      d = new Derived(now, now.all().stream().map(SecretBox::derive).toList());
      derived = d;
    }
    return d.keys();
  }

  private static SecretKeySpec derive(byte[] clusterSecret) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(clusterSecret, "HmacSHA256"));
      return new SecretKeySpec(mac.doFinal(LABEL.getBytes(StandardCharsets.UTF_8)), "AES");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JVM", e);
    }
  }

  /** Whether {@code sealed} opens with the current key (a rotation re-seals what does not). */
  public boolean sealedWithCurrent(String appId, String name, byte[] sealed) {
    return opens(aesKeys().get(0), appId, name, sealed) != null;
  }

  public byte[] seal(String appId, String name, String value) {
    byte[] nonce = new byte[NONCE_BYTES];
    random.nextBytes(nonce);
    try {
      Cipher c = cipher(Cipher.ENCRYPT_MODE, aesKeys().get(0), nonce, appId, name);
      byte[] sealed = c.doFinal(value.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.allocate(1 + NONCE_BYTES + sealed.length)
          .put(VERSION)
          .put(nonce)
          .put(sealed)
          .array();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed: " + e, e);
    }
  }

  public String open(String appId, String name, byte[] sealed) throws Unsealable {
    if (sealed == null || sealed.length < OVERHEAD || sealed[0] != VERSION) {
      throw new Unsealable(
          "secret " + name + " of application " + appId + " is not a sealed value of this version");
    }
    for (SecretKeySpec key : aesKeys()) {
      String value = opens(key, appId, name, sealed);
      if (value != null) {
        return value;
      }
    }
    throw new Unsealable("secret " + name + " of application " + appId
        + " does not open: it was altered, belongs to another application or name, or was sealed"
        + " under another cluster secret; set it again (sand secret set)");
  }

  /** The value, or null when {@code key} does not open it. */
  private static String opens(SecretKeySpec key, String appId, String name, byte[] sealed) {
    if (sealed == null || sealed.length < OVERHEAD || sealed[0] != VERSION) {
      return null;
    }
    byte[] nonce = new byte[NONCE_BYTES];
    System.arraycopy(sealed, 1, nonce, 0, NONCE_BYTES);
    try {
      Cipher c = cipher(Cipher.DECRYPT_MODE, key, nonce, appId, name);
      byte[] plain = c.doFinal(sealed, 1 + NONCE_BYTES, sealed.length - 1 - NONCE_BYTES);
      return new String(plain, StandardCharsets.UTF_8);
    } catch (AEADBadTagException e) {
      return null;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed: " + e, e);
    }
  }

  private static Cipher cipher(int mode, SecretKeySpec key, byte[] nonce, String appId, String name)
      throws GeneralSecurityException {
    Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
    c.init(mode, key, new GCMParameterSpec(TAG_BITS, nonce));
    // a NUL cannot be in an app id or a secret name: "a"+"bc" and "ab"+"c" differ
    c.updateAAD((appId + "\0" + name).getBytes(StandardCharsets.UTF_8));
    return c;
  }
}
