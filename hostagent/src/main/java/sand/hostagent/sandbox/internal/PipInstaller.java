package sand.hostagent.sandbox.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Installs an application's pip requirements on the host into the folder its sandbox imports from
 * ({@code pip install --target}): the sandbox has neither pip nor a network. The caller runs pip in
 * the application's code folder, so a relative path in a requirements file means a file shipped with
 * the code (e.g. a wheel inside a zip resource).
 */
public final class PipInstaller {

  /** pip failed: {@link #getMessage()} ends with the tail of its stderr. */
  public static final class PipFailed extends IOException {
    public PipFailed(String message) {
      super(message);
    }
  }

  static final int STDERR_TAIL_LINES = 15;

  private final List<String> command;
  private final Duration timeout;

  public PipInstaller(List<String> command, Duration timeout) {
    this.command = List.copyOf(command);
    this.timeout = timeout;
  }

  /** The full command line for these requirement files. */
  public List<String> commandLine(List<Path> requirementFiles, Path target) {
    List<String> cmd = new ArrayList<>(command);
    cmd.addAll(List.of("install", "--no-input", "--disable-pip-version-check", "--no-warn-script-location",
        "--target", target.toString()));
    for (Path r : requirementFiles) {
      cmd.add("-r");
      cmd.add(r.toString());
    }
    return cmd;
  }

  /** Run pip in {@code workDir}, its stderr into {@code log}. */
  public void install(List<Path> requirementFiles, Path target, Path workDir, Path log) throws IOException,
      InterruptedException {
    List<String> cmd = commandLine(requirementFiles, target);
    Process p;
    try {
      p = new ProcessBuilder(cmd).directory(workDir.toFile())
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(log.toFile())
          .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
          .start();
    } catch (IOException e) {
      throw new PipFailed("cannot run pip (" + String.join(" ", command) + "): " + e.getMessage()
          + "; set the host agent's sandbox.pip.command to a pip whose Python matches the sandbox image");
    }
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor();
      throw new PipFailed("pip did not finish within " + timeout.toSeconds() + " s; stderr:\n" + tail(log));
    }
    if (p.exitValue() != 0) {
      throw new PipFailed("pip install exited with " + p.exitValue() + ":\n" + tail(log));
    }
    Trees.delete(target.resolve("bin")); // console scripts would point at the host's Python
  }

  /** The last lines of pip's stderr (its error is at the end). */
  static String tail(Path log) throws IOException {
    if (!Files.exists(log)) {
      return "(no output)";
    }
    List<String> lines = new String(Files.readAllBytes(log), StandardCharsets.UTF_8).lines().toList();
    List<String> tail = lines.subList(Math.max(0, lines.size() - STDERR_TAIL_LINES), lines.size());
    String text = String.join("\n", tail).strip();
    return text.isEmpty() ? "(no output)" : text;
  }
}
