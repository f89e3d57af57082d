package sand.contracts.asl;

import static sand.contracts.asl.AslText.show;
import static sand.contracts.asl.AslText.skipSpace;
import static sand.contracts.asl.AslText.strip;

import java.util.ArrayList;
import java.util.List;
import sand.contracts.asl.AslText.Problem;

/**
 * ASL Paths (the spec's JSONPath subset), read by a hand-written scanner that accepts exactly what the grain
 * worker's regular expression ({@code TOKEN} in grainworker/asl_paths.py) accepts: Python's {@code \s} and
 * {@code \d} are Unicode, as here.
 */
final class AslPaths {
  /** A CPython int() refuses decimal strings with more digits than this (sys.get_int_max_str_digits()). */
  static final int MAX_INT_DIGITS = 4300;

  static final String VARIABLES = "variables (JSONata/Variables) are not supported";
  static final String FILTERS = "JSONPath filter expressions [?(...)] are not supported";

  private AslPaths() {}

  /** A parsed Path: whether it applies to the context object ($$) and whether it selects one node at most. */
  record Parsed(boolean context, boolean definite) {}

  /** One step of a Path: where it ends, whether it is definite, and the integers it holds (checked by the caller). */
  record Token(int end, boolean definite, List<String> integers) {}

  /** Parse a Path: grainworker/asl_paths.py's {@code parse_path}, which says what is wrong. */
  static Parsed parsePath(String path) throws Problem {
    if (!path.startsWith("$")) {
      throw new Problem("a path must begin with '$'");
    }
    if (isVariable(path, 0)) {
      throw new Problem(VARIABLES);
    }
    boolean context = path.startsWith("$$");
    boolean definite = true;
    int i = context ? 2 : 1;
    while (i < path.length()) {
      Token t = token(path, i);
      if (t == null) {
        throw new Problem(pathProblem(path, i));
      }
      for (String integer : t.integers()) {
        checkInt(integer);
      }
      definite &= t.definite();
      i = t.end();
    }
    return new Parsed(context, definite);
  }

  /**
   * One step of a Path at {@code i}, as asl.py's {@code _TOKEN} reads it, or null: {@code .name} (a backslash escapes
   * any character), {@code .*} (before '.', '[' or the end), {@code ['a']}, {@code ["a", 'b']}, {@code [*]},
   * {@code [1:3]}, {@code [0]}, {@code [0, -1]}.
   */
  static Token token(String s, int i) {
    int n = s.length();
    if (i >= n) {
      return null;
    }
    if (s.charAt(i) == '.') {
      int j = i + 1;
      if (j < n
          && s.charAt(j) == '*'
          && (atEnd(s, j + 1) || s.charAt(j + 1) == '.' || s.charAt(j + 1) == '[')) {
        return new Token(j + 1, false, List.of());
      }
      int k = j;
      while (k < n) {
        int c = s.codePointAt(k);
        if (c == '\\') {
          if (k + 1 < n && s.charAt(k + 1) != '\n') {
            k += 1 + Character.charCount(s.codePointAt(k + 1));
            continue;
          }
          break;
        }
        if (".[]@?,:*'\"()".indexOf(c) >= 0) {
          break;
        }
        k += Character.charCount(c);
      }
      return k > j ? new Token(k, true, List.of()) : null;
    }
    if (s.charAt(i) != '[') {
      return null;
    }
    int j = skipSpace(s, i + 1);
    // ['name'] or ['a', "b"]
    int k = quoted(s, j);
    if (k >= 0) {
      int count = 1;
      while (true) {
        int p = skipSpace(s, k);
        if (p < n && s.charAt(p) == ',') {
          int q = quoted(s, skipSpace(s, p + 1));
          if (q >= 0) {
            k = q;
            count++;
            continue;
          }
        }
        break;
      }
      int end = close(s, k);
      if (end >= 0) {
        return new Token(end, count == 1, List.of());
      }
    }
    // [*]
    if (j < n && s.charAt(j) == '*') {
      int end = close(s, j + 1);
      if (end >= 0) {
        return new Token(end, false, List.of());
      }
    }
    // [lo:hi]
    int colon = skipSpace(s, digits(s, sign(s, j)));
    if (colon < n && s.charAt(colon) == ':') {
      int hi = digits(s, sign(s, skipSpace(s, colon + 1)));
      int end = close(s, hi);
      if (end >= 0) {
        List<String> parts = new ArrayList<>();
        for (String part : List.of(s.substring(j, colon), s.substring(colon + 1, hi))) {
          if (!strip(part).isEmpty()) {
            parts.add(part);
          }
        }
        return new Token(end, false, parts);
      }
    }
    // [0] or [0, -1]
    List<String> parts = new ArrayList<>();
    int p = j;
    int e = digits(s, sign(s, p));
    if (e > sign(s, p)) {
      parts.add(s.substring(p, e));
      while (true) {
        int q = skipSpace(s, e);
        if (q < n && s.charAt(q) == ',') {
          int r = skipSpace(s, q + 1);
          int f = digits(s, sign(s, r));
          if (f > sign(s, r)) {
            parts.add(s.substring(q + 1, f));
            e = f;
            continue;
          }
        }
        break;
      }
      int end = close(s, e);
      if (end >= 0) {
        return new Token(end, parts.size() == 1, parts);
      }
    }
    return null;
  }

