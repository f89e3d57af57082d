package sand.common;

import java.util.Optional;

/**
 * The project's one "did you mean" rule: the first choice nearest to a word by edit distance, if that distance is
 * at most 3 and smaller than the word's length (so that "B" does not suggest "A"). Distances count code points.
 * The grain worker's ASL validator applies the same rule (grainworker/asl_text.py {@code nearest}), so that both
 * languages suggest the same names.
 */
public final class Suggest {
  /** The largest edit distance a suggestion may have. */
  public static final int MAX_DISTANCE = 3;

  private Suggest() {}

  /** The choice to suggest for {@code word}, in the choices' order on ties; empty when none is near enough. */
  public static Optional<String> nearest(String word, Iterable<String> choices) {
    String best = null;
    int bestDistance = 0;
    for (String choice : choices) {
      int d = distance(choice, word);
      if (best == null || d < bestDistance) {
        best = choice;
        bestDistance = d;
      }
    }
    boolean near = best != null
        && bestDistance <= MAX_DISTANCE
        && bestDistance < word.codePointCount(0, word.length());
    return near ? Optional.of(best) : Optional.empty();
  }

  /** Edit distance (insertions, deletions, substitutions) in code points. */
  public static int distance(String x, String y) {
    int[] a = x.codePoints().toArray();
    int[] b = y.codePoints().toArray();
    int[] prev = new int[b.length + 1];
    int[] cur = new int[b.length + 1];
    for (int j = 0; j <= b.length; j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length; i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length; j++) {
        cur[j] = Math.min(
            Math.min(cur[j - 1], prev[j]) + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length];
  }
}
