package sand.cluster;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals applications' secrets for the cluster state (encrypted at rest): AES-256-GCM under a key derived from
 * the cluster secret (HMAC-SHA256 of a label, so the key is never the secret itself and other uses of the
 * secret stay apart), a fresh 12-byte nonce per seal, and the application id and secret name as associated
 * data, so a sealed value copied to another application or name does not open. Frontends seal (PUT a secret);
 * host agents open (at deploy, never per request). The sealed form is {@code version(1) | nonce(12) | ciphertext+tag}.
 */
public final class SecretBox {
  private static final byte VERSION = 1;
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final SecretKeySpec key;

  /** @param clusterSecret {@link HostAgentTables#clusterSecret()}, the same on every frontend and host agent */
  public SecretBox(byte[] clusterSecret) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(clusterSecret, "HmacSHA256"));
      key = new SecretKeySpec(
          mac.doFinal("sand application secrets v1".getBytes(StandardCharsets.UTF_8)), "AES");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is not available: " + e, e);
    }
  }

  /** The sealed form of {@code value}, the secret {@code name} of application {@code appId}. */
  public byte[] seal(String appId, String name, String value) {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    try {
      Cipher c = cipher(Cipher.ENCRYPT_MODE, nonce, appId, name);
      byte[] sealed = c.doFinal(value.getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.allocate(1 + NONCE_BYTES + sealed.length)
          .put(VERSION)
          .put(nonce)
          .put(sealed)
          .array();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("sealing a secret failed: " + e, e);
    }
  }

  /** The value sealed for exactly this application and name; IllegalArgumentException if it does not open. */
  public String open(String appId, String name, byte[] sealed) {
    if (sealed == null || sealed.length < 1 + NONCE_BYTES + TAG_BITS / 8 || sealed[0] != VERSION) {
      throw new IllegalArgumentException(
          "secret " + name + " of application " + appId + " is not a sealed value of this version");
    }
    byte[] nonce = java.util.Arrays.copyOfRange(sealed, 1, 1 + NONCE_BYTES);
    try {
      Cipher c = cipher(Cipher.DECRYPT_MODE, nonce, appId, name);
      byte[] plain = c.doFinal(sealed, 1 + NONCE_BYTES, sealed.length - 1 - NONCE_BYTES);
      return new String(plain, StandardCharsets.UTF_8);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "secret " + name + " of application " + appId
              + " does not open under this cluster's secret (sealed for another application, name or cluster)");
    }
  }

  private Cipher cipher(int mode, byte[] nonce, String appId, String name)
      throws GeneralSecurityException {
    Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
    c.init(mode, key, new GCMParameterSpec(TAG_BITS, nonce));
    byte[] a = appId.getBytes(StandardCharsets.UTF_8);
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    c.updateAAD(ByteBuffer.allocate(8 + a.length + n.length)
        .putInt(a.length)
        .put(a)
        .putInt(n.length)
        .put(n)
        .array());
    return c;
  }
}
