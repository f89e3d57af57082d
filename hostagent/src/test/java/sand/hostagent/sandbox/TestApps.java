package sand.hostagent.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import sand.contracts.ApplicationSettings;

/** Applications, socket folders and stand-in dependency installs for the sandbox tests. */
final class TestApps {
  static final String CREDENTIAL = "app-credential-0123456789";
  static final String HELLO_WORKFLOW =
      "{\"name\": \"hello\", \"entry\": \"greet\", \"functions\": ["
          + "{\"name\": \"greet\", \"next\": [\"shout\"]}, {\"name\": \"shout\", \"next\": [\"end\"]}]}";

  private final List<ServerSocketChannel> sockets = new ArrayList<>();

  /** A folder with listening bus.sock and data.sock (mode 0700 folder, as a strict umask would leave it). */
  Path socketDir(Path parent) throws IOException {
    Path dir = Files.createDirectories(parent.resolve("sockets"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    for (String name : List.of("bus.sock", "data.sock")) {
      ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      ch.bind(UnixDomainSocketAddress.of(dir.resolve(name)));
      Files.setPosixFilePermissions(
          dir.resolve(name), PosixFilePermissions.fromString("rw-------"));
      sockets.add(ch);
    }
    return dir;
  }

  void close() throws IOException {
    for (ServerSocketChannel ch : sockets) {
      ch.close();
    }
  }

  static ApplicationSpec hello(Path socketDir) {
    return hello(socketDir, "", ApplicationSettings.defaults());
  }

  static ApplicationSpec hello(Path socketDir, String requirements, ApplicationSettings settings) {
    Map<String, ApplicationSpec.Code> code = new LinkedHashMap<>();
    code.put(
        "greet", ApplicationSpec.Code.py("def handle(e, c):\n    return {'greeting': 'hello'}\n"));
    code.put("shout", ApplicationSpec.Code.py("def handle(e, c):\n    return e\n"));
    return new ApplicationSpec(
        "hello", HELLO_WORKFLOW, code, requirements, settings, CREDENTIAL, socketDir, Set.of());
  }

  static ApplicationSpec withCode(ApplicationSpec s, Map<String, ApplicationSpec.Code> code) {
    return new ApplicationSpec(
        s.appId(),
        s.workflowJson(),
        code,
        s.requirements(),
        s.settings(),
        s.credential(),
        s.socketDir(),
        s.grains());
  }

  /** A zip of name -> content, in order. */
  static byte[] zip(Map<String, String> entries) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(bytes)) {
      for (Map.Entry<String, String> e : entries.entrySet()) {
        z.putNextEntry(new ZipEntry(e.getKey()));
        z.write(e.getValue().getBytes(StandardCharsets.UTF_8));
        z.closeEntry();
      }
    }
    return bytes.toByteArray();
  }

  /** {@code s} allowed to reach the package index this host's pip uses (deploy/pip-index.sh, as the agent does). */
  static SandboxSettings withThisHostsPackageIndex(Path root, SandboxSettings s)
      throws IOException, InterruptedException {
    Process p = new ProcessBuilder(root.resolve("deploy/pip-index.sh").toString())
        .redirectErrorStream(false)
        .start();
    Map<String, String> v = new LinkedHashMap<>();
    for (String line :
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        v.put(line.substring(0, eq), line.substring(eq + 1).strip());
      }
    }
    p.waitFor();
    String hosts = v.getOrDefault("SAND_HOSTAGENT_SANDBOX_PIP_ALLOWED_HOSTS", "");
    String cert = v.getOrDefault("SAND_HOSTAGENT_SANDBOX_PIP_CERT", "");
    return s.withPackageIndex(
        hosts.isEmpty() ? List.of() : List.of(hosts.split(",")),
        v.getOrDefault("SAND_HOSTAGENT_SANDBOX_PIP_INDEX_URL", ""),
        cert.isEmpty() ? null : Path.of(cert));
  }

  /** The package index tests allow (nothing connects to it: the install container is a fake). */
  static final List<String> INDEX = List.of("index.example:443");

  /**
   * A stand-in dependency install: when an install container starts, record its spec and, as pip would,
   * write a package into its output folder and exit 0, or print {@code failWith} and exit 1.
   */
  static void fakeInstalls(
      FakeDockerEngine docker, List<DockerEngine.ContainerSpec> installs, String failWith) {
    docker.onStart("sand-deps-", c -> {
      installs.add(c.spec);
      c.status = "exited";
      if (failWith == null) {
        String out = c.spec.mounts().stream()
            .filter(m -> m.target().equals("/deps/out"))
            .findFirst()
            .orElseThrow()
            .source();
        try {
          Files.createDirectories(Path.of(out, "fakepkg"));
          Files.writeString(Path.of(out, "fakepkg", "__init__.py"), "VALUE = 1\n");
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        c.exitCode = 0;
      } else {
        c.logs = "Collecting stuff\n" + failWith + "\n";
        c.exitCode = 1;
      }
    });
  }

  private TestApps() {}

  static TestApps create() {
    return new TestApps();
  }
}
