package sand.datalayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static sand.datalayer.Layers.bytes;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import sand.cluster.globaldata.CanonicalEncoding;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

class CanonicalEncodingTest {

  @Test
  void counterIsItsDecimalString() {
    assertArrayEquals(bytes("-42"), CanonicalEncoding.ofCounter(-42));
    DataMetadata m = CanonicalEncoding.ofCounterValue("c", 7L);
    assertEquals(1, m.size());
    assertEquals(CanonicalEncoding.sha256Hex(bytes("7")), m.sha256());
  }

  @Test
  void setIsSortedItemsJoinedByNewline() {
    assertArrayEquals(bytes("a\nb\n\u00e9"), CanonicalEncoding.ofSet(Set.of("\u00e9", "b", "a")));
    DataMetadata m = CanonicalEncoding.ofSetItems("s", List.of("b", "a"));
    assertEquals(
        new DataMetadata(DataKind.SET, "s", 3, CanonicalEncoding.sha256Hex(bytes("a\nb"))), m);
  }

  @Test
  void mapIsKeyNulLengthValueInKeyOrder() {
    Map<String, byte[]> m = new LinkedHashMap<>();
    m.put("b", bytes("xyz"));
    m.put("a", new byte[0]);
    byte[] expected = {'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 'b', 0, 0, 0, 0, 0, 0, 0, 0, 3, 'x', 'y', 'z'
    };
    assertArrayEquals(expected, CanonicalEncoding.ofMap(m));
    DataMetadata meta = CanonicalEncoding.ofMapEntries("m", m);
    assertEquals(expected.length, meta.size());
    assertEquals(CanonicalEncoding.sha256Hex(expected), meta.sha256());
  }

  @Test
  void emptyMapsAndSetsAreAbsent() {
    assertTrue(CanonicalEncoding.ofMapEntries("m", Map.of()).isAbsent());
    assertEquals("", CanonicalEncoding.ofSetItems("s", Set.of()).sha256());
    assertEquals(-1, CanonicalEncoding.ofKvValue("k", null).size());
  }

  @Test
  void sha256IsLowerCaseHex() {
    assertEquals(
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        CanonicalEncoding.sha256Hex(new byte[0]));
  }

  @Test
  void orderIsCodePointOrderLikeUtf8Bytes() {
    List<String> s =
        new ArrayList<>(List.of("\uD83D\uDE00", "\uFF5E", "z", "\u00e9", "a", "ab", ""));
    s.sort(CanonicalEncoding.ORDER);
    assertEquals(List.of("", "a", "ab", "z", "\u00e9", "\uFF5E", "\uD83D\uDE00"), s);
  }
}
