package sand.hostagent.sandbox;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import sand.contracts.AppEnv;
import sand.contracts.ApplicationSettings;

/**
 * Everything the host agent hands the {@link SandboxManager} to deploy an application on this host.
 *
 * @param appId        the application id (docs/host-agent.md, Names)
 * @param workflowJson the workflow description
 * @param code         resource name -> its code: a {@code py} module or a {@code zip} archive (which may
 *                     hold a top-level requirements.txt and any extra files)
 * @param requirements pip requirements of the whole application ("" for none)
 * @param settings     limits of its instances and its sandbox
 * @param credential   the application's credential for the local bus and data layer (the caller
 *                     grants it on both); the sandbox gets this and nothing else
 * @param socketDir    host folder holding the application's own {@code bus.sock} and {@code data.sock}
 *                     (created by the caller); mounted into the sandbox
 * @param grains       the grains this sandbox hosts; empty = every grain of the workflow
 * @param env          settings.env and the opened secrets, written into the application's folder for the
 *                     supervisor (never into the container's environment, which {@code docker inspect} shows)
 */
public record ApplicationSpec(
    String appId,
    String workflowJson,
    Map<String, Code> code,
    String requirements,
    ApplicationSettings settings,
    String credential,
    Path socketDir,
    Set<String> grains,
    AppEnv env) {

  public static final Pattern APP_ID = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  public static final Pattern RESOURCE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

  /** The kinds of code a resource can be (column {@code application_code.kind}). */
  public enum Kind {
    PY,
    ZIP;

    public static Kind of(String kind) {
      try {
        return valueOf(kind.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException | NullPointerException e) {
        throw new IllegalArgumentException(
            "code kind '" + kind + "' is unknown: use 'py' or 'zip'");
      }
    }
  }

  /** The code of one resource. */
  public record Code(Kind kind, byte[] bytes) {
    public static Code py(String source) {
      return new Code(Kind.PY, source.getBytes(StandardCharsets.UTF_8));
    }

    public static Code zip(byte[] archive) {
      return new Code(Kind.ZIP, archive);
    }

    @Override
    public String toString() {
      return kind.name().toLowerCase(Locale.ROOT) + "(" + bytes.length + " bytes)";
    }
  }

  public ApplicationSpec {
    if (appId == null
        || !APP_ID.matcher(appId).matches()
        || appId.equals("response")
        || appId.equals("control")) {
      throw new IllegalArgumentException("application id '" + appId + "' is invalid: "
          + APP_ID.pattern() + ", not 'response' or 'control' (docs/host-agent.md, Names)");
    }
    if (workflowJson == null || workflowJson.isBlank()) {
      throw new IllegalArgumentException("application " + appId + ": the workflow is empty");
    }
    code = Collections.unmodifiableMap(new LinkedHashMap<>(code));
    for (String r : code.keySet()) {
      if (!RESOURCE.matcher(r).matches()) {
        throw new IllegalArgumentException("application " + appId + ": resource name '" + r
            + "' is invalid: " + RESOURCE.pattern());
      }
    }
    requirements = requirements == null ? "" : requirements;
    settings = settings == null ? ApplicationSettings.defaults() : settings;
    if (credential == null || credential.length() < 16) {
      throw new IllegalArgumentException(
          "application " + appId + ": the credential must be at least 16 characters");
    }
    if (socketDir == null) {
      throw new IllegalArgumentException("application " + appId + ": no socket folder given");
    }
    grains = grains == null ? Set.of() : Set.copyOf(grains);
    env = env == null ? AppEnv.EMPTY : env;
  }

  /** An application with no settings.env and no secrets. */
  public ApplicationSpec(
      String appId,
      String workflowJson,
      Map<String, Code> code,
      String requirements,
      ApplicationSettings settings,
      String credential,
      Path socketDir,
      Set<String> grains) {
    this(appId, workflowJson, code, requirements, settings, credential, socketDir, grains, null);
  }

  /** Printable without the credential. */
  @Override
  public String toString() {
    return "ApplicationSpec[" + appId + ", code=" + code + ", settings=" + settings + ", socketDir="
        + socketDir + ", grains=" + (grains.isEmpty() ? "all" : grains) + ", env=" + env + "]";
  }
}
