package sand.cluster.globaldata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import sand.contracts.DataKind;
import sand.contracts.DataMetadata;

/**
 * The byte string a data item's metadata (size and SHA-256, paper §4.3 data backup flag) is computed
 * over, identical in every language that checks it:
 * <ul>
 *   <li>kv: the value's raw bytes;</li>
 *   <li>counter: the value as a decimal string in ASCII ("-42");</li>
 *   <li>set: the items in {@link #ORDER}, each UTF-8, joined by "\n" (no trailing newline);</li>
 *   <li>map: for each key in {@link #ORDER}: the key in UTF-8, one 0x00 byte, the value's length as
 *       an 8-byte big-endian integer, the value's bytes.</li>
 * </ul>
 * A map or set with no entries does not exist: its metadata is size -1 and sha256 "", like any absent
 * item. {@code size} is the length of the encoding; {@code sha256} its lower-case hex digest.
 */
public final class CanonicalEncoding {

  /**
   * Unicode code point order, which is also the order of the UTF-8 bytes: Python's {@code sorted()}
   * and Cassandra's clustering order for text agree with it (Java's {@code String.compareTo} does not,
   * for characters above U+FFFF).
   */
  public static final Comparator<String> ORDER = CanonicalEncoding::compareCodePoints;

  private CanonicalEncoding() {}

  public static byte[] ofCounter(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }

  public static byte[] ofSet(Collection<String> items) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeSet(items, out);
    return out.toByteArray();
  }

  public static byte[] ofMap(Map<String, byte[]> entries) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    writeMap(entries, out);
    return out.toByteArray();
  }

  // ---- metadata (streamed into the digest: a large map is never copied)

  public static DataMetadata ofKvValue(String name, byte[] value) {
    return value == null
        ? DataMetadata.absent(DataKind.KV, name)
        : new DataMetadata(DataKind.KV, name, value.length, sha256Hex(value));
  }

  public static DataMetadata ofCounterValue(String name, Long value) {
    if (value == null) {
      return DataMetadata.absent(DataKind.COUNTER, name);
    }
    byte[] bytes = ofCounter(value);
    return new DataMetadata(DataKind.COUNTER, name, bytes.length, sha256Hex(bytes));
  }

  public static DataMetadata ofSetItems(String name, Collection<String> items) {
    if (items.isEmpty()) {
      return DataMetadata.absent(DataKind.SET, name);
    }
    DigestStream d = new DigestStream();
    writeSet(items, d);
    return d.metadata(DataKind.SET, name);
  }

  public static DataMetadata ofMapEntries(String name, Map<String, byte[]> entries) {
    if (entries.isEmpty()) {
      return DataMetadata.absent(DataKind.MAP, name);
    }
    DigestStream d = new DigestStream();
    writeMap(entries, d);
    return d.metadata(DataKind.MAP, name);
  }

  public static String sha256Hex(byte[] bytes) {
    return HexFormat.of().formatHex(sha256().digest(bytes));
  }

  // ---- encoding

  private static void writeSet(Collection<String> items, OutputStream out) {
    List<String> sorted = new ArrayList<>(items);
    sorted.sort(ORDER);
    try {
      for (int i = 0; i < sorted.size(); i++) {
        if (i > 0) {
          out.write('\n');
        }
        out.write(sorted.get(i).getBytes(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void writeMap(Map<String, byte[]> entries, OutputStream out) {
    List<String> keys = new ArrayList<>(entries.keySet());
    keys.sort(ORDER);
    byte[] length = new byte[8];
    try {
      for (String key : keys) {
        byte[] value = entries.get(key);
        out.write(key.getBytes(StandardCharsets.UTF_8));
        out.write(0);
        long n = value.length;
        for (int i = 7; i >= 0; i--) {
          length[i] = (byte) n;
          n >>>= 8;
        }
        out.write(length);
        out.write(value);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static int compareCodePoints(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        // Surrogates (D800-DFFF) stand for code points above FFFF, so they sort after E000-FFFF.
        if (x >= 0xD800 && y >= 0xD800) {
          x += x >= 0xE000 ? -0x800 : 0x2000;
          y += y >= 0xE000 ? -0x800 : 0x2000;
        }
        return x - y;
      }
    }
    return a.length() - b.length();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  /** Counts and hashes what is written to it. */
  private static final class DigestStream extends OutputStream {
    private final MessageDigest digest = sha256();
    private long size;

    @Override
    public void write(int b) {
      digest.update((byte) b);
      size++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      digest.update(b, off, len);
      size += len;
    }

    DataMetadata metadata(DataKind kind, String name) {
      return new DataMetadata(kind, name, size, HexFormat.of().formatHex(digest.digest()));
    }
  }
}
