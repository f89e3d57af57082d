package sand.contracts.asl;

import static sand.contracts.asl.AslPaths.MAX_INT_DIGITS;
import static sand.contracts.asl.AslPaths.VARIABLES;
import static sand.contracts.asl.AslPaths.digits;
import static sand.contracts.asl.AslPaths.isVariable;
import static sand.contracts.asl.AslPaths.parsePath;
import static sand.contracts.asl.AslPaths.quoted;
import static sand.contracts.asl.AslPaths.sign;
import static sand.contracts.asl.AslPaths.token;
import static sand.contracts.asl.AslPaths.tooManyDigits;
import static sand.contracts.asl.AslText.rstrip;
import static sand.contracts.asl.AslText.show;
import static sand.contracts.asl.AslText.skipSpace;
import static sand.contracts.asl.AslText.strip;
import static sand.contracts.asl.AslText.suggest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.List;
import sand.contracts.asl.AslPaths.Token;
import sand.contracts.asl.AslText.Problem;

/**
 * ASL Intrinsic Functions as the validator reads them: the call's shape, as grainworker/asl_intrinsics.py's
 * regular expressions accept it, the signatures of contracts/asl.json, and the kinds of literal arguments (so that
 * {@code States.MathAdd(1, '-1')} is refused at upload).
 */
final class AslIntrinsics {
  /** Intrinsic calls nested deeper than this are refused (Python would fail with a RecursionError). */
  static final int MAX_CALL_DEPTH = 100;

  private static final ObjectMapper JSON = new ObjectMapper();

  private AslIntrinsics() {}

  /** Check an intrinsic function call such as {@code States.Format('{}', $.x)}: grainworker/asl_intrinsics.py's {@code parse_intrinsic}. */
  static void parseIntrinsic(String text) throws Problem {
    int pos = parseCall(text, 0, 0);
    String after = text.substring(pos);
    if (!strip(after).isEmpty()) {
      throw new Problem("unexpected text after the call: " + show(after));
    }
  }

  /**
   * Parse {@code States.Name(arg, ...)} at {@code pos}; returns the position after it. Arguments: 'strings'
   * (escapes \' \{ \} \\), numbers, null, true, false, Paths and nested calls.
   */
  private static int parseCall(String text, int pos, int depth) throws Problem {
    if (depth >= MAX_CALL_DEPTH) {
      throw new Problem("intrinsic function calls nested more than " + MAX_CALL_DEPTH + " deep");
    }
    int n = text.length();
    int start = skipSpace(text, pos);
    int end = callName(text, start);
    int open = skipSpace(text, end);
    if (end == start || open >= n || text.charAt(open) != '(') {
      throw new Problem("expected an intrinsic function call such as States.Format('{}', $.x)");
    }
    String name = text.substring(start, end);
    pos = open + 1;
    if (!AslSpec.INTRINSICS.containsKey(name)) {
      throw new Problem(
          "unknown intrinsic function " + show(name) + suggest(name, AslSpec.INTRINSICS.keySet()));
    }
    int args = 0;
    int p = skipSpace(text, pos);
    boolean closed = p < n && text.charAt(p) == ')';
    if (closed) {
      pos = p + 1;
    }
    while (!closed) {
      int a = skipSpace(text, pos);
      int q;
      if ((q = quoted(text, a)) >= 0 && text.charAt(a) == '\'') {
        String inner = text.substring(a + 1, q - 1);
        for (int k = 0; k < inner.length(); k++) {
          if (inner.charAt(k) == '\\') {
            if (k + 1 < inner.length() && "'{}\\".indexOf(inner.charAt(k + 1)) >= 0) {
              k++;
            } else {
              throw new Problem("open escape in a string: only \\' \\{ \\} and \\\\ are allowed");
            }
          }
        }
        checkArgument(name, args, TextNode.valueOf(inner.replaceAll("\\\\(.)", "$1")));
        pos = q;
      } else if ((q = literal(text, a)) >= 0) {
        checkJsonLiteral(text.substring(a, q));
        checkArgument(name, args, parse(text.substring(a, q)));
        pos = q;
      } else if (a < n && text.charAt(a) == '$') {
        if (isVariable(text, a)) {
          throw new Problem(VARIABLES);
        }
        q = a + 1;
        if (q < n && text.charAt(q) == '$') {
          q++;
        }
        for (Token t = token(text, q); t != null; t = token(text, q)) {
          q = t.end();
        }
        parsePath(rstrip(text.substring(a, q)));
        pos = q;
      } else if ((q = callName(text, a)) > a
          && skipSpace(text, q) < n
          && text.charAt(skipSpace(text, q)) == '(') {
        pos = parseCall(text, a, depth + 1);
      } else {
        String rest = strip(text.substring(pos));
        throw new Problem(
            rest.startsWith("'")
                ? "unterminated string: close it with '"
                : "cannot read " + show(rest));
      }
      args++;
      int sep = skipSpace(text, pos);
      if (sep >= n || text.charAt(sep) != ',' && text.charAt(sep) != ')') {
        throw new Problem("expected ',' or ')' after argument " + args + " of " + name + ", not "
            + show(text.substring(pos)));
      }
      closed = text.charAt(sep) == ')';
      pos = sep + 1;
    }
    AslSpec.Signature signature = AslSpec.INTRINSICS.get(name);
    int low = signature.args().size();
    boolean unbounded = signature.rest() != null;
    int high = low + signature.optional().size();
    if (args < low || !unbounded && args > high) {
      String count =
          !unbounded && low == high ? "" + low : unbounded ? low + "+" : low + "-" + high;
      throw new Problem(name + " takes " + count + " argument(s), got " + args);
    }
    return pos;
  }

