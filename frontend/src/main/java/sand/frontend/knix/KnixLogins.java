package sand.frontend.knix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import sand.frontend.internal.Json;

/**
 * KNIX logins (e-mail + password) over SAND accounts (API keys). KNIX hands a token to whoever logs in; here the
 * token is the account's SAND API key, so everything done through the KNIX door is checked as any other call with
 * that key. Only the key's hash is stored for SAND's own check, so the login record keeps the key wrapped
 * (AES-256-GCM) under a key derived from the password: the password unwraps it, nothing else does.
 *
 * <p>The derivation is PBKDF2-HMAC-SHA256 with a random 16-byte salt and {@link #ITERATIONS} iterations (the OWASP
 * 2023 figure), 64 bytes out: the first 32 are the verifier stored to check the password, the last 32 the wrapping
 * key, which is never stored.
 */
public final class KnixLogins {
  public static final int ITERATIONS = 600_000;
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Password derivations done by this process (metrics: a login for an unknown e-mail does one too). */
  private static final AtomicLong DERIVATIONS = new AtomicLong();

  /** A password did not match, or the record cannot be read. */
  static final class WrongPassword extends Exception {
    WrongPassword() {
      super("wrong e-mail or password");
    }
  }

  private KnixLogins() {}

  /** The login record of {@code account} whose API key is {@code apiKey}, for this password. */
  static ObjectNode record(
      String account, String name, String password, String apiKey, int iterations) {
    byte[] salt = new byte[16];
    RANDOM.nextBytes(salt);
    byte[] derived = derive(password, salt, iterations);
    byte[] nonce = new byte[12];
    RANDOM.nextBytes(nonce);
    byte[] wrapped = gcm(
        Cipher.ENCRYPT_MODE,
        Arrays.copyOfRange(derived, 32, 64),
        nonce,
        apiKey.getBytes(StandardCharsets.UTF_8));
    HexFormat hex = HexFormat.of();
    return Json.object()
        .put("account", account)
        .put("name", name)
        .put("kdf", "pbkdf2-sha256")
        .put("iterations", iterations)
        .put("salt", hex.formatHex(salt))
        .put("verifier", hex.formatHex(Arrays.copyOfRange(derived, 0, 32)))
        .put("nonce", hex.formatHex(nonce))
        .put("wrapped_key", hex.formatHex(wrapped));
  }

  /** The API key in {@code record} when {@code password} is the one it was made with. */
  static String apiKey(JsonNode record, String password) throws WrongPassword {
    HexFormat hex = HexFormat.of();
    try {
      byte[] derived = derive(
          password,
          hex.parseHex(record.path("salt").asText()),
          record.path("iterations").asInt(ITERATIONS));
      if (!MessageDigest.isEqual(
          Arrays.copyOfRange(derived, 0, 32),
          hex.parseHex(record.path("verifier").asText()))) {
        throw new WrongPassword();
      }
      byte[] key = gcm(
          Cipher.DECRYPT_MODE,
          Arrays.copyOfRange(derived, 32, 64),
          hex.parseHex(record.path("nonce").asText()),
          hex.parseHex(record.path("wrapped_key").asText()));
      return new String(key, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new WrongPassword();
    }
  }

  public static long derivations() {
    return DERIVATIONS.get();
  }

  /**
   * A login record no password opens, made like a real one: checking a password for an unknown e-mail against it
   * costs what checking a known one costs, so the answer's time does not tell whether the e-mail has an account.
   */
  static ObjectNode decoy(int iterations) {
    byte[] password = new byte[24];
    RANDOM.nextBytes(password);
    return record("-", "-", HexFormat.of().formatHex(password), "-", iterations);
  }

  private static byte[] derive(String password, byte[] salt, int iterations) {
    DERIVATIONS.incrementAndGet();
    try {
      PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, 512);
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
          .generateSecret(spec)
          .getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("no PBKDF2WithHmacSHA256 in this JVM", e);
    }
  }

  private static byte[] gcm(int mode, byte[] key, byte[] nonce, byte[] data) {
    try {
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce));
      return c.doFinal(data);
    } catch (AEADBadTagException e) {
      throw new IllegalStateException("the wrapped key does not open with this password", e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed: " + e, e);
    }
  }
}
