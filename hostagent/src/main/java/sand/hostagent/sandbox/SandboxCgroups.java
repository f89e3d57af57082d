package sand.hostagent.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A sandbox container's CPU time and memory as the kernel counts them in its cgroup, read from the cgroup
 * filesystem when asked (a scrape): two small files per sandbox, no Docker call. The container's cgroup is found
 * from its Docker id under either layout Docker uses: cgroup v2 ({@code system.slice/docker-<id>.scope} with the
 * systemd driver, {@code docker/<id>} with cgroupfs; files {@code cpu.stat} and {@code memory.current}) or v1 (the
 * same folders under {@code cpuacct/} and {@code memory/}; {@code cpuacct.usage}, {@code memory.usage_in_bytes}).
 * Memory is the cgroup's whole charge, page cache included (what its memory limit is checked against). Docker's
 * hybrid layout (v1 controllers plus an empty {@code unified/}) is read as v1.
 */
public final class SandboxCgroups {
  private static final Pattern DOCKER_ID = Pattern.compile("[0-9a-f]{12,64}");

  /** @param cpuSeconds CPU time of every process of the container since it started; memoryBytes its charge now */
  public record Usage(double cpuSeconds, long memoryBytes) {}

  private final Path root;

  /** @param root the cgroup filesystem's mount, {@code /sys/fs/cgroup} */
  public SandboxCgroups(Path root) {
    this.root = root;
  }

  /**
   * Whether the cgroup filesystem is mounted where this process looks (v2's root file or v1's memory hierarchy).
   * Not in a network namespace entered with {@code ip netns exec}, which mounts a /sys of its own without it (the
   * hosts of deploy/cluster.sh): there no sandbox's usage is found.
   */
  public boolean available() {
    return Files.isRegularFile(root.resolve("cgroup.controllers"))
        || Files.isDirectory(root.resolve("memory"));
  }

  /** The container's usage, or empty when its cgroup is not found (gone, or another layout). */
  public Optional<Usage> read(String containerId) {
    if (containerId == null || !DOCKER_ID.matcher(containerId).matches()) {
      return Optional.empty(); // never a path built from anything but a Docker id
    }
    for (String dir :
        List.of("system.slice/docker-" + containerId + ".scope", "docker/" + containerId)) {
      Path v2 = root.resolve(dir);
      if (Files.isRegularFile(v2.resolve("memory.current"))) {
        try {
          long usec = cpuStatUsec(Files.readAllLines(v2.resolve("cpu.stat")));
          long mem =
              Long.parseLong(Files.readString(v2.resolve("memory.current")).trim());
          return Optional.of(new Usage(usec / 1e6, mem));
        } catch (IOException | RuntimeException e) {
          return Optional.empty(); // the container went meanwhile
        }
      }
      Path mem = root.resolve("memory").resolve(dir).resolve("memory.usage_in_bytes");
      if (Files.isRegularFile(mem)) {
        try {
          long ns = Long.parseLong(
              Files.readString(root.resolve("cpuacct").resolve(dir).resolve("cpuacct.usage"))
                  .trim());
          return Optional.of(
              new Usage(ns / 1e9, Long.parseLong(Files.readString(mem).trim())));
        } catch (IOException | RuntimeException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  private static long cpuStatUsec(List<String> lines) {
    for (String l : lines) {
      if (l.startsWith("usage_usec ")) {
        return Long.parseLong(l.substring("usage_usec ".length()).trim());
      }
    }
    throw new IllegalArgumentException("cpu.stat has no usage_usec");
  }
}
