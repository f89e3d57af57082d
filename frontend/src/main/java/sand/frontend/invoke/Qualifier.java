package sand.frontend.invoke;

import java.util.function.DoubleSupplier;
import sand.frontend.internal.ApiException;

/**
 * The part after {@code @} in {@code POST /app/{app}@{qualifier}} (docs/api.md "Invoking an alias or a version"): a
 * version number ({@code hello@3}) or an alias ({@code hello@prod}). Resolved from the {@link AppDirectory} entry,
 * without reading the cluster state. Only the version the application runs can answer: running a second version
 * beside it is not built yet, so a qualifier that leads elsewhere answers 409 saying what to do.
 */
public final class Qualifier {
  /** Separates the application's name from the qualifier; application names never hold it. */
  public static final char SEPARATOR = '@';

  private Qualifier() {}

  /** {@code path} without its qualifier. */
  public static String appName(String path) {
    int at = path.indexOf(SEPARATOR);
    return at < 0 ? path : path.substring(0, at);
  }

  /** The qualifier of {@code path}, null when it names none. */
  public static String of(String path) {
    int at = path.indexOf(SEPARATOR);
    return at < 0 ? null : path.substring(at + 1);
  }

  /**
   * Check that {@code qualifier} (null: none) leads to the version {@code app} runs; for an alias with a canary the
   * version is chosen per request with {@code random}. Throws ApiException 400, 404 or 409.
   */
  public static void check(AppDirectory.Target app, String qualifier, DoubleSupplier random) {
    if (qualifier == null) {
      return;
    }
    String name = app.name();
    int version;
    if (!qualifier.isEmpty() && qualifier.chars().allMatch(c -> c >= '0' && c <= '9')) {
      version = qualifier.length() > 9 ? -1 : Integer.parseInt(qualifier);
      if (version < 1) {
        throw ApiException.badRequest("'" + name + "@" + shorten(qualifier)
            + "': versions are 1, 2, 3, ... (sand versions " + name + ")");
      }
    } else {
      try {
        Alias.checkName(qualifier);
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(
            "after '" + name + "@' comes a version number or an alias: " + e.getMessage());
      }
      Alias alias = app.aliases().get(qualifier);
      if (alias == null) {
        throw ApiException.notFound("application '" + name + "' has no alias '" + qualifier
            + "' (sand alias list " + name + "; sand alias set " + name + " " + qualifier
            + " <version>)");
      }
      for (int v : alias.versions()) {
        if (v != app.version()) {
          throw notRunning(app, "alias '" + qualifier + "' sends requests to version " + v);
        }
      }
      version = alias.choose(random.getAsDouble());
    }
    if (version != app.version()) {
      throw notRunning(app, "version " + version + " was asked for");
    }
  }

  private static ApiException notRunning(AppDirectory.Target app, String what) {
    String name = app.name();
    return ApiException.conflict(what + ", but application '" + name + "' runs version "
        + app.version()
        + " only (running a second version beside it is not built yet): point the alias at version "
        + app.version() + " (sand alias set " + name + " <alias> " + app.version()
        + ") or run the other version (sand rollback " + name + " <version>)");
  }

  private static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
