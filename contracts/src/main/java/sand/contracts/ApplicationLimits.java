package sand.contracts;

import static sand.common.ConfigDef.Type.BOOLEAN;
import static sand.common.ConfigDef.Type.DOUBLE;
import static sand.common.ConfigDef.Type.INT;
import static sand.common.ConfigDef.above;
import static sand.common.ConfigDef.between;

import java.util.Map;
import sand.common.ConfigDef;
import sand.common.ConfigDef.Config;

/**
 * The operator's caps on what an application may ask for (docs/security.md): every per-application
 * setting has one, so a tenant cannot size its own sandbox past what the operator allows. Declared once as
 * the {@code limits} component ({@code SAND_LIMITS_<KEY>}); the frontend checks them when a developer
 * saves an application (400 naming the cap), the host agent again before it deploys (the frontend's and
 * the agent's environments could differ: the stricter one wins).
 *
 * @param timeoutSMax          most seconds a grain instance may be given ({@code timeout_s})
 * @param instanceMemoryMbMax  most MB of address space per grain instance ({@code instance_memory_mb}; 0 there
 *                             means "bounded only by the sandbox" and is allowed)
 * @param concurrencyMax       most instances of one grain at once ({@code concurrency})
 * @param sandboxMemoryMbMax   most memory of one sandbox ({@code sandbox_memory_mb})
 * @param sandboxCpusMax       most CPUs of one sandbox ({@code sandbox_cpus})
 * @param sandboxPidsMax       most processes in one sandbox ({@code sandbox_pids})
 * @param grainsMax            most grains in one application's workflow
 * @param hostsMax             most hosts one application runs on; 0 = no cap (every live host)
 * @param hostsChoose          whether developers may name the hosts their application runs on
 * @param requirementsAllowUrls whether requirement lines may be {@code name @ https://...} direct references
 */
