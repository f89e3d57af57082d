package sand.hostagent.sandbox.internal;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/** Folder helpers for the applications' prepared folders. */
public final class Trees {
  private static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwxr-xr-x");
  private static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-r--r--");
  private static final Set<PosixFilePermission> EXEC = PosixFilePermissions.fromString("rwxr-xr-x");

  private Trees() {}

  /** Delete a folder and everything under it (symlinks are removed, never followed); absent is fine. */
  public static void delete(Path p) throws IOException {
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    List<Path> all;
    try (Stream<Path> walk = Files.walk(p)) {
      all = walk.sorted(Comparator.reverseOrder()).toList();
    }
    for (Path x : all) {
      Files.deleteIfExists(x);
    }
  }

  /** Bytes of the regular files under {@code root} (0 when it does not exist; files vanishing meanwhile are skipped). */
  public static long size(Path root) {
    if (!Files.isDirectory(root)) {
      return 0;
    }
    long[] total = {0};
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
          total[0] += a.isRegularFile() ? a.size() : 0;
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path f, IOException e) {
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      // a tree changing under the walk: what was counted stands
    }
    return total[0];
  }

  /**
   * Make a tree readable (not writable) by every user: the sandbox runs as an unprivileged uid that
   * does not own it, and the host agent's umask may be strict. Owner-executable files stay executable
   * (shared libraries, scripts). Symlinks are left alone.
   */
  public static void makeReadable(Path root) throws IOException {
    List<Path> all;
    try (Stream<Path> walk = Files.walk(root)) {
      all = walk.toList();
    }
    for (Path x : all) {
      if (Files.isSymbolicLink(x)) {
        continue;
      }
      if (Files.isDirectory(x)) {
        Files.setPosixFilePermissions(x, DIR);
      } else {
        boolean exec = Files.getPosixFilePermissions(x).contains(PosixFilePermission.OWNER_EXECUTE);
        Files.setPosixFilePermissions(x, exec ? EXEC : FILE);
      }
    }
  }
}
