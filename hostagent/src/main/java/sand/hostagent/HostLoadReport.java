package sand.hostagent;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

/**
 * This host's load as placement by load will read it (issue 33; docs/operations.md "Host load"), a JSON object
 * written to the cluster state with each heartbeat: the host's CPU and memory, its sandboxes, and per application
 * running or idle here its events queued in local queues and in flight (the most loaded {@link #APPS_MAX} of them).
 */
final class HostLoadReport implements Supplier<String> {
  static final int APPS_MAX = 100;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final LocalMessageBus bus;
  private final ApplicationDeployer deployer;
  private final Supplier<Map<String, Number>> inFlight;

  /** @param inFlight events delivered here and not finished, per application (the bridge's) */
  HostLoadReport(
      LocalMessageBus bus, ApplicationDeployer deployer, Supplier<Map<String, Number>> inFlight) {
    this.bus = bus;
    this.deployer = deployer;
    this.inFlight = inFlight;
  }

  @Override
  public String get() {
    ObjectNode o = JSON.createObjectNode();
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      double cpu = os.getCpuLoad();
      if (cpu >= 0) {
        o.put("cpu_percent", Math.round(cpu * 1000) / 10.0);
      }
      long total = os.getTotalMemorySize() >> 20;
      o.put("memory_mb", total);
      o.put("memory_available_mb", availableMb(os.getFreeMemorySize() >> 20));
    }
    Set<String> running = deployer.deployedApps();
    Set<String> idle = deployer.scaledToZeroApps();
    o.put("sandboxes", running.size() - idle.size());
    o.put("idle_applications", idle.size());
    Map<String, Integer> queued = new HashMap<>();
    for (QueueStats q : bus.queueStats()) {
      if (q.application() != null) {
        queued.merge(q.application(), q.length(), Integer::sum);
      }
    }
    Map<String, Number> flying = inFlight.get();
    List<String> apps = new ArrayList<>(running);
    apps.sort((a, b) -> Integer.compare(load(b, queued, flying), load(a, queued, flying)));
    ObjectNode byApp = o.putObject("apps");
    for (String app : apps.subList(0, Math.min(APPS_MAX, apps.size()))) {
      byApp
          .putObject(app)
          .put("queued", queued.getOrDefault(app, 0))
          .put("in_flight", flying.getOrDefault(app, 0).intValue())
          .put("idle", idle.contains(app));
    }
    return o.toString();
  }

  private static int load(String app, Map<String, Integer> queued, Map<String, Number> flying) {
    return queued.getOrDefault(app, 0) + flying.getOrDefault(app, 0).intValue();
  }

  /** MemAvailable (free plus what the kernel can reclaim), else the JVM's free figure. */
  private static long availableMb(long freeMb) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemAvailable:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) >> 10;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux, or unreadable: the JVM's figure
    }
    return freeMb;
  }
}
