package sand.contracts.asl;

import com.fasterxml.jackson.databind.JsonNode;

/** RFC 3339 timestamps as the grain worker reads them (a regular expression, then Python's datetime). */
final class AslTimestamps {
  private AslTimestamps() {}

  /** An RFC 3339 timestamp (uppercase T, Z or a numeric offset) that Python's datetime accepts. */
  static boolean isTimestamp(JsonNode value) {
    return value.isTextual() && isTimestamp(value.asText());
  }

  static boolean isTimestamp(String s) {
    int[] cps = s.codePoints().toArray();
    int[] pos = {0};
    int year = number(cps, pos, 4);
    boolean ok = year >= 0 && expect(cps, pos, '-');
    int month = ok ? number(cps, pos, 2) : -1;
    ok &= month >= 0 && expect(cps, pos, '-');
    int day = ok ? number(cps, pos, 2) : -1;
    ok &= day >= 0 && expect(cps, pos, 'T');
    int hour = ok ? number(cps, pos, 2) : -1;
    ok &= hour >= 0 && expect(cps, pos, ':');
    int minute = ok ? number(cps, pos, 2) : -1;
    ok &= minute >= 0 && expect(cps, pos, ':');
    int second = ok ? number(cps, pos, 2) : -1;
    if (!ok || second < 0) {
      return false;
    }
    if (expect(cps, pos, '.')) {
      int digits = 0;
      while (pos[0] < cps.length
          && Character.getType(cps[pos[0]]) == Character.DECIMAL_DIGIT_NUMBER) {
        pos[0]++;
        digits++;
      }
      if (digits == 0) {
        return false;
      }
    }
    if (expect(cps, pos, 'Z')) {
      if (pos[0] != cps.length) {
        return false;
      }
    } else {
      if (!(expect(cps, pos, '+') || expect(cps, pos, '-'))) {
        return false;
      }
      int hours = number(cps, pos, 2);
      boolean colon = hours >= 0 && expect(cps, pos, ':');
      int minutes = colon ? number(cps, pos, 2) : -1;
      if (minutes < 0 || pos[0] != cps.length || hours * 60 + minutes >= 24 * 60) {
        return false;
      }
    }
    int[] days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    boolean leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return year >= 1
        && month >= 1
        && month <= 12
        && day >= 1
        && day <= days[month - 1] + (month == 2 && leap ? 1 : 0)
        && hour <= 23
        && minute <= 59
        && second <= 59;
  }

  /** Exactly {@code count} decimal digits at pos[0] (advanced past them) as a number, or -1. */
  private static int number(int[] cps, int[] pos, int count) {
    if (pos[0] + count > cps.length) {
      return -1;
    }
    int value = 0;
    for (int k = 0; k < count; k++) {
      int cp = cps[pos[0] + k];
      if (Character.getType(cp) != Character.DECIMAL_DIGIT_NUMBER) {
        return -1;
      }
      value = value * 10 + Character.digit(cp, 10);
    }
    pos[0] += count;
    return value;
  }

  private static boolean expect(int[] cps, int[] pos, char c) {
    if (pos[0] < cps.length && cps[pos[0]] == c) {
      pos[0]++;
      return true;
    }
    return false;
  }
}
