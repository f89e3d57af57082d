package sand.hostagent.sandbox.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import sand.contracts.ApplicationSettings;
import sand.contracts.RequirementLines;
import sand.contracts.Workflow;
import sand.hostagent.sandbox.ApplicationSpec;
import sand.hostagent.sandbox.SandboxException;
import sand.hostagent.sandbox.SandboxSettings;

/**
 * An application's folder on the host, mounted read-only into its sandbox at {@value #MOUNT}:
 *
 * <pre>
 *   workflow.json    the workflow as deployed
 *   sandbox.json     what the supervisor starts (grains, their limits, socket paths)
 *   code/            the grains' code: &lt;resource&gt;.py files and unpacked zip resources
 *   lib/             the application's requirements (installed by {@link DependencyInstaller} in a throw-away
 *                    container), on the workers' PYTHONPATH
 *   requirements/    the requirement files pip read (app.txt, &lt;zip resource&gt;.txt)
 *   reload.json      after an update: the grains whose workers restart with new code (supervisor, SIGHUP)
 *   env.json         settings.env and the secrets ({"config": {...}, "secrets": {...}}): the supervisor puts them
 *                    in the workers' environment; only here, under the host agent's own state folder, are the
 *                    secrets in clear on the host (docs/security.md, Secrets)
 * </pre>
 *
 * It is built in {@code <state>/build/} and moved into {@code <state>/apps/<app>} only when complete,
 * so a failed deploy leaves the previous one as it was.
 */
public final class AppFolder {
  public static final String MOUNT = "/sand/app";
  public static final String SOCKETS_MOUNT = "/sand/sockets";
  /** What the supervisor reads on SIGHUP (next to sandbox.json): the grains whose workers restart for new code. */
  public static final String RELOAD_FILE = "reload.json";
  /** settings.env and the opened secrets, for the supervisor (sandbox.json names it as env_file). */
  public static final String ENV_FILE = "env.json";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path stateDir;

  public AppFolder(Path stateDir) {
    this.stateDir = stateDir.toAbsolutePath().normalize();
  }

  /** The installed folder of {@code app}. */
  public Path appDir(String app) {
    return stateDir.resolve("apps").resolve(app);
  }

