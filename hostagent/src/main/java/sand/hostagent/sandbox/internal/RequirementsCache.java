package sand.hostagent.sandbox.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import sand.hostagent.sandbox.internal.DependencyInstaller.Requirements;

/**
 * Libraries this host installed before, kept under {@code <state>/deps-cache/<key>}, the key a digest of the
 * sandbox image's name and the requirements files: a deploy with requirements installed before (a rollback, a
 * redeploy of the same requirements on another application or version) links them into its library folder
 * instead of running pip again. The {@link #KEPT} most recently used are kept.
 */
final class RequirementsCache {
  static final int KEPT = 16;

  private final Path dir;

  RequirementsCache(Path stateDir) {
    this.dir = stateDir.resolve("deps-cache");
  }

  static String key(String image, List<Requirements> files) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update(image.getBytes(StandardCharsets.UTF_8));
      for (Requirements r : files) {
        d.update((byte) 0);
        d.update(r.name().getBytes(StandardCharsets.UTF_8));
        d.update((byte) 0);
        d.update(r.text().getBytes(StandardCharsets.UTF_8));
      }
      return HexFormat.of().formatHex(d.digest()).substring(0, 32);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Put the libraries installed for {@code key} into {@code lib}; false when there are none. */
  boolean copyTo(String key, Path lib) throws IOException {
    Path cached = dir.resolve(key);
    if (!Files.isDirectory(cached)) {
      return false;
    }
    Files.setLastModifiedTime(cached, FileTime.from(Instant.now())); // recently used: kept longer
    link(cached, lib);
    return true;
  }

  /** Keep what was just installed into {@code lib} for {@code key}. */
  void keep(String key, Path lib) throws IOException {
    Files.createDirectories(dir);
    Path tmp = dir.resolve(key + ".tmp-" + UUID.randomUUID());
    try {
      link(lib, tmp);
      Files.move(tmp, dir.resolve(key), StandardCopyOption.ATOMIC_MOVE);
    } catch (FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException e) {
      // another deploy kept the same libraries meanwhile
    } finally {
      if (Files.exists(tmp)) {
        Trees.delete(tmp);
      }
    }
    prune();
  }

  private void prune() throws IOException {
    List<Path> entries;
    try (Stream<Path> s = Files.list(dir)) {
      entries = s.filter(p -> !p.getFileName().toString().contains(".tmp-"))
          .sorted(Comparator.comparing((Path p) -> {
                try {
                  return Files.getLastModifiedTime(p);
                } catch (IOException e) {
                  return FileTime.fromMillis(0);
                }
              })
              .reversed())
          .toList();
    }
    for (Path old : entries.subList(Math.min(KEPT, entries.size()), entries.size())) {
      Trees.delete(old);
    }
  }

  /** {@code to} holds the tree of {@code from}: folders made, files hard-linked (copied across file systems). */
  private static void link(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        Path t = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.createDirectories(t);
        } else if (Files.isSymbolicLink(p)) {
          Files.createSymbolicLink(t, Files.readSymbolicLink(p));
        } else {
          try {
            Files.createLink(t, p);
          } catch (UnsupportedOperationException | IOException e) {
            Files.copy(p, t, StandardCopyOption.COPY_ATTRIBUTES);
          }
        }
      }
    }
  }
}
