package sand.localbus.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import sand.localbus.BusException;

class QueueNameTest {

  @Test
  void grainQueueNamesItsApplication() {
    QueueName q = QueueName.parse("shop/resize-image_v2.1");
    assertEquals("shop", q.application());
    assertFalse(q.hostAgentQueue());
  }

  @Test
  void hostAgentQueueHasNoApplication() {
    QueueName q = QueueName.parse("__ha__");
    assertTrue(q.hostAgentQueue());
    assertNull(q.application());
  }

  @Test
  void longestPartsAreAccepted() {
    String part = "a".repeat(128);
    assertEquals(part, QueueName.parse(part + "/" + part).application());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "shop",
        "shop/",
        "/grain",
        "shop/a/b",
        "_shop/g",
        "shop/-g",
        "sh op/g",
        "shop/g!",
        "__ha__/x",
        "__HA__",
        "shop/é"
      })
  void badNamesAreRefusedWithTheExpectedForm(String name) {
    BusException e = assertThrows(BusException.class, () -> QueueName.parse(name));
    assertEquals(BusException.Code.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
    assertTrue(e.getMessage().contains("'<application>/<grain>'"), e.getMessage());
    assertTrue(e.getMessage().contains("__ha__"), e.getMessage());
  }

  @Test
  void tooLongPartIsRefusedAndEchoedShort() {
    String name = "shop/" + "g".repeat(129);
    assertThrows(BusException.class, () -> QueueName.parse(name));
    String huge = "x".repeat(100_000);
    BusException e = assertThrows(BusException.class, () -> QueueName.parse(huge));
    assertTrue(e.getMessage().length() < 1000, "message echoes the name cut short");
  }

  @Test
  void missingNameIsABadRequest() {
    BusException e = assertThrows(BusException.class, () -> QueueName.parse(null));
    assertEquals(BusException.Code.BAD_REQUEST, e.code());
  }
}
