package sand.hostagent.sandbox.internal;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * Unpacks a developer's zip into a folder without letting it write anywhere else or fill the disk:
 * entry names must be relative paths with no {@code ..}, no drive letter and no backslash; sizes are
 * counted while inflating (a header's declared size is not trusted); entries never overwrite a file
 * (another resource's, or a duplicate entry). Entries become plain files and folders: no symlinks, no
 * permission bits from the archive.
 */
public final class SafeZip {

  /** A zip that may not be unpacked; the message names the entry and the rule. */
  public static final class ZipRefused extends IOException {
    public ZipRefused(String message) {
      super(message);
    }
  }

  /** A byte budget shared by every resource of one application. */
  public static final class Budget {
    private long left;

    public Budget(long bytes) {
      this.left = bytes;
    }

    void take(long n, String what) throws ZipRefused {
      left -= n;
      if (left < 0) {
        throw new ZipRefused(what + " goes over the application's code size limit");
      }
    }
  }

  private SafeZip() {}

  /**
   * Unpack {@code zip} into {@code dest} (which must exist); returns the files written, relative to it.
   * {@code skip} names a top-level entry to hand back instead of writing (e.g. requirements.txt): its
   * bytes go to {@code skipped} (may be null).
   */
  public static List<Path> extract(
      byte[] zip, Path dest, int maxEntries, Budget budget, String skip, OutputStream skipped)
      throws IOException {
    Path root = dest.toAbsolutePath().normalize();
    List<Path> written = new ArrayList<>();
    int entries = 0;
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip))) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        if (++entries > maxEntries) {
          throw new ZipRefused("more than " + maxEntries + " entries");
        }
        String name = e.getName();
        Path target = resolve(root, name);
        if (e.isDirectory()) {
          Files.createDirectories(target);
          continue;
        }
        if (skip != null && name.equals(skip)) {
          copy(in, skipped == null ? OutputStream.nullOutputStream() : skipped, budget, name);
          continue;
        }
        Files.createDirectories(target.getParent());
        try (OutputStream out = Files.newOutputStream(
            target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
          copy(in, out, budget, name);
        } catch (FileAlreadyExistsException x) {
          throw new ZipRefused(
              "entry '" + name + "' would overwrite a file that is already there (a duplicate "
                  + "entry, or a file of another resource)");
        }
        written.add(root.relativize(target));
      }
    } catch (ZipRefused e) {
      throw e;
    } catch (IOException | IllegalArgumentException e) {
      throw new ZipRefused("not a readable zip archive: " + e.getMessage());
    }
    if (entries == 0) {
      throw new ZipRefused("the archive is empty or not a zip");
    }
    return written;
  }

  /** The entry's path inside {@code root}, or a refusal naming what is wrong with the name. */
  static Path resolve(Path root, String name) throws ZipRefused {
    if (name.isEmpty()
        || name.startsWith("/")
        || name.contains("\\")
        || name.contains("\0")
        || (name.length() > 1 && name.charAt(1) == ':')) {
      throw new ZipRefused("entry '" + name + "' is not a relative path with '/' separators");
    }
    for (String part : name.split("/")) {
      if (part.equals("..")) {
        throw new ZipRefused("entry '" + name + "' points outside the application's folder ('..')");
      }
    }
    Path target = root.resolve(name).normalize();
    if (!target.startsWith(root) || target.equals(root)) {
      throw new ZipRefused("entry '" + name + "' points outside the application's folder");
    }
    return target;
  }

  private static void copy(InputStream in, OutputStream out, Budget budget, String name)
      throws IOException {
    byte[] buf = new byte[64 * 1024];
    for (int n; (n = in.read(buf)) > 0; ) {
      budget.take(n, "entry '" + name + "'");
      out.write(buf, 0, n);
    }
  }
}