  /** Python's {@code int(part)} for a part read by token(): refuses "-" and more than 4300 digits. */
  private static void checkInt(String part) throws Problem {
    String t = strip(part);
    String digits = t.startsWith("-") ? t.substring(1) : t;
    if (digits.isEmpty()) {
      throw new Problem(
          "invalid literal for int() with base 10: '" + part + "'"); // Python int()'s words
    }
    int count = digits.codePointCount(0, digits.length());
    if (count > MAX_INT_DIGITS) {
      throw new Problem(tooManyDigits(count));
    }
  }

  static String tooManyDigits(int count) {
    return "Exceeds the limit (" + MAX_INT_DIGITS
        + " digits) for integer string conversion: value has " + count
        + " digits; use sys.set_int_max_str_digits() to increase the limit";
  }

  /** Python's {@code $} without MULTILINE: the end of the text, or just before a newline that ends it. */
  private static boolean atEnd(String s, int p) {
    return p == s.length() || p == s.length() - 1 && s.charAt(p) == '\n';
  }

  /** The end of a quoted name ('...' or "...", a backslash escapes any character but a newline), or -1. */
  static int quoted(String s, int i) {
    int n = s.length();
    if (i >= n || s.charAt(i) != '\'' && s.charAt(i) != '"') {
      return -1;
    }
    char quote = s.charAt(i);
    int k = i + 1;
    while (k < n) {
      int c = s.codePointAt(k);
      if (c == quote) {
        return k + 1;
      }
      if (c == '\\') {
        if (k + 1 >= n || s.charAt(k + 1) == '\n') {
          return -1;
        }
        k += 1 + Character.charCount(s.codePointAt(k + 1));
      } else {
        k += Character.charCount(c);
      }
    }
    return -1;
  }

  /** After optional white space, a ']': the position after it, or -1. */
  private static int close(String s, int i) {
    int p = skipSpace(s, i);
    return p < s.length() && s.charAt(p) == ']' ? p + 1 : -1;
  }

  static int sign(String s, int i) {
    return i < s.length() && s.charAt(i) == '-' ? i + 1 : i;
  }

  /** After the (Unicode, like Python's \d) decimal digits at {@code i}. */
  static int digits(String s, int i) {
    while (i < s.length()
        && Character.getType(s.codePointAt(i)) == Character.DECIMAL_DIGIT_NUMBER) {
      i += Character.charCount(s.codePointAt(i));
    }
    return i;
  }

  private static String pathProblem(String path, int i) {
    String rest = path.substring(i);
    if (rest.startsWith("..")) {
      return "recursive descent '..' is not supported";
    }
    if (rest.startsWith("[?") || rest.startsWith("[(")) {
      return FILTERS;
    }
    int at = rest.startsWith(".") ? 1 : 0;
    if (at < rest.length()) {
      String c = new String(Character.toChars(rest.codePointAt(at)));
      if ("]@?,:*'\"()\\".contains(c)) {
        return show(c)
            + " in a field name must be escaped with a backslash or the name written as ['name']";
      }
    }
    return "cannot read " + show(rest) + "; write .name, ['name'], [0], [-1], [*], [0,1] or [1:3]";
  }

  /** "$name" or "$$name": AWS's variables, not a Path, refused by name rather than as unreadable. */
  static boolean isVariable(String s, int i) {
    int j = s.startsWith("$$", i) ? i + 2 : s.startsWith("$", i) ? i + 1 : -1;
    if (j < 0 || j >= s.length()) {
      return false;
    }
    char c = s.charAt(j);
    return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_';
  }
}
