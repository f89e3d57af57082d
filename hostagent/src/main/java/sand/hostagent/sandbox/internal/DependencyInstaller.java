package sand.hostagent.sandbox.internal;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sand.contracts.RequirementLines;
import sand.hostagent.sandbox.DockerEngine;
import sand.hostagent.sandbox.DockerEngine.ContainerInfo;
import sand.hostagent.sandbox.DockerEngine.ContainerSpec;
import sand.hostagent.sandbox.DockerEngine.Mount;
import sand.hostagent.sandbox.DockerException;
import sand.hostagent.sandbox.SandboxContainer;
import sand.hostagent.sandbox.SandboxSettings;
import sand.hostagent.sandbox.internal.PackageIndexProxy.CredentialedIndex;

/**
 * Installs an application's requirements inside a throw-away container, never on the host (docs/security.md):
 * the sandbox image, its unprivileged user, no network (only {@link PackageIndexProxy} on a mounted socket,
 * which reaches only the allowed package index and holds its credentials, if any), no capabilities,
 * no privilege gain, a read-only root, pip's
 * build space and its output on size-limited tmpfs, memory, pids and CPU limits, and a deadline. The only
 * writable host folder is the one the packages are copied into. The container is removed on every path; the
 * error a developer sees is the tail of pip's own output from inside.
 */
public final class DependencyInstaller {
  private static final Logger LOG = LoggerFactory.getLogger(DependencyInstaller.class);
  public static final String COMPONENT = "deps";
  static final String IN = "/deps/in";
  static final String OUT = "/deps/out";
  static final String TARGET = "/deps/target";
  static final String PROXY = "/deps/proxy";
  static final int OUTPUT_TAIL_LINES = 15;
  private static final Duration POLL = Duration.ofMillis(200);

  /** pip failed, timed out or was refused: the message says which, with pip's own words. */
  public static final class InstallFailed extends Exception {
    public InstallFailed(String message) {
      super(message);
    }
  }

  /** One requirements file: where it came from (for errors) and its text. */
  public record Requirements(String name, String where, String text) {}

  private final DockerEngine docker;
  private final SandboxSettings settings;
  private final String hostId;
  private final boolean allowUrls;
  private final RequirementsCache cache;

  /** @param allowUrls whether {@code name @ https://...} lines pass (limits requirements.allow.urls) */
  public DependencyInstaller(
      DockerEngine docker, SandboxSettings settings, String hostId, boolean allowUrls) {
    this.docker = docker;
    this.settings = settings;
    this.hostId = hostId;
    this.allowUrls = allowUrls;
    this.cache = new RequirementsCache(settings.stateDir());
  }

  /** Check every line first (no container starts for a refused file); IllegalArgumentException names the line. */
  public void check(List<Requirements> files) {
    for (Requirements r : files) {
      RequirementLines.check(r.text(), r.where(), allowUrls);
    }
  }

  /**
   * Install {@code files} for {@code app} into {@code lib} (created), using {@code work} (created, then left
   * for the caller to delete) for the container's input and the proxy's socket.
   */
  public void install(String app, List<Requirements> files, Path lib, Path work)
      throws InstallFailed, InterruptedException {
    try {
      check(files);
    } catch (IllegalArgumentException e) {
      throw new InstallFailed(e.getMessage());
    }
    if (settings.pipAllowedHosts().isEmpty()) {
      throw new InstallFailed(
          "this platform installs no requirements: the operator allowed no package index "
              + "(host agent setting sandbox.pip.allowed.hosts is empty); ship pure-Python packages as folders in a "
              + "zip grain instead");
    }
    String who = "[host " + hostId + " app " + app + "]";
    String key = RequirementsCache.key(settings.image(), files);
    try {
      if (cache.copyTo(key, lib)) {
        LOG.info(
            "{} requirements installed before on this host: taken from its cache, pip not run",
            who);
        return;
      }
    } catch (IOException e) {
      LOG.warn("{} the requirements cache could not be read ({}): installing", who, e.toString());
    }
    Path in = work.resolve("in");
    Path proxyDir;
    try { // a Unix socket's path is limited to ~107 bytes: keep it short, whatever the state folder
      proxyDir = Files.createTempDirectory("sand-deps-");
    } catch (IOException e) {
      throw new InstallFailed("cannot create a folder for the package index proxy's socket: " + e);
    }
    try {
      installIn(app, files, lib, in, proxyDir, who);
      try {
        cache.keep(key, lib);
      } catch (IOException e) {
        LOG.warn("{} the installed requirements could not be cached: {}", who, e.toString());
      }
    } finally {
      try {
        Trees.delete(proxyDir);
      } catch (IOException e) {
        LOG.warn("{} could not delete {}: {}", who, proxyDir, e.toString());
      }
    }
  }

