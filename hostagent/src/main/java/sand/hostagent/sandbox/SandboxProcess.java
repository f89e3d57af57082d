package sand.hostagent.sandbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import sand.hostagent.sandbox.DockerEngine.ProcessEntry;

/**
 * One process of a sandbox as the host sees it (host pids).
 *
 * @param grain   the grain of a worker or instance ("" for the supervisor and anything else)
 * @param command its command line (a grain instance is a fork of its worker: same command line)
 */
public record SandboxProcess(
    int pid, int ppid, Role role, String grain, String stat, String command) {

  /** Where a process sits in the sandbox's process tree (paper §4.1, Figure 3c). */
  public enum Role {
    /** PID 1 of the sandbox: {@code grainworker.supervisor}. */
    SUPERVISOR,
    /** A grain worker: a child of the supervisor. */
    GRAIN_WORKER,
    /** A grain instance: forked by a grain worker for one event (including its pre-forked standby). */
    GRAIN_INSTANCE,
    /** Anything else (e.g. an orphaned instance whose worker died, now a child of the supervisor). */
    OTHER
  }

  /**
   * Place each process of a sandbox in its tree: the supervisor (the container's PID 1), its grain
   * workers (children running {@code python3 -m grainworker}), and their children, the grain instances.
   */
  public static List<SandboxProcess> classify(List<ProcessEntry> processes) {
    Map<Integer, ProcessEntry> byPid = new HashMap<>();
    processes.forEach(p -> byPid.put(p.pid(), p));
    int supervisor = processes.stream()
        .filter(p -> !byPid.containsKey(p.ppid()) && p.command().contains("grainworker.supervisor"))
        .mapToInt(ProcessEntry::pid)
        .findFirst()
        .orElse(-1);
    Map<Integer, String> workers = new HashMap<>();
    for (ProcessEntry p : processes) {
      if (p.ppid() == supervisor && isGrainWorker(p.command())) {
        workers.put(p.pid(), grainOf(p.command()));
      }
    }
    List<SandboxProcess> out = new ArrayList<>();
    for (ProcessEntry p : processes) {
      Role role;
      String grain = "";
      if (p.pid() == supervisor) {
        role = Role.SUPERVISOR;
      } else if (workers.containsKey(p.pid())) {
        role = Role.GRAIN_WORKER;
        grain = workers.get(p.pid());
      } else if (workers.containsKey(p.ppid())) {
        role = Role.GRAIN_INSTANCE;
        grain = workers.get(p.ppid());
      } else {
        role = Role.OTHER;
      }
      out.add(new SandboxProcess(p.pid(), p.ppid(), role, grain, p.stat(), p.command()));
    }
    return out;
  }

  private static boolean isGrainWorker(String command) {
    return command.contains("-m grainworker ") && !command.contains("grainworker.supervisor");
  }

  /** The value of {@code --grain} in a worker's command line. */
  static String grainOf(String command) {
    String[] args = command.split(" ");
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals("--grain")) {
        return args[i + 1];
      }
    }
    return "";
  }
}
