package sand.contracts;

import java.util.regex.Pattern;

/**
 * The only requirement lines a tenant may give pip (docs/security.md): a package from the package index
 * named with its version constraints, {@code name[extras] op version[, op version...] [; marker]}, plus
 * blank lines and comments, each pin optionally followed by {@code --hash=sha256:<hex>} checks. No other pip options (an option line can name another index, a file to read, or
 * an editable local package whose setup.py would run), no paths, no URLs and no VCS links; with
 * {@code allowUrls} the operator may let {@code name @ https://...} direct references through (pip still
 * reaches only the hosts the operator allows).
 *
 * <p>Both the frontend (at upload, so the developer sees the line at once) and the host agent (before
 * any install) check with this class.
 */
public final class RequirementLines {
  private static final String NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
  private static final String EXTRAS =
      "(?:\\s*\\[\\s*" + NAME + "(?:\\s*,\\s*" + NAME + ")*\\s*\\])?";
  private static final String VERSION = "[A-Za-z0-9*+!_.-]+";
  private static final String SPEC = "(?:===|==|!=|~=|<=|>=|<|>)\\s*" + VERSION;
  private static final String SPECS =
      "(?:\\s*\\(?\\s*" + SPEC + "(?:\\s*,\\s*" + SPEC + ")*\\s*\\)?)?";
  /** Environment markers: names, quoted literals, comparison operators, parentheses, and/or. No paths or URLs. */
  private static final String MARKER = "(?:\\s*;\\s*[A-Za-z0-9_.'\"<>=!~() \\t-]+)?";
  /** pip's per-requirement hash check only makes an install stricter: allowed after a pin. */
  private static final String HASHES = "(?:\\s+--hash=sha(?:256|384|512):[0-9a-fA-F]+)*";

  private static final Pattern PIN = Pattern.compile(NAME + EXTRAS + SPECS + MARKER + HASHES);
  private static final Pattern URL_REFERENCE =
      Pattern.compile(NAME + EXTRAS + "\\s*@\\s*https://[^\\s;#]+" + MARKER);
  /** pip treats a "name" ending like an archive as a file to install, not a package of the index. */
  private static final Pattern ARCHIVE = Pattern.compile("(?i)^" + NAME
      + "?\\.(whl|zip|tar|tgz|tbz|txz|tar\\.gz" + "|tar\\.bz2|tar\\.xz)(?:[\\s;@\\[].*)?$");

  private static final int ECHO = 120;

  private RequirementLines() {}

  /**
   * Check every line of a requirements file; IllegalArgumentException names {@code where} (e.g.
   * "requirements.txt of grain resize"), the line number, the line and what to write instead.
   */
  public static void check(String text, String where, boolean allowUrls) {
    if (text == null) {
      return;
    }
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = stripComment(lines[i]).strip();
      boolean archive = ARCHIVE.matcher(line).matches();
      if (line.isEmpty()
          || (!archive
              && (PIN.matcher(line).matches()
                  || (allowUrls && URL_REFERENCE.matcher(line).matches())))) {
        continue;
      }
      throw new IllegalArgumentException(
          where + " line " + (i + 1) + ": '" + echo(lines[i].strip()) + "' is not "
              + "accepted: " + why(line, allowUrls)
              + "; write a package from the package index with its version, "
              + "e.g. requests==2.32.3 (options, paths, URLs and VCS links are refused)");
    }
  }

  /** Whether the text has anything for pip to install. */
  public static boolean hasRequirements(String text) {
    return text != null
        && text.lines().map(l -> stripComment(l).strip()).anyMatch(l -> !l.isEmpty());
  }

  private static String why(String line, boolean allowUrls) {
    if (line.startsWith("-")) {
      return "pip options are not allowed";
    }
    if (ARCHIVE.matcher(line).matches()) {
      return "an archive file name is a path, not a package of the index";
    }
    if (line.contains("://") || line.contains("@")) {
      return allowUrls
          ? "only 'name @ https://...' direct references are allowed"
          : "URLs and direct references " + "are not allowed on this platform";
    }
    if (line.contains("/") || line.contains("\\") || line.startsWith(".") || line.startsWith("~")) {
      return "paths are not allowed: local packages would be built outside the package index";
    }
    return "it is not 'name[extras] op version'";
  }

  /** pip's rule: '#' starts a comment at the line's start or after whitespace. */
  private static String stripComment(String line) {
    for (int i = 0; i < line.length(); i++) {
      if (line.charAt(i) == '#' && (i == 0 || Character.isWhitespace(line.charAt(i - 1)))) {
        return line.substring(0, i);
      }
    }
    return line;
  }

  private static String echo(String s) {
    return s.length() > ECHO ? s.substring(0, ECHO) + "..." : s;
  }
}
