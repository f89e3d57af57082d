package sand.contracts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Topic names of docs/host-agent.md, and reading a grain back from its topic. */
class TopicNamesTest {

  @Test
  void grainResponseAndControlTopics() {
    assertEquals("sand.shop.resize", TopicNames.grainTopic("shop", "resize"));
    assertEquals("sand.shop.v1.resize", TopicNames.grainTopic("shop", "v1.resize"));
    assertEquals("sand.response.fe-1", TopicNames.responseTopic("fe-1"));
    assertEquals("sand.control", TopicNames.CONTROL);
    assertEquals("sand.hostagents", TopicNames.GROUP);
    assertEquals("shop/resize", new GrainRef("shop", "resize").localQueue());
  }

  @Test
  void aGrainTopicSplitsAtTheDotAfterTheApplication() {
    assertEquals(
        Optional.of(new GrainRef("shop", "v1.resize")),
        TopicNames.parseGrainTopic("sand.shop.v1.resize"));
    assertEquals(Optional.empty(), TopicNames.parseGrainTopic("sand.response.fe1"));
    assertEquals(Optional.empty(), TopicNames.parseGrainTopic("sand.control"));
    assertEquals(Optional.empty(), TopicNames.parseGrainTopic("other.shop.resize"));
    assertEquals(Optional.empty(), TopicNames.parseGrainTopic("sand.Shop.resize"));
  }

  @Test
  void badNamesAreRefusedWithTheExpectedForm() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> TopicNames.grainTopic("a.b", "g"));
    assertTrue(e.getMessage().contains(TopicNames.APP_FORM), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TopicNames.grainTopic("response", "g"));
    assertThrows(IllegalArgumentException.class, () -> TopicNames.grainTopic("shop", "a/b"));
    assertThrows(IllegalArgumentException.class, () -> TopicNames.responseTopic(""));
    assertFalse(TopicNames.validApplication("control"));
  }
}
