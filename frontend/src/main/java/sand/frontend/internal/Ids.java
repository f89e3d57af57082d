package sand.frontend.internal;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Random ids: execution and event ids, KNIX ids, suffixes of names that were taken. */
public final class Ids {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Ids() {}

  /** A new id: 16 random bytes as 32 hex digits. */
  public static String newId() {
    return hex(16);
  }

  /** {@code bytes} random bytes as hex digits. */
  public static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