public record ApplicationLimits(
    double timeoutSMax,
    int instanceMemoryMbMax,
    int concurrencyMax,
    int sandboxMemoryMbMax,
    double sandboxCpusMax,
    int sandboxPidsMax,
    int grainsMax,
    int hostsMax,
    boolean hostsChoose,
    boolean requirementsAllowUrls) {

  public static final String COMPONENT = "limits";

  public static final ConfigDef DEF = new ConfigDef(COMPONENT)
      .define(
          "timeout.s.max",
          DOUBLE,
          300.0,
          above(0, 86_400),
          "most seconds an application may let a grain instance run (setting timeout_s)")
      .define(
          "instance.memory.mb.max",
          INT,
          2048,
          between(1, 1 << 20),
          "most MB of address space an application may give one grain instance (setting instance_memory_mb)")
      .define(
          "concurrency.max",
          INT,
          64,
          between(1, 10_000),
          "most instances of one grain running at once an application may ask for (setting concurrency)")
      .define(
          "sandbox.memory.mb.max",
          INT,
          2048,
          between(16, 1 << 20),
          "most memory an application's sandbox may have on one host (setting sandbox_memory_mb)")
      .define(
          "sandbox.cpus.max",
          DOUBLE,
          2.0,
          above(0, 1024),
          "most CPUs an application's sandbox may use on one host (setting sandbox_cpus)")
      .define(
          "sandbox.pids.max",
          INT,
          1024,
          between(8, 1 << 22),
          "most processes an application's sandbox may hold (setting sandbox_pids)")
      .define(
          "grains.max",
          INT,
          128,
          between(1, 100_000),
          "most grains (functions) in one application's workflow")
      .define(
          "hosts.max",
          INT,
          0,
          between(0, 100_000),
          "most hosts one application runs on; 0 = no cap (every live host, or the hosts it names)")
      .define(
          "hosts.choose",
          BOOLEAN,
          true,
          "developers may name the hosts their application runs on (settings.hosts); false = the platform places it")
      .define(
          "requirements.allow.urls",
          BOOLEAN,
          false,
          "requirement lines may be 'name @ https://...' direct "
              + "references (installs still reach only the allowed package index hosts); options, paths and other URLs "
              + "are always refused");

  /** Check a cross-field rule at start-up: the defaults an application gets must be within the caps. */
  public ApplicationLimits {
    ApplicationSettings d = ApplicationSettings.defaults();
    String tooLow = d.timeoutS() > timeoutSMax
        ? "timeout.s.max < " + d.timeoutS()
        : d.concurrency() > concurrencyMax
            ? "concurrency.max < " + d.concurrency()
            : d.sandboxMemoryMb() > sandboxMemoryMbMax
                ? "sandbox.memory.mb.max < " + d.sandboxMemoryMb()
                : d.sandboxCpus() > sandboxCpusMax
                    ? "sandbox.cpus.max < " + d.sandboxCpus()
                    : d.sandboxPids() > sandboxPidsMax
                        ? "sandbox.pids.max < " + d.sandboxPids()
                        : null;
    if (tooLow != null) {
      throw new ConfigDef.ConfigException(COMPONENT + ": " + tooLow
          + ", the default every application gets; " + "raise the cap to at least the default");
    }
  }

  /** The caps from the environment ({@code SAND_LIMITS_*}). */
  public static ApplicationLimits fromEnvironment(Map<String, String> env) {
    return from(DEF.parse(env, Map.of()));
  }

  /** Every cap at its default. */
  public static ApplicationLimits defaults() {
    return fromEnvironment(Map.of());
  }

  public static ApplicationLimits from(Config c) {
    return new ApplicationLimits(
        c.getDouble("timeout.s.max"),
        c.getInt("instance.memory.mb.max"),
        c.getInt("concurrency.max"),
        c.getInt("sandbox.memory.mb.max"),
        c.getDouble("sandbox.cpus.max"),
        c.getInt("sandbox.pids.max"),
        c.getInt("grains.max"),
        c.getInt("hosts.max"),
        c.getBoolean("hosts.choose"),
        c.getBoolean("requirements.allow.urls"));
  }

  /**
   * Check an application's settings, grain count and named hosts against the caps; IllegalArgumentException
   * names the first setting above its cap, the cap's key and its environment variable, or what a sandbox of
   * that many grains needs and does not get ({@link ApplicationSettings#requireFits}).
   */
  public void check(ApplicationSettings s, int grains, int namedHosts) {
    cap("timeout_s", s.timeoutS(), timeoutSMax, "timeout.s.max");
    cap("instance_memory_mb", s.instanceMemoryMb(), instanceMemoryMbMax, "instance.memory.mb.max");
    cap("concurrency", s.concurrency(), concurrencyMax, "concurrency.max");
    cap("sandbox_memory_mb", s.sandboxMemoryMb(), sandboxMemoryMbMax, "sandbox.memory.mb.max");
    cap("sandbox_cpus", s.sandboxCpus(), sandboxCpusMax, "sandbox.cpus.max");
    cap("sandbox_pids", s.sandboxPids(), sandboxPidsMax, "sandbox.pids.max");
    if (grains > grainsMax) {
      throw new IllegalArgumentException(
          "the workflow has " + grains + " grains, above the operator's cap of "
              + grainsMax + " per application (limits grains.max, " + DEF.envName("grains.max")
              + "): split it into several applications, or ask the operator");
    }
    s.requireFits(grains);
    if (namedHosts > 0 && !hostsChoose) {
      throw new IllegalArgumentException(
          "settings.hosts: this platform places applications itself (limits "
              + "hosts.choose=false, " + DEF.envName("hosts.choose")
              + "); remove 'hosts' from the settings");
    }
    if (hostsMax > 0 && namedHosts > hostsMax) {
      throw new IllegalArgumentException("settings.hosts names " + namedHosts
          + " hosts, above the operator's cap " + "of " + hostsMax + " (limits hosts.max, "
          + DEF.envName("hosts.max") + "); name at most " + hostsMax);
    }
  }

  private static void cap(String setting, double value, double max, String key) {
    if (value > max) {
      throw new IllegalArgumentException(
          "application setting " + setting + "=" + fmt(value) + " is above the "
              + "operator's cap " + fmt(max) + " (limits " + key + ", " + DEF.envName(key)
              + "); ask for at most "
              + fmt(max));
    }
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
  }
}
