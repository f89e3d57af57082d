package sand.hostagent.sandbox;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
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

/** Applications, socket folders and stand-in pips for the sandbox tests. */
final class TestApps {
  static final String CREDENTIAL = "app-credential-0123456789";
  static final String HELLO_WORKFLOW = "{\"name\": \"hello\", \"entry\": \"greet\", \"functions\": ["
      + "{\"name\": \"greet\", \"next\": [\"shout\"]}, {\"name\": \"shout\", \"next\": [\"end\"]}]}";

  private final List<ServerSocketChannel> sockets = new ArrayList<>();

  /** A folder with listening bus.sock and data.sock (mode 0700 folder, as a strict umask would leave it). */
  Path socketDir(Path parent) throws IOException {
    Path dir = Files.createDirectories(parent.resolve("sockets"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    for (String name : List.of("bus.sock", "data.sock")) {
      ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      ch.bind(UnixDomainSocketAddress.of(dir.resolve(name)));
      Files.setPosixFilePermissions(dir.resolve(name), PosixFilePermissions.fromString("rw-------"));
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
    code.put("greet", ApplicationSpec.Code.py("def handle(e, c):\n    return {'greeting': 'hello'}\n"));
    code.put("shout", ApplicationSpec.Code.py("def handle(e, c):\n    return e\n"));
    return new ApplicationSpec("hello", HELLO_WORKFLOW, code, requirements, settings, CREDENTIAL, socketDir, Set.of());
  }

  static ApplicationSpec withCode(ApplicationSpec s, Map<String, ApplicationSpec.Code> code) {
    return new ApplicationSpec(s.appId(), s.workflowJson(), code, s.requirements(), s.settings(), s.credential(),
        s.socketDir(), s.grains());
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

  /**
   * A stand-in pip: a shell script that appends its arguments to {@code calls} and, when {@code failWith}
   * is not null, prints it to stderr and exits 1 (as pip does for a requirement it cannot install).
   */
  static List<String> fakePip(Path dir, Path calls, String failWith) throws IOException {
    Path script = dir.resolve("fake-pip");
    String body = "#!/bin/sh\necho \"$@\" >> '" + calls + "'\n"
        + (failWith == null ? "exit 0\n" : "echo 'Collecting stuff' >&2\nprintf '%s\\n' '" + failWith + "' >&2\nexit 1\n");
    Files.writeString(script, body);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    return List.of(script.toString());
  }

  private TestApps() {}

  static TestApps create() {
    return new TestApps();
  }
}
