package sand.hostagent.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A sandbox's usage read from either cgroup layout; nothing read for what is not a Docker id. */
class SandboxCgroupsTest {
  private static final String ID =
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

  @TempDir
  Path root;

  @Test
  void cgroupV2WithTheSystemdDriver() throws Exception {
    Path d = Files.createDirectories(root.resolve("system.slice/docker-" + ID + ".scope"));
    Files.writeString(
        d.resolve("cpu.stat"), "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n");
    Files.writeString(d.resolve("memory.current"), "52428800\n");
    Files.writeString(root.resolve("cgroup.controllers"), "cpu memory\n");
    assertEquals(
        Optional.of(new SandboxCgroups.Usage(2.5, 52_428_800L)), new SandboxCgroups(root).read(ID));
    assertEquals(true, new SandboxCgroups(root).available());
  }

  @Test
  void cgroupV1WithTheCgroupfsDriver() throws Exception {
    Files.createDirectories(root.resolve("memory/docker/" + ID));
    Files.createDirectories(root.resolve("cpuacct/docker/" + ID));
    Files.writeString(root.resolve("memory/docker/" + ID + "/memory.usage_in_bytes"), "1048576\n");
    Files.writeString(root.resolve("cpuacct/docker/" + ID + "/cpuacct.usage"), "1500000000\n");
    assertEquals(
        Optional.of(new SandboxCgroups.Usage(1.5, 1_048_576L)), new SandboxCgroups(root).read(ID));
  }

  @Test
  void nothingForAGoneContainerOrANameThatIsNotADockerId() throws Exception {
    SandboxCgroups c = new SandboxCgroups(root);
    assertEquals(false, c.available(), "an empty folder is no cgroup filesystem");
    assertEquals(Optional.empty(), c.read(ID));
    assertEquals(Optional.empty(), c.read("../../etc"));
    assertEquals(Optional.empty(), c.read(""));
    assertEquals(Optional.empty(), c.read(null));
  }
}
