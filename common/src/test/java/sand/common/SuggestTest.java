package sand.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The did-you-mean rule; grainworker/asl_text.py's {@code nearest} must give the same answers (tests/test_asl.py). */
class SuggestTest {
  @Test
  void theFirstNearestChoiceWithinThreeEditsAndFewerThanTheWordsLength() {
    assertEquals(Optional.of("Next"), Suggest.nearest("Nxt", List.of("End", "Next", "Type")));
    assertEquals(
        Optional.of("NumericEquals"),
        Suggest.nearest("NumericEqual", List.of("StringEquals", "NumericEquals")));
    assertEquals(
        Optional.empty(), Suggest.nearest("B", List.of("A")), "one edit is the whole word");
    assertEquals(Optional.empty(), Suggest.nearest("Lambda", List.of("Task", "Choice", "Pass")));
    assertEquals(Optional.of("ab"), Suggest.nearest("abc", List.of("ab", "bc")), "ties: the first");
    assertEquals(1, Suggest.distance("\uD83D\uDE00x", "x"), "code points, not chars");
  }
}
