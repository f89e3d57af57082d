package sand.frontend;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import sand.contracts.RequirementLines;
import sand.frontend.internal.ApiException;

/**
 * Checks an uploaded grain before it is stored. Python source ({@code text/x-python}): not empty, UTF-8
 * (a syntax check needs Python; the grain worker reports syntax errors at deploy). A zip
 * ({@code application/zip}): a readable zip, no absolute paths, no {@code ..}, no backslashes, at most
 * {@link #MAX_ENTRIES} entries and {@code maxUnpacked} bytes unpacked (counted while inflating), holding
 * {@code <grain>.py} or {@code <grain>/__init__.py}; its top-level {@code requirements.txt} is kept for the
 * application's requirements. The host agent checks the same again when it unpacks (docs/host-agent.md).
 */
public final class GrainUpload {
  public static final int MAX_ENTRIES = 10_000;

  /** What an upload is: "py" or "zip", and for a zip its top-level requirements.txt ("" if none). */
  public record Checked(String kind, String requirements) {}

  private GrainUpload() {}

  /** @param allowUrls whether requirement lines may be {@code name @ https://...} (limits requirements.allow.urls) */
  public static Checked check(
      String grain, String contentType, byte[] body, long maxUnpacked, boolean allowUrls) {
    return switch (contentType) {
      case "text/x-python", "text/x-script.python", "application/x-python", "text/plain" ->
        python(grain, body);
      case "application/zip", "application/x-zip-compressed" ->
        zip(grain, body, maxUnpacked, allowUrls);
      default ->
        throw new ApiException(
            400,
            "bad_grain",
            "grain " + grain + ": unsupported Content-Type '" + contentType
                + "': send Python source as text/x-python or a zip as application/zip");
    };
  }

  static Checked python(String grain, byte[] body) {
    if (body.length == 0 || new String(body, StandardCharsets.UTF_8).isBlank()) {
      throw new ApiException(
          400,
          "bad_grain",
          "grain " + grain + ": the source is empty; upload a .py file "
              + "with a handle(event, context) function");
    }
    try {
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(body));
    } catch (CharacterCodingException e) {
      throw new ApiException(
          400,
          "bad_grain",
          "grain " + grain + ": the source is not UTF-8 text; save it as UTF-8"
              + " (or upload a zip as application/zip)");
    }
    return new Checked("py", "");
  }

  static Checked zip(String grain, byte[] body, long maxUnpacked, boolean allowUrls) {
    if (body.length < 4 || body[0] != 'P' || body[1] != 'K') {
      throw badZip(grain, "not a zip archive (it does not start with PK)");
    }
    String requirements = "";
    boolean hasCode = false;
    int entries = 0;
    long unpacked = 0;
    byte[] buf = new byte[8192];
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(body))) {
      ZipEntry e;
      while ((e = in.getNextEntry()) != null) {
        String n = e.getName();
        if (++entries > MAX_ENTRIES) {
          throw badZip(grain, "more than " + MAX_ENTRIES + " entries");
        }
        if (n.startsWith("/")
            || n.contains("\\")
            || n.matches("^[A-Za-z]:.*")
            || ("/" + n + "/").contains("/../")) {
          throw badZip(grain, "entry '" + n + "' would be unpacked outside the grain's folder");
        }
        ByteArrayOutputStream content =
            n.equals("requirements.txt") ? new ByteArrayOutputStream() : null;
        int r;
        while ((r = in.read(buf)) > 0) {
          unpacked += r;
          if (unpacked > maxUnpacked) {
            throw badZip(grain, "more than " + maxUnpacked + " bytes unpacked");
          }
          if (content != null) {
            content.write(buf, 0, r);
          }
        }
        if (content != null) {
          requirements = content.toString(StandardCharsets.UTF_8);
        }
        if (n.equals(grain + ".py") || n.equals(grain + "/__init__.py")) {
          hasCode = true;
        }
      }
    } catch (IOException ex) {
      throw badZip(grain, "cannot be read: " + ex.getMessage());
    }
    if (entries == 0) {
      throw badZip(grain, "has no entries");
    }
    if (!hasCode) {
      throw badZip(
          grain,
          "holds neither " + grain + ".py nor " + grain + "/__init__.py at its top level; the "
              + "grain worker imports the grain by that name");
    }
    try {
      RequirementLines.check(requirements, "grain " + grain + ": requirements.txt", allowUrls);
    } catch (IllegalArgumentException ex) {
      throw new ApiException(400, "bad_grain", ex.getMessage());
    }
    return new Checked("zip", requirements);
  }

  private static ApiException badZip(String grain, String why) {
    return new ApiException(400, "bad_grain", "grain " + grain + ": the zip " + why);
  }
}
