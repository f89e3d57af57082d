package sand.hostagent.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The sandbox image for integration tests: sand-sandbox:latest (built by deploy/sandbox-image.sh from
 * the main checkout) with this worktree's grainworker package copied over /opt/sand/lib/grainworker, so
 * the tests run the supervisor and worker code under test. Built with the docker CLI, no network.
 */
public record ItImage(String tag) {
  static final String BASE = System.getProperty("sand.sandbox.base", "sand-sandbox:latest");

  public static ItImage build(Path root, String repo) throws IOException, InterruptedException {
    Path ctx = Files.createTempDirectory("sand-it-image");
    try {
      copyTree(root.resolve("grainworker"), ctx.resolve("grainworker"));
      Files.writeString(
          ctx.resolve("Dockerfile"),
          String.join(
              "\n",
              "FROM " + BASE,
              "USER root",
              // COPY merges into the folder: generated code (_gen) the worktree lacks stays from
              // the base image
              "COPY grainworker/ /opt/sand/lib/grainworker/",
              "RUN python3 -m compileall -q /opt/sand/lib/grainworker",
              "USER sand",
              ""));
      String tag = repo + ":latest";
      run(List.of(
          "docker", "build", "--network", "none", "--force-rm", "-q", "-t", tag, ctx.toString()));
      return new ItImage(tag);
    } finally {
      try (Stream<Path> walk = Files.walk(ctx)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  public void remove() throws IOException, InterruptedException {
    run(List.of("docker", "rmi", "-f", tag));
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : walk.toList()) {
        if (p.toString().contains("__pycache__")) {
          continue;
        }
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }

  private static void run(List<String> cmd) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("DOCKER_BUILDKIT", "0");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed:\n" + out);
    }
  }
}
