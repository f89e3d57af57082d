package sand.hostagent.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import sand.hostagent.sandbox.internal.UnixHttpClient;
import sand.hostagent.sandbox.internal.UnixHttpClient.Response;

/**
 * {@link DockerEngine} over the Engine's HTTP API on its Unix socket, API version pinned to
 * {@value #API_VERSION} (Docker 20.10, Debian 12's {@code docker.io}; later Engines still serve it).
 *
 * <p>Why not docker-java: the host agent needs ten calls; this is one small class on the JDK's Unix
 * socket channels and the Jackson already on the classpath, where docker-java would bring a dozen jars
 * (its own HTTP client among them, which the build deliberately keeps off the classpath).
 */
public final class DockerHttpEngine implements DockerEngine, AutoCloseable {
  public static final String API_VERSION = "v1.41";
  public static final Path DEFAULT_SOCKET = Path.of("/var/run/docker.sock");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);
  /** `docker top` runs ps on the host with these arguments; the Engine keeps the container's lines. */
  static final String PS_ARGS = "-eo pid,ppid,stat,args";

  private final UnixHttpClient http;

  public DockerHttpEngine(Path socket) {
    this.http = new UnixHttpClient(socket, 64L << 20);
  }

  @Override
  public void ping() {
    Response r = call("GET", "/_ping", null, Duration.ofSeconds(10));
    if (r.status() != 200) {
      throw new DockerException(
          r.status(),
          "Docker Engine on " + http.socket() + " answered _ping with " + r.status() + ": "
              + r.text());
    }
  }

  @Override
  public String create(String name, ContainerSpec spec) {
    Response r =
        call("POST", "/containers/create?name=" + enc(name), bytes(createBody(spec)), CALL_TIMEOUT);
    if (r.status() == 404) {
      throw new DockerException(
          404,
          "image " + spec.image() + " not found: " + message(r)
              + "; build it with deploy/sandbox-image.sh");
    }
    check(r, "create container " + name);
    return tree(r).path("Id").asText();
  }

  /** The Engine's JSON for {@code POST /containers/create}. */
  static ObjectNode createBody(ContainerSpec spec) {
    ObjectNode body = JSON.createObjectNode();
    body.put("Image", spec.image());
    spec.cmd().forEach(body.putArray("Cmd")::add);
    ArrayNode env = body.putArray("Env");
    new TreeMap<>(spec.env()).forEach((k, v) -> env.add(k + "=" + v));
    body.put("User", spec.user());
    body.put("WorkingDir", spec.workingDir());
    ObjectNode labels = body.putObject("Labels");
    new TreeMap<>(spec.labels()).forEach(labels::put);
    body.put("StopTimeout", spec.stopTimeoutSecs());
    body.put("NetworkDisabled", "none".equals(spec.networkMode()));
    ObjectNode host = body.putObject("HostConfig");
    host.put("NetworkMode", spec.networkMode());
    spec.capDrop().forEach(host.putArray("CapDrop")::add);
    spec.securityOpt().forEach(host.putArray("SecurityOpt")::add);
    host.put("ReadonlyRootfs", spec.readonlyRootfs());
    host.put("Privileged", false);
    host.put("Init", false); // the sandbox's supervisor is PID 1 and reaps orphans itself
    host.put("IpcMode", "private");
    ObjectNode tmpfs = host.putObject("Tmpfs");
    new TreeMap<>(spec.tmpfs()).forEach(tmpfs::put);
    host.put("Memory", spec.memoryBytes());
    host.put("MemorySwap", spec.memorySwapBytes());
    host.put("NanoCpus", spec.nanoCpus());
    host.put("PidsLimit", spec.pidsLimit());
    host.putObject("RestartPolicy")
        .put("Name", "no"); // the host agent restarts sandboxes, with its sockets ready
    // Whatever the daemon's default driver, this container's stdout/stderr is rotated: a grain
    // writing to fd 1
    // bypasses the instance's log capture and would otherwise fill the host's disk.
    ObjectNode log = host.putObject("LogConfig");
    log.put("Type", "json-file");
    log.putObject("Config")
        .put("max-size", Long.toString(spec.logs().maxBytes()))
        .put("max-file", Integer.toString(spec.logs().maxFiles()));
    ArrayNode mounts = host.putArray("Mounts");
    for (Mount m : spec.mounts()) {
      mounts
          .addObject()
          .put("Type", "bind")
          .put("Source", m.source())
          .put("Target", m.target())
          .put("ReadOnly", m.readOnly());
    }
    return body;
  }

  @Override
  public void start(String container) {
    Response r = call("POST", "/containers/" + enc(container) + "/start", null, CALL_TIMEOUT);
    if (r.status() != 304) {
      check(r, "start container " + container);
    }
  }

  @Override
  public void stop(String container, Duration timeout) {
    long t = Math.max(0, timeout.toSeconds());
    Response r = call(
        "POST",
        "/containers/" + enc(container) + "/stop?t=" + t,
        null,
        CALL_TIMEOUT.plusSeconds(t));
    if (r.status() != 304) {
      check(r, "stop container " + container);
    }
  }

  @Override
  public void kill(String container, String signal) {
    Response r = call(
        "POST",
        "/containers/" + enc(container) + "/kill?signal=" + enc(signal),
        null,
        CALL_TIMEOUT);
    if (r.status() != 409) { // 409: not running, nothing to signal
      check(r, "kill container " + container);
    }
  }

  @Override
  public boolean remove(String container, boolean force) {
    Response r = call(
        "DELETE", "/containers/" + enc(container) + "?v=true&force=" + force, null, CALL_TIMEOUT);
    if (r.status() == 404) {
      return false;
    }
    check(r, "remove container " + container);
    return true;
  }

  @Override
  public Optional<ContainerInfo> inspect(String container) {
    Response r = call("GET", "/containers/" + enc(container) + "/json", null, CALL_TIMEOUT);
    if (r.status() == 404) {
      return Optional.empty();
    }
    check(r, "inspect container " + container);
    JsonNode n = tree(r);
    JsonNode s = n.path("State");
    return Optional.of(new ContainerInfo(
        n.path("Id").asText(),
        stripSlash(n.path("Name").asText()),
        n.path("Config").path("Image").asText(),
        labels(n.path("Config").path("Labels")),
        s.path("Status").asText(),
        s.path("Running").asBoolean(),
        s.path("ExitCode").asInt(),
        s.path("OOMKilled").asBoolean(),
        s.path("Pid").asInt(),
        s.path("Error").asText(""),
        s.path("StartedAt").asText(""),
        s.path("FinishedAt").asText(""),
        n));
  }

  @Override
  public List<ContainerSummary> list(Map<String, String> labels) {
    ObjectNode filters = JSON.createObjectNode();
    ArrayNode wanted = filters.putArray("label");
    new TreeMap<>(labels).forEach((k, v) -> wanted.add(k + "=" + v));
    Response r = call(
        "GET", "/containers/json?all=true&filters=" + enc(filters.toString()), null, CALL_TIMEOUT);
    check(r, "list containers " + labels);
    List<ContainerSummary> out = new ArrayList<>();
    for (JsonNode c : tree(r)) {
      String name = c.path("Names").path(0).asText("");
      out.add(new ContainerSummary(
          c.path("Id").asText(),
          stripSlash(name),
          labels(c.path("Labels")),
          c.path("State").asText(),
          c.path("Status").asText()));
    }
    return out;
  }

  @Override
  public List<ProcessEntry> top(String container) {
    Response r = call(
        "GET",
        "/containers/" + enc(container) + "/top?ps_args=" + enc(PS_ARGS),
        null,
        CALL_TIMEOUT);
    if (r.status() == 409 || r.status() == 404) {
      return List.of(); // not running (or gone): no processes
    }
    check(r, "list processes of " + container);
    return parseTop(tree(r));
  }

  /** Docker's top answer: {"Titles": [...], "Processes": [[...], ...]}, the last column holding the whole command. */
  static List<ProcessEntry> parseTop(JsonNode top) {
    List<String> titles = new ArrayList<>();
    top.path("Titles").forEach(t -> titles.add(t.asText()));
    int pid = titles.indexOf("PID");
    int ppid = titles.indexOf("PPID");
    int stat = titles.indexOf("STAT");
    int cmd = titles.size() - 1;
    List<ProcessEntry> out = new ArrayList<>();
    for (JsonNode p : top.path("Processes")) {
      out.add(new ProcessEntry(
          p.path(pid).asInt(),
          p.path(ppid).asInt(),
          stat < 0 ? "" : p.path(stat).asText(),
          p.path(cmd).asText()));
    }
    return out;
  }

  @Override
  public String logs(String container, int lines) {
    Response r = call(
        "GET",
        "/containers/" + enc(container) + "/logs?stdout=true&stderr=true&tail=" + lines,
        null,
        CALL_TIMEOUT);
    if (r.status() == 404) {
      return "";
    }
    check(r, "read the logs of " + container);
    return demultiplex(r.body());
  }

  /**
   * A container without a TTY logs in frames: 1 byte stream type, 3 zero bytes, 4 bytes big-endian size,
   * then the payload. Anything not framed that way is returned as it is.
   */
  static String demultiplex(byte[] b) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i + 8 <= b.length
        && b[i] >= 0
        && b[i] <= 2
        && b[i + 1] == 0
        && b[i + 2] == 0
        && b[i + 3] == 0) {
      int size = ((b[i + 4] & 0xff) << 24)
          | ((b[i + 5] & 0xff) << 16)
          | ((b[i + 6] & 0xff) << 8)
          | (b[i + 7] & 0xff);
      int end = Math.min(b.length, i + 8 + size);
      out.append(new String(b, i + 8, end - i - 8, StandardCharsets.UTF_8));
      i = end;
    }
    if (i < b.length) {
      out.append(new String(b, i, b.length - i, StandardCharsets.UTF_8));
    }
    return out.toString();
  }

  @Override
  public void close() {
    http.close();
  }

  // ---- plumbing

  private Response call(String method, String path, byte[] body, Duration timeout) {
    try {
      return http.request(method, "/" + API_VERSION + path, body, timeout);
    } catch (UnixHttpClient.TransportException e) {
      throw new DockerException(
          "Docker Engine on " + http.socket() + ": " + e.getMessage()
              + " (is dockerd running and may this user use its socket?)",
          e);
    }
  }

  private static void check(Response r, String what) {
    if (r.status() / 100 != 2) {
      throw new DockerException(
          r.status(), "Docker Engine refused to " + what + " (" + r.status() + "): " + message(r));
    }
  }

  private static String message(Response r) {
    try {
      JsonNode n = JSON.readTree(r.body());
      if (n != null && n.hasNonNull("message")) {
        return n.get("message").asText();
      }
    } catch (IOException ignored) {
      // not JSON: the raw text says it
    }
    return r.text().strip();
  }

  private static JsonNode tree(Response r) {
    try {
      return JSON.readTree(r.body());
    } catch (IOException e) {
      throw new DockerException(
          r.status(), "Docker Engine answered with invalid JSON: " + e.getMessage());
    }
  }

  private static byte[] bytes(JsonNode n) {
    try {
      return JSON.writeValueAsBytes(n);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Map<String, String> labels(JsonNode n) {
    Map<String, String> out = new LinkedHashMap<>();
    n.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  private static String stripSlash(String name) {
    return name.startsWith("/") ? name.substring(1) : name;
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
