package sand.frontend.knix;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import sand.frontend.GrainUpload;
import sand.frontend.knix.KnixManagement.Failure;

/**
 * A KNIX function's grain zip: the uploaded zip's base64 chunks joined ({@link #join}), and that zip's entries with
 * the text code and requirements put in ({@link #zip}), each within the limits the grain API sets.
 */
final class ZipAssembly {
  private ZipAssembly() {}

  /**
   * The zip of {@code count} base64 chunks, chunk {@code i} from {@code chunk} (empty: not uploaded), refused once
   * it would be over {@code maxZipBytes}.
   */
  static byte[] join(IntFunction<Optional<byte[]>> chunk, int count, long maxZipBytes) {
    StringBuilder b64 = new StringBuilder();
    long maxB64 = (maxZipBytes + 2) / 3 * 4 + 4;
    for (int i = 0; i < count; i++) {
      Optional<byte[]> r = chunk.apply(i);
      if (r.isEmpty()) {
        throw new Failure("Zip chunk " + i + " of " + count + " was not uploaded.");
      }
      if (b64.length() + r.get().length
          > maxB64) { // before holding it: chunks are many and each large
        throw new Failure("The uploaded zip is larger than " + maxZipBytes
            + " bytes (the largest grain SAND takes; " + "frontend setting max.body.bytes)");
      }
      b64.append(new String(r.get(), StandardCharsets.US_ASCII));
    }
    while (b64.length() % 4 != 0) {
      b64.append('=');
    }
    return Base64Text.decode(b64.toString(), "zip");
  }

  /** The grain's zip: {@code base}'s entries, {@code code} as {@code <name>.py}, {@code req} as requirements.txt. */
  static byte[] zip(String name, byte[] base, byte[] code, byte[] req) {
    return zip(name, base, code, req, 4 * KnixFunctions.DEFAULT_MAX_ZIP_BYTES);
  }

  /**
   * The same, unpacking {@code base} only up to {@code maxUnpacked} bytes in all and {@link GrainUpload#MAX_ENTRIES}
   * entries (a zip bomb of a few MB inflating to gigabytes is refused at the cap, never held: issue 26, finding 6).
   */
  static byte[] zip(String name, byte[] base, byte[] code, byte[] req, long maxUnpacked) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      if (base != null) {
        try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(base))) {
          ZipEntry e;
          int entries = 0;
          long unpacked = 0;
          byte[] buf = new byte[8192];
          while ((e = in.getNextEntry()) != null) {
            if (++entries > GrainUpload.MAX_ENTRIES) {
              throw new Failure(
                  "The uploaded zip has more than " + GrainUpload.MAX_ENTRIES + " entries.");
            }
            String n = e.getName();
            if ((code != null && n.equals(name + ".py"))
                || (req.length > 0 && n.equals("requirements.txt"))) {
              continue;
            }
            z.putNextEntry(new ZipEntry(n));
            int r;
            while ((r = in.read(buf)) > 0) {
              unpacked += r;
              if (unpacked > maxUnpacked) {
                throw new Failure("The uploaded zip unpacks to more than " + maxUnpacked
                    + " bytes (4 x the frontend " + "setting max.body.bytes, as for any grain).");
              }
              z.write(buf, 0, r);
            }
            z.closeEntry();
          }
        }
      }
      if (code != null) {
        z.putNextEntry(new ZipEntry(name + ".py"));
        z.write(code);
        z.closeEntry();
      }
      if (req.length > 0) {
        z.putNextEntry(new ZipEntry("requirements.txt"));
        z.write(req);
        z.closeEntry();
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new Failure("The uploaded zip cannot be read: " + e.getMessage());
    }
    return out.toByteArray();
  }
}
