package sand.frontend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import sand.cluster.HostAgentTables.ApplicationRecord;
import sand.cluster.HostAgentTables.HostInfo;
import sand.contracts.ApplicationSettings;
import sand.contracts.Workflow;
import sand.frontend.internal.Json;

/**
 * What a host's sandboxes take against what the host has (GET /api/v1/admin/hosts, docs/operations.md "Host
 * capacity"): each sandbox reserves its application's sandbox_memory_mb and sandbox_cpus (Docker's limits) and
 * holds a grain worker per grain. Docker lets limits add up past the host (memory is only used as it is touched),
 * so use above the capacity is allowed and shown, not refused: the operator's signal to add hosts or lower limits.
 */
final class HostUse {
  private int sandboxes;
  private int idle;
  private int grains;
  private long memoryMb;
  private double cpus;

  /** What one sandbox of an application reserves: read from its settings and workflow once per application. */
  record Cost(long memoryMb, double cpus, int grains) {
    static Cost of(ApplicationRecord app) {
      long memory;
      double cpus;
      try {
        ApplicationSettings s = ApplicationSettings.fromJson(app.settings());
        memory = s.sandboxMemoryMb();
        cpus = s.sandboxCpus();
      } catch (
          RuntimeException e) { // settings checked when stored; an older row reads as the defaults
        memory = ApplicationSettings.defaults().sandboxMemoryMb();
        cpus = ApplicationSettings.defaults().sandboxCpus();
      }
      int grains = 0;
      try {
        grains = Workflow.parse(Json.stored(app.workflow())).grains().size();
      } catch (RuntimeException e) { // validated when stored: not counted
      }
      return new Cost(memory, cpus, grains);
    }
  }

  /** One sandbox on the host (deployed, deploying or failed: it holds, or is about to hold, what it costs). */
  void add(Cost cost) {
    sandboxes++;
    memoryMb += cost.memoryMb();
    cpus += cost.cpus();
    grains += cost.grains();
  }

  /** An application scaled to zero on the host: served there, but no sandbox (nothing reserved) until an event. */
  void idle() {
    idle++;
  }

  /** "resources" and "use" of a host in the admin API's listing. */
  void put(ObjectNode host, HostInfo h) {
    host.putObject("resources").put("cpus", h.capacity()).put("memory_mb", h.memoryMb());
    ObjectNode use = host.putObject("use")
        .put("sandboxes", sandboxes)
        .put("idle_applications", idle)
        .put("grains", grains)
        .put("sandbox_memory_mb", memoryMb)
        .put("sandbox_cpus", Math.round(cpus * 100) / 100.0);
    if (h.memoryMb() > 0) {
      use.put("memory_percent", Math.round(memoryMb * 1000.0 / h.memoryMb()) / 10.0);
    }
    if (h.capacity() > 0) {
      use.put("cpu_percent", Math.round(cpus * 1000.0 / h.capacity()) / 10.0);
    }
  }
}