  /**
   * Build the folder of {@code spec} hosting {@code hosted} grains, requirements installed; returns the
   * build folder for {@link #install}. On failure nothing is left behind.
   */
  public Path build(
      ApplicationSpec spec,
      Workflow workflow,
      Set<String> hosted,
      SandboxSettings settings,
      DependencyInstaller deps,
      String hostId)
      throws SandboxException, InterruptedException {
    String app = spec.appId();
    Path build;
    try {
      Files.createDirectories(
          stateDir,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      build =
          Files.createDirectories(stateDir.resolve("build")).resolve(app + "." + UUID.randomUUID());
      Files.createDirectories(build.resolve("code"));
      Files.createDirectories(build.resolve("lib"));
      Files.createDirectories(build.resolve("requirements"));
    } catch (IOException e) {
      throw new SandboxException(
          "application " + app + ": cannot create its folder under " + stateDir + ": " + e
              + "; check that the host agent may write there (sandbox.state.dir)",
          e);
    }
    Path work = build.resolveSibling(build.getFileName() + ".deps");
    boolean done = false;
    try {
      List<DependencyInstaller.Requirements> requirements = writeCode(spec, build, settings);
      checkGrainCode(spec, workflow, hosted, build.resolve("code"));
      Files.writeString(build.resolve("workflow.json"), spec.workflowJson());
      if (!requirements.isEmpty()) {
        try {
          deps.install(app, requirements, build.resolve("lib"), work);
        } catch (DependencyInstaller.InstallFailed e) {
          throw new SandboxException("application " + app
              + ": its requirements could not be installed: " + e.getMessage());
        }
      }
      ObjectNode env = JSON.createObjectNode();
      spec.env().config().forEach(env.putObject("config")::put);
      spec.env().secrets().forEach(env.putObject("secrets")::put);
      Files.write(build.resolve(ENV_FILE), JSON.writeValueAsBytes(env));
      Files.write(
          build.resolve("sandbox.json"),
          JSON.writerWithDefaultPrettyPrinter()
              .writeValueAsBytes(sandboxJson(spec, hosted, settings, hostId)));
      Trees.makeReadable(build);
      done = true;
      return build;
    } catch (IOException e) {
      throw new SandboxException(
          "application " + app + ": cannot prepare its folder " + build + ": " + e, e);
    } finally {
      deleteQuietly(work);
      if (!done) {
        deleteQuietly(build);
      }
    }
  }

  /** Replace {@code <state>/apps/<app>} by the built folder (the old one is deleted). */
  public Path install(String app, Path build) throws SandboxException {
    Path target = appDir(app);
    try {
      Files.createDirectories(target.getParent());
      Path old = stateDir.resolve("build").resolve(app + ".old." + UUID.randomUUID());
      if (Files.exists(target)) {
        move(target, old);
      }
      move(build, target);
      Trees.delete(old);
      return target;
    } catch (IOException e) {
      throw new SandboxException(
          "application " + app + ": cannot install its folder at " + target + ": " + e, e);
    }
  }

  /**
   * Write new code for some .py resources of an installed application (an update: its grain workers restart with
   * it) and {@code reload.json} naming the grains whose workers must restart; returns the code it replaced.
   * Each file is replaced by a rename, so a worker starting meanwhile reads the old or the new file whole.
   */
  public Map<String, byte[]> replaceCode(
      String app, Map<String, byte[]> pyResources, Set<String> grains) throws SandboxException {
    Path dir = appDir(app);
    Map<String, byte[]> old = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, byte[]> e : pyResources.entrySet()) {
        Path file = dir.resolve("code").resolve(e.getKey() + ".py");
        old.put(e.getKey(), Files.readAllBytes(file));
        replace(file, e.getValue());
      }
      ObjectNode reload = JSON.createObjectNode();
      grains.forEach(reload.putArray("grains")::add);
      replace(dir.resolve(RELOAD_FILE), JSON.writeValueAsBytes(reload));
      return old;
    } catch (IOException e) {
      throw new SandboxException(
          "application " + app + ": cannot write its new code in " + dir + ": " + e, e);
    }
  }

  private static void replace(Path file, byte[] bytes) throws IOException {
    Path tmp = file.resolveSibling("." + file.getFileName() + "." + UUID.randomUUID());
    Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW);
    Trees.makeReadable(tmp);
    move(tmp, file);
  }

  /** Remove the application's folder (undeploy). */
  public void remove(String app) throws IOException {
    Trees.delete(appDir(app));
  }

  /** Every application with an installed folder. */
  public Set<String> installed() throws IOException {
    Path apps = stateDir.resolve("apps");
    Set<String> out = new TreeSet<>();
    if (Files.isDirectory(apps)) {
      try (var list = Files.list(apps)) {
        list.forEach(p -> out.add(p.getFileName().toString()));
      }
    }
    return out;
  }

  /** Writes code/ and the requirement files; returns those with something to install. */
  private List<DependencyInstaller.Requirements> writeCode(
      ApplicationSpec spec, Path build, SandboxSettings settings)
      throws SandboxException, IOException {
    Path code = build.resolve("code");
    SafeZip.Budget budget = new SafeZip.Budget(settings.codeMaxBytes());
    List<DependencyInstaller.Requirements> requirements = new ArrayList<>();
    if (RequirementLines.hasRequirements(spec.requirements())) {
      Files.writeString(build.resolve("requirements").resolve("app.txt"), spec.requirements());
      requirements.add(new DependencyInstaller.Requirements(
          "app", "the application's requirements", spec.requirements()));
    }
    for (Map.Entry<String, ApplicationSpec.Code> e : spec.code().entrySet()) {
      String resource = e.getKey();
      byte[] bytes = e.getValue().bytes();
      String where = "application " + spec.appId() + ": resource " + resource;
      try {
        switch (e.getValue().kind()) {
          case PY -> {
            budget.take(bytes.length, "resource " + resource);
            Files.write(code.resolve(resource + ".py"), bytes, StandardOpenOption.CREATE_NEW);
          }
          case ZIP -> {
            ByteArrayOutputStream req = new ByteArrayOutputStream();
            SafeZip.extract(bytes, code, settings.zipMaxEntries(), budget, "requirements.txt", req);
            String text = req.toString(StandardCharsets.UTF_8);
            if (RequirementLines.hasRequirements(text)) {
              Files.writeString(build.resolve("requirements").resolve(resource + ".txt"), text);
              requirements.add(new DependencyInstaller.Requirements(
                  resource, "requirements.txt of grain resource " + resource, text));
            }
          }
          default ->
            throw new IllegalStateException("unknown code kind " + e.getValue().kind());
        }
      } catch (SafeZip.ZipRefused z) {
        throw new SandboxException(where + ": refused: " + z.getMessage());
      } catch (FileAlreadyExistsException x) {
        throw new SandboxException(
            where + ": " + resource + ".py is already written by another resource's zip");
      }
    }
    return requirements;
  }

  private static void checkGrainCode(
      ApplicationSpec spec, Workflow wf, Set<String> hosted, Path code) throws SandboxException {
    for (String grain : hosted) {
      String resource = wf.grains().get(grain);
      if (resource.isEmpty()) {
        continue; // an ASL state other than Task: the sandbox's built-in code
        // (grainworker/aslrun.py)
      }
      if (!Files.isRegularFile(code.resolve(resource + ".py"))
          && !Files.isRegularFile(code.resolve(resource).resolve("__init__.py"))) {
        throw new SandboxException(
            "application " + spec.appId() + ": grain " + grain + " runs code '" + resource
                + "' but neither " + resource + ".py nor " + resource
                + "/__init__.py was uploaded (resources: "
                + spec.code().keySet() + ")");
      }
    }
  }

  /** The supervisor's configuration (grainworker/supervisor.py), with the paths as the sandbox sees them. */
  static ObjectNode sandboxJson(
      ApplicationSpec spec, Set<String> hosted, SandboxSettings s, String hostId) {
    ApplicationSettings a = spec.settings();
    ObjectNode doc = JSON.createObjectNode();
    doc.put("app", spec.appId());
    doc.put("host", hostId);
    doc.put("workflow", MOUNT + "/workflow.json");
    doc.put("code", MOUNT + "/code");
    doc.put(
        "reload_file",
        MOUNT + "/" + RELOAD_FILE); // the one place that names it: the supervisor reads this
    doc.put("lib", MOUNT + "/lib");
    doc.put("env_file", MOUNT + "/" + ENV_FILE);
    doc.put("bus", "unix:" + SOCKETS_MOUNT + "/bus.sock");
    doc.put("data", "unix:" + SOCKETS_MOUNT + "/data.sock");
    var local =
        doc.putArray("local_grains"); // none: every output goes through the host agent and Kafka
    if (s.localShortcut()) {
      hosted.forEach(local::add);
    }
    ObjectNode grains = doc.putObject("grains");
    for (String g : hosted) {
      grains
          .putObject(g)
          .put("concurrency", a.concurrency())
          .put("timeout_s", a.timeoutS())
          .put("memory_mb", a.instanceMemoryMb())
          .put("standby", s.standby())
          .put("session_timeout_s", a.sessionTimeoutS())
          .put("session_functions_max", a.sessionFunctionsMax());
    }
    doc.putObject("restart")
        .put("initial_s", s.workerRestartInitial().toMillis() / 1000.0)
        .put("max_s", s.workerRestartMax().toMillis() / 1000.0)
        .put("stable_s", 30);
    doc.put("stop_grace_s", s.stopGrace().toSeconds());
    return doc;
  }

  private static void move(Path from, Path to) throws IOException {
    try {
      Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(from, to);
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Trees.delete(p);
    } catch (IOException ignored) {
      // a leftover in build/ is harmless; the next deploy uses a new name
    }
  }
}
