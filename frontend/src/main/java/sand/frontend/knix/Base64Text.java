package sand.frontend.knix;

import java.util.Base64;
import sand.frontend.knix.KnixManagement.Failure;

/** Base64 as KNIX's clients send it: code, zips, requirements and workflow JSON. */
final class Base64Text {
  private Base64Text() {}

  /** KNIX's repair of base64 that went through form encoding: '+' arrived as ' '. */
  static String repair(String b64) {
    return b64.replace(' ', '+');
  }

  /** The bytes of {@code b64} (line breaks allowed), or a failure naming {@code what}. */
  static byte[] decode(String b64, String what) {
    try {
      return Base64.getMimeDecoder().decode(b64);
    } catch (IllegalArgumentException e) {
      throw new Failure("The " + what + " is not base64: " + e.getMessage());
    }
  }
}
