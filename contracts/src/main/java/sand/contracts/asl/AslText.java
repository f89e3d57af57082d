package sand.contracts.asl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import sand.common.Suggest;

/**
 * How ASL messages are written on both sides: values shown as JSON the way Python's {@code json.dumps(value,
 * ensure_ascii=False)} shows them ({@code [{"a": "b"}, true, null, 1e+20]}), suggestions by {@link Suggest}'s rule
 * (grainworker/asl_text.py does the same), and Python's notion of white space where the grain worker's regular
 * expressions use {@code \s}.
 */
final class AslText {
  private AslText() {}

  /** What reading a path or an intrinsic call found wrong (the grain worker raises ValueError). */
  static final class Problem extends Exception {
    Problem(String message) {
      super(message, null, false, false);
    }
  }

  /** A JSON value as a message shows it. */
  static String show(JsonNode value) {
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString();
  }

  static String show(String text) {
    return show(TextNode.valueOf(text));
  }

  private static void write(JsonNode value, StringBuilder out) {
    if (value == null || value.isNull() || value.isMissingNode()) {
      out.append("null");
    } else if (value.isTextual()) {
      string(value.asText(), out);
    } else if (value.isBoolean()) {
      out.append(value.booleanValue());
    } else if (value.isIntegralNumber()) {
      out.append(value.bigIntegerValue());
    } else if (value.isNumber()) {
      out.append(number(value.doubleValue()));
    } else if (value.isArray()) {
      out.append('[');
      for (int i = 0; i < value.size(); i++) {
        out.append(i > 0 ? ", " : "");
        write(value.get(i), out);
      }
      out.append(']');
    } else {
      out.append('{');
      Iterator<Map.Entry<String, JsonNode>> it = value.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        string(e.getKey(), out);
        out.append(": ");
        write(e.getValue(), out);
        out.append(it.hasNext() ? ", " : "");
      }
      out.append('}');
    }
  }

  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> out.append(c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
      }
    }
    out.append('"');
  }

  /** A float as Python writes it: the shortest digits, in exponent form below 1e-4 and from 1e16. */
  static String number(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "Infinity" : "-Infinity";
    }
    if (d == 0) {
      return 1 / d < 0 ? "-0.0" : "0.0";
    }
    BigDecimal exact = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
    String digits = exact.unscaledValue().toString();
    int exponent = digits.length() - 1 - exact.scale(); // d = digits[0].digits[1:] * 10^exponent
    String sign = d < 0 ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
      String plain = exact.toPlainString();
      return sign + (plain.contains(".") ? plain : plain + ".0");
    }
    String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (Math.abs(exponent) < 10 ? "0" : "")
        + Math.abs(exponent);
  }

  /** {@code  (did you mean "X"?)} by {@link Suggest}'s rule, or "". */
  static String suggest(String word, Iterable<String> choices) {
    return Suggest.nearest(word, choices)
        .map(s -> " (did you mean " + show(s) + "?)")
        .orElse("");
  }

  /** Python's str.isspace for one code point (the white space of Python's \s and str.strip()). */
  static boolean isSpace(int c) {
    return c >= 0x09 && c <= 0x0d
        || c >= 0x1c && c <= 0x1f
        || c == 0x85
        || Character.isSpaceChar(c);
  }

  static String strip(String s) {
    int a = 0;
    int b = s.length();
    while (a < b && isSpace(s.codePointAt(a))) {
      a += Character.charCount(s.codePointAt(a));
    }
    while (b > a && isSpace(s.codePointBefore(b))) {
      b -= Character.charCount(s.codePointBefore(b));
    }
    return s.substring(a, b);
  }

  static String rstrip(String s) {
    int b = s.length();
    while (b > 0 && isSpace(s.codePointBefore(b))) {
      b -= Character.charCount(s.codePointBefore(b));
    }
    return s.substring(0, b);
  }

  static int skipSpace(String s, int i) {
    while (i < s.length() && isSpace(s.codePointAt(i))) {
      i += Character.charCount(s.codePointAt(i));
    }
    return i;
  }

  static List<String> keys(JsonNode obj) {
    List<String> out = new ArrayList<>();
    obj.fieldNames().forEachRemaining(out::add);
    return out;
  }

  static List<Map.Entry<String, JsonNode>> entries(JsonNode obj) {
    List<Map.Entry<String, JsonNode>> out = new ArrayList<>();
    obj.fields().forEachRemaining(out::add);
    return out;
  }
}