  /** After a function name ([A-Za-z0-9._]+) at {@code i}; {@code i} itself when there is none. */
  private static int callName(String s, int i) {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c >= 'A' && c <= 'Z'
          || c >= 'a' && c <= 'z'
          || c >= '0' && c <= '9'
          || c == '.'
          || c == '_')) {
        break;
      }
      i++;
    }
    return i;
  }

  /**
   * A literal argument at {@code i} (a number with Unicode digits, as Python's \d, or null, true, false) followed
   * by optional white space and ',' or ')': the position after it, or -1.
   */
  private static int literal(String s, int i) {
    int end = -1;
    for (String word : List.of("null", "true", "false")) {
      if (s.startsWith(word, i)) {
        end = i + word.length();
      }
    }
    if (end < 0) {
      int k = digits(s, sign(s, i));
      if (k == sign(s, i)) {
        return -1;
      }
      if (k < s.length() && s.charAt(k) == '.' && digits(s, k + 1) > k + 1) {
        k = digits(s, k + 1);
      }
      if (k < s.length() && (s.charAt(k) == 'e' || s.charAt(k) == 'E')) {
        int m = k + 1 < s.length() && (s.charAt(k + 1) == '+' || s.charAt(k + 1) == '-')
            ? k + 2
            : k + 1;
        if (digits(s, m) > m) {
          k = digits(s, m);
        }
      }
      end = k;
    }
    int p = skipSpace(s, end);
    return p < s.length() && (s.charAt(p) == ',' || s.charAt(p) == ')') ? end : -1;
  }

  /** What Python's json.loads says of a literal read by literal(), which may hold non-ASCII digits or "01". */
  private static void checkJsonLiteral(String lit) throws Problem {
    if (lit.equals("null") || lit.equals("true") || lit.equals("false")) {
      return;
    }
    int k = 0;
    int n = lit.length();
    if (k < n && lit.charAt(k) == '-') {
      k++;
    }
    int intStart = k;
    if (k < n && lit.charAt(k) == '0') {
      k++;
    } else if (k < n && lit.charAt(k) >= '1' && lit.charAt(k) <= '9') {
      while (k < n && lit.charAt(k) >= '0' && lit.charAt(k) <= '9') {
        k++;
      }
    } else {
      throw new Problem("Expecting value: line 1 column 1 (char 0)");
    }
    int intEnd = k;
    boolean integer = true;
    if (k + 1 < n && lit.charAt(k) == '.' && asciiDigit(lit.charAt(k + 1))) {
      k += 2;
      while (k < n && asciiDigit(lit.charAt(k))) {
        k++;
      }
      integer = false;
    }
    if (k < n && (lit.charAt(k) == 'e' || lit.charAt(k) == 'E')) {
      int m = k + 1 < n && (lit.charAt(k + 1) == '+' || lit.charAt(k + 1) == '-') ? k + 2 : k + 1;
      if (m < n && asciiDigit(lit.charAt(m))) {
        k = m;
        while (k < n && asciiDigit(lit.charAt(k))) {
          k++;
        }
        integer = false;
      }
    }
    if (k < n) {
      throw new Problem("Extra data: line 1 column " + (k + 1) + " (char " + k + ")");
    }
    if (integer && intEnd - intStart > MAX_INT_DIGITS) {
      throw new Problem(tooManyDigits(intEnd - intStart));
    }
  }

  private static boolean asciiDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** A literal argument must be of the kind the function takes there (contracts/asl.json's signatures). */
  private static void checkArgument(String name, int n, JsonNode value) throws Problem {
    String kind = AslSpec.INTRINSICS.get(name).kind(n);
    boolean ok = switch (kind) {
      case "string" -> value.isTextual();
      case "number" -> value.isNumber();
      case "integer" ->
        value.isIntegralNumber()
            || value.isNumber()
                && value.doubleValue() == Math.rint(value.doubleValue())
                && !Double.isInfinite(value.doubleValue());
      case "array" -> value.isArray();
      case "object" -> value.isObject();
      case "boolean" -> value.isBoolean();
      default -> true;
    };
    if (!ok) {
      throw new Problem("argument " + (n + 1) + " of " + name + " must be "
          + AslSpec.ARGUMENT_KINDS.get(kind) + ", got " + show(value));
    }
  }

  private static JsonNode parse(String literal) {
    try {
      return JSON.readTree(literal);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("checked by checkJsonLiteral: " + literal, e);
    }
  }
}
