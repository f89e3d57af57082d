package sand.hostagent;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import sand.contracts.LoadReport;
import sand.localbus.LocalMessageBus;
import sand.localbus.QueueStats;

/**
 * This host's load as placement by load will read it (issue 33; docs/operations.md "Host load"), a JSON object
 * written to the cluster state with each heartbeat: the host's CPU and memory, its sandboxes, and per application
 * running or idle here its events queued in local queues, in flight and put in so far (the most loaded {@link
 * #APPS_MAX} of them), in the form {@link LoadReport} declares.
 */
final class HostLoadReport implements Supplier<String> {
  static final int APPS_MAX = 100;

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
    double cpu = -1;
    long total = 0;
    long available = 0;
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      cpu = os.getCpuLoad() < 0 ? -1 : os.getCpuLoad() * 100;
      total = os.getTotalMemorySize() >> 20;
      available = availableMb(os.getFreeMemorySize() >> 20);
    }
    Set<String> running = deployer.deployedApps();
    Set<String> idle = deployer.scaledToZeroApps();
    Map<String, Integer> queued = new HashMap<>();
    Map<String, Long> events = new HashMap<>();
    for (QueueStats q : bus.queueStats()) {
      if (q.application() != null) {
        queued.merge(q.application(), q.length(), Integer::sum);
        events.merge(q.application(), q.published(), Long::sum);
      }
    }
    Map<String, Number> flying = inFlight.get();
    List<String> apps = new ArrayList<>(running);
    apps.sort((a, b) -> Integer.compare(load(b, queued, flying), load(a, queued, flying)));
    Map<String, LoadReport.AppLoad> byApp = new LinkedHashMap<>();
    for (String app : apps.subList(0, Math.min(APPS_MAX, apps.size()))) {
      byApp.put(
          app,
          new LoadReport.AppLoad(
              queued.getOrDefault(app, 0),
              flying.getOrDefault(app, 0).intValue(),
              events.getOrDefault(app, 0L),
              idle.contains(app)));
    }
    return new LoadReport(cpu, total, available, running.size() - idle.size(), idle.size(), byApp)
        .toJson();
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