  private void installIn(
      String app, List<Requirements> files, Path lib, Path in, Path proxyDir, String who)
      throws InstallFailed, InterruptedException {
    Path work = in.getParent();
    CredentialedIndex index = credentialedIndex();
    List<String> cmd = new ArrayList<>(List.of(
        "python3",
        "-m",
        "grainworker._deps",
        "--out",
        OUT,
        "--target",
        TARGET,
        "--proxy-socket",
        PROXY + "/proxy.sock"));
    try {
      Files.createDirectories(in);
      Files.createDirectories(proxyDir);
      Files.createDirectories(lib);
      // The container's user (not root) reads the input, connects to the proxy, writes the output.
      Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(in, PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(proxyDir, PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rwxrwxrwx"));
      for (Requirements r : files) {
        Path f = Files.writeString(in.resolve(r.name() + ".txt"), r.text());
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        cmd.addAll(List.of("-r", IN + "/" + r.name() + ".txt"));
      }
      if (index != null) { // its credentials stay in the host agent: pip gets the proxy's origin
        cmd.addAll(List.of("--index-url", index.localUrl()));
      } else if (!settings.pipIndexUrl().isBlank()) {
        cmd.addAll(List.of("--index-url", settings.pipIndexUrl()));
      }
      if (settings.pipCert() != null) {
        Path ca = Files.copy(settings.pipCert(), in.resolve("ca.pem"));
        Files.setPosixFilePermissions(ca, PosixFilePermissions.fromString("rw-r--r--"));
        cmd.addAll(List.of("--cert", IN + "/ca.pem"));
      }
    } catch (IOException e) {
      throw new InstallFailed("cannot prepare the dependency install in " + work + ": " + e);
    }
    String name = "sand-deps-" + app + "-" + hostId + "-"
        + HexFormat.of().formatHex(new SecureRandom().generateSeed(4));
    long t0 = System.nanoTime();
    try (PackageIndexProxy proxy = PackageIndexProxy.serve(
        proxyDir.resolve("proxy.sock"),
        Set.copyOf(settings.pipAllowedHosts()),
        Duration.ofSeconds(10),
        who,
        PackageIndexProxy.MAX_CONNECTIONS,
        index)) {
      LOG.info(
          "{} installing requirements in container {} ({})",
          who,
          name,
          files.stream().map(Requirements::where).toList());
      try {
        String id = docker.create(name, spec(app, cmd, in, lib, proxyDir));
        docker.start(id);
        ContainerInfo done =
            awaitExit(name, System.nanoTime() + settings.pipTimeout().toNanos(), lib);
        if (done != null && done.status().equals(OUTPUT_TOO_LARGE)) {
          throw new InstallFailed(
              "the install wrote more than " + settings.pipOutputMaxMb() + " MB into the "
                  + "application's library folder (sandbox.pip.output.max.mb) and was stopped; its last output:\n"
                  + tail(docker.logs(name, OUTPUT_TAIL_LINES)));
        }
        if (done == null) {
          throw new InstallFailed(
              "pip did not finish within " + settings.pipTimeout().toSeconds() + " s "
                  + "(sandbox.pip.timeout.s); its last output:\n"
                  + tail(docker.logs(name, OUTPUT_TAIL_LINES)));
        }
        if (done.exitCode() != 0) {
          String refused = proxy.refused().isEmpty()
              ? ""
              : "\n(pip also tried to reach " + new LinkedHashSet<>(proxy.refused())
                  + ", which the operator does not allow)";
          throw new InstallFailed((done.oomKilled()
                  ? "pip ran out of memory (" + settings.pipMemoryMb()
                      + " MB, sandbox.pip.memory.mb)"
                  : "pip install exited with " + done.exitCode())
              + ":\n"
              + tail(docker.logs(name, OUTPUT_TAIL_LINES)) + refused);
        }
      } catch (DockerException e) {
        throw new InstallFailed(
            "Docker could not run the dependency container " + name + ": " + e.getMessage());
      } finally {
        removeQuietly(name);
      }
    } catch (IOException e) {
      throw new InstallFailed("cannot serve the package index proxy in " + proxyDir + ": " + e);
    }
    LOG.info("{} requirements installed in {} ms", who, (System.nanoTime() - t0) / 1_000_000);
  }

  /**
   * The operator's index when its URL carries credentials (the proxy adds them; the container never sees them),
   * else null. Its TLS trusts {@code sandbox.pip.cert} when set, else the JDK's CAs.
   */
  CredentialedIndex credentialedIndex() throws InstallFailed {
    URI url;
    try {
      url = settings.pipIndexUrl().isBlank() ? null : new URI(settings.pipIndexUrl());
    } catch (URISyntaxException e) {
      throw new InstallFailed(
          "the operator's package index URL (sandbox.pip.index.url) is not a URL");
    }
    if (url == null || url.getRawUserInfo() == null) {
      return null;
    }
    try {
      return new CredentialedIndex(url, tlsTrusting(settings.pipCert()));
    } catch (IllegalArgumentException | IOException | GeneralSecurityException e) {
      // The message must not echo the URL: it holds the credentials.
      throw new InstallFailed(
          "the operator's package index (sandbox.pip.index.url, with credentials) cannot be used: "
              + e.getClass().getSimpleName());
    }
  }

  private static SSLSocketFactory tlsTrusting(Path caBundle)
      throws IOException, GeneralSecurityException {
    if (caBundle == null) {
      return (SSLSocketFactory) SSLSocketFactory.getDefault();
    }
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (var in = Files.newInputStream(caBundle)) {
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trust.setCertificateEntry("ca" + i++, c);
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx.getSocketFactory();
  }

  /** The dependency container: everything a tenant's pip run may touch is listed here. */
  ContainerSpec spec(String app, List<String> cmd, Path in, Path lib, Path proxyDir) {
    Map<String, String> labels = new LinkedHashMap<>(settings.labels());
    labels.put(SandboxContainer.LABEL_HOST, hostId);
    labels.put(SandboxContainer.LABEL_STATE, SandboxContainer.stateLabel(settings.stateDir()));
    labels.put(SandboxContainer.LABEL_COMPONENT, COMPONENT);
    labels.put(SandboxContainer.LABEL_APP, app);
    long memory = (long) settings.pipMemoryMb() << 20;
    return new ContainerSpec(
        settings.image(),
        cmd,
        Map.of(),
        settings.user(),
        "/tmp",
        labels,
        "none",
        List.of("ALL"),
        List.of("no-new-privileges"),
        true,
        Map.of(
            "/tmp",
            "rw,nosuid,nodev,size=" + settings.pipTmpMb() + "m,mode=1777",
            TARGET,
            "rw,nosuid,nodev,size=" + settings.pipOutputMaxMb() + "m,mode=1777"),
        memory,
        memory,
        1_000_000_000L,
        256,
        List.of(
            new Mount(in.toAbsolutePath().toString(), IN, true),
            new Mount(lib.toAbsolutePath().toString(), OUT, false),
            new Mount(proxyDir.toAbsolutePath().toString(), PROXY, true)),
        5,
        settings.logLimits());
  }

  /** Remove dependency containers an earlier run of the agent left (it died mid-install). */
  public List<String> removeLeftovers() {
    List<String> removed = new ArrayList<>();
    for (DockerEngine.ContainerSummary c : docker.list(Map.of(
        SandboxContainer.LABEL_HOST,
        hostId,
        SandboxContainer.LABEL_STATE,
        SandboxContainer.stateLabel(settings.stateDir()),
        SandboxContainer.LABEL_COMPONENT,
        COMPONENT))) {
      removeQuietly(c.id());
      removed.add(c.name());
    }
    return removed;
  }

  /** Status word {@link #awaitExit} answers when the output folder outgrew its limit. */
  private static final String OUTPUT_TOO_LARGE = "output-too-large";

  /**
   * The container once it exited, or null at the deadline (it is killed then). pip writes into a size-limited
   * tmpfs, but a package's build step could write into the mounted output folder directly: its size is watched
   * at every poll, and the container killed when it passes the limit.
   */
  private ContainerInfo awaitExit(String name, long deadlineNanos, Path output)
      throws InterruptedException {
    long limit = (long) settings.pipOutputMaxMb() << 20;
    while (true) {
      if (Trees.size(output) > limit) {
        killQuietly(name);
        return new ContainerInfo(
            "", name, "", Map.of(), OUTPUT_TOO_LARGE, false, -1, false, 0, "", "", "", null);
      }
      Optional<ContainerInfo> c = docker.inspect(name);
      if (c.isEmpty()) {
        throw new DockerException(404, "the dependency container " + name + " disappeared");
      }
      if (!c.get().running() && !c.get().status().equals("created")) {
        return c.get();
      }
      if (System.nanoTime() > deadlineNanos) {
        killQuietly(name);
        return null;
      }
      Thread.sleep(POLL.toMillis());
    }
  }

  private void killQuietly(String name) {
    try {
      docker.kill(name, "SIGKILL");
    } catch (DockerException ignored) {
      // it ended meanwhile
    }
  }

  private void removeQuietly(String name) {
    try {
      docker.remove(name, true);
    } catch (DockerException e) {
      LOG.warn(
          "[host {}] could not remove dependency container {}: {}", hostId, name, e.getMessage());
    }
  }

  static String tail(String logs) {
    List<String> lines = new String(logs.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8)
        .lines()
        .filter(l -> !l.isBlank())
        .toList();
    String text = String.join(
        "\n", lines.subList(Math.max(0, lines.size() - OUTPUT_TAIL_LINES), lines.size()));
    return text.isEmpty() ? "(no output)" : text;
  }
}
