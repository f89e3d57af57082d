package sand.contracts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import sand.common.ConfigDef;

/**
 * An application's settings (the JSON of {@code applications.settings}, docs/host-agent.md): limits of
 * its grain instances and of its sandbox.
 *
 * @param timeoutS         seconds a grain instance may run before it is killed
 * @param instanceMemoryMb address space a grain instance may map beyond its worker's (0 = no limit)
 * @param concurrency      most grain instances of one grain running at once
 * @param sandboxMemoryMb  memory limit of the whole sandbox (no swap)
 * @param sandboxCpus      CPU quota of the sandbox, in CPUs
 * @param sandboxPids      most processes in the sandbox (supervisor, workers, instances)
 * @param sessionTimeoutS  seconds a session function instance may run before it is killed
 * @param sessionFunctionsMax most session function instances of the application at once on one host
 */
public record ApplicationSettings(
    double timeoutS,
    int instanceMemoryMb,
    int concurrency,
    int sandboxMemoryMb,
    double sandboxCpus,
    int sandboxPids,
    double sessionTimeoutS,
    int sessionFunctionsMax) {

  private static final ObjectMapper JSON = new ObjectMapper();
  /** The settings' keys, defaults and bounds: {@code contracts/rules.json}, which the grain worker reads too. */
  private static final Map<String, Rules.Setting> RULES = Rules.APPLICATION_SETTINGS;

  public ApplicationSettings {
    check("timeout_s", timeoutS);
    check("instance_memory_mb", instanceMemoryMb);
    check("concurrency", concurrency);
    check("sandbox_memory_mb", sandboxMemoryMb);
    check("sandbox_cpus", sandboxCpus);
    check("sandbox_pids", sandboxPids);
    check("session_timeout_s", sessionTimeoutS);
    check("session_functions_max", sessionFunctionsMax);
  }

  /** The settings before sessions (docs/sessions.md): the session limits at their defaults. */
  public ApplicationSettings(
      double timeoutS,
      int instanceMemoryMb,
      int concurrency,
      int sandboxMemoryMb,
      double sandboxCpus,
      int sandboxPids) {
    this(
        timeoutS,
        instanceMemoryMb,
        concurrency,
        sandboxMemoryMb,
        sandboxCpus,
        sandboxPids,
        dflt("session_timeout_s"),
        (int) dflt("session_functions_max"));
  }

  /**
   * What a sandbox needs at the least: its supervisor and room for running instances, plus each grain's worker,
   * forked from the supervisor and sharing its pages (measured ~3 MB per idle grain by benchmarks/serverlessbench.py
   * TC3; what a grain's code imports comes on top). A deploy that cannot fit fails at once with these numbers.
   */
  public static final int SANDBOX_BASE_MB = 48;

  public static final int GRAIN_WORKER_MB = 3;

  public int memoryNeededMb(int grains) {
    return SANDBOX_BASE_MB + GRAIN_WORKER_MB * grains;
  }

  /** The supervisor, a worker and a standby per grain, and a few instances. */
  public static int pidsNeeded(int grains) {
    return 8 + 2 * grains;
  }

  /** Refuse a sandbox of {@code grains} grains these settings cannot hold, naming what it needs and the limit. */
  public void requireFits(int grains) {
    int need = memoryNeededMb(grains);
    if (need > sandboxMemoryMb) {
      throw new IllegalArgumentException(
          "a sandbox of " + grains + " grains needs at least " + need + " MB ("
              + SANDBOX_BASE_MB + " MB + " + GRAIN_WORKER_MB
              + " MB per grain worker; what the grains import comes on "
              + "top) but sandbox_memory_mb is " + sandboxMemoryMb
              + ": raise sandbox_memory_mb or split the workflow");
    }
    if (pidsNeeded(grains) > sandboxPids) {
      throw new IllegalArgumentException("a sandbox of " + grains + " grains needs at least "
          + pidsNeeded(grains)
          + " processes (a grain worker and a standby per grain) but sandbox_pids is " + sandboxPids
          + ": raise sandbox_pids or split the workflow");
    }
  }

  /** The declared defaults (contracts/rules.json). */
  public static ApplicationSettings defaults() {
    return new ApplicationSettings(
        dflt("timeout_s"),
        (int) dflt("instance_memory_mb"),
        (int) dflt("concurrency"),
        (int) dflt("sandbox_memory_mb"),
        dflt("sandbox_cpus"),
        (int) dflt("sandbox_pids"),
        dflt("session_timeout_s"),
        (int) dflt("session_functions_max"));
  }

  private static double dflt(String key) {
    return RULES.get(key).defaultValue();
  }

  /** Parse the settings JSON; missing keys take their defaults, unknown keys and bad values are refused. */
  public static ApplicationSettings fromJson(String json) {
    if (json == null || json.isBlank()) {
      return defaults();
    }
    JsonNode n;
    try {
      n = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "application settings are not valid JSON: " + e.getOriginalMessage());
    }
    if (n == null || !n.isObject()) {
      throw new IllegalArgumentException(
          "application settings must be a JSON object, e.g. {\"timeout_s\": 60}");
    }
    n.fieldNames().forEachRemaining(k -> {
      if (!Rules.APPLICATION_SETTING_KEYS.contains(k)) {
        throw new IllegalArgumentException(
            "unknown application setting '" + k + "'; known: " + Rules.APPLICATION_SETTING_KEYS);
      }
    });
    AppEnv.parseEnv(
        n.get("env")); // checked here so a bad env is refused at PUT; AppEnv reads it at deploy
    ScaleToZero.parse(n); // checked here too; the host agent reads it
    ElasticPlacement.parse(n); // the frontend and the scheduler read it
    ApplicationSettings d = defaults();
    return new ApplicationSettings(
        num(n, "timeout_s", d.timeoutS),
        (int) num(n, "instance_memory_mb", d.instanceMemoryMb),
        (int) num(n, "concurrency", d.concurrency),
        (int) num(n, "sandbox_memory_mb", d.sandboxMemoryMb),
        num(n, "sandbox_cpus", d.sandboxCpus),
        (int) num(n, "sandbox_pids", d.sandboxPids),
        num(n, "session_timeout_s", d.sessionTimeoutS),
        (int) num(n, "session_functions_max", d.sessionFunctionsMax));
  }

  private static double num(JsonNode n, String key, double dflt) {
    JsonNode v = n.get(key);
    if (v == null || v.isNull()) {
      return dflt;
    }
    if (!v.isNumber()) {
      throw new IllegalArgumentException(
          "application setting " + key + "=" + v + " must be a number");
    }
    return v.asDouble();
  }

  private static void check(String key, double value) {
    Rules.Setting rule = RULES.get(key);
    if (!rule.accepts(value)) {
      throw new IllegalArgumentException("application setting " + key + "=" + ConfigDef.plain(value)
          + " is invalid: must be " + rule.mustBe());
    }
  }
}
