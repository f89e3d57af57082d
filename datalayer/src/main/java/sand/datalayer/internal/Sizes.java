package sand.datalayer.internal;

/**
 * What the memory quota counts, in bytes: names in UTF-8, values as stored, a counter as 8 bytes, a
 * fixed bookkeeping per item in memory, and for each write waiting for the global layer its own
 * bookkeeping and names. An estimate of the heap that stays close to it whatever the item sizes, so
 * that millions of tiny items cannot take far more heap than the quota says.
 */
public final class Sizes {
  /**
   * Bookkeeping of one item in memory: a key, map, map entry, set, set item or counter (slot, lock,
   * map node, object headers). Measured on a 64-bit JVM with compressed pointers: about 190 bytes for
   * a key-value item, 130 for a map entry, 40 to 80 for a set item.
   */
  public static final long ITEM_OVERHEAD_BYTES = 160;

  /**
   * Bookkeeping of one write waiting for the global layer (queue entry, future, closure, hold): about
   * 270 bytes measured, so that a flood of tiny writes during an outage is bounded by the quota too.
   */
  public static final long WRITE_OVERHEAD_BYTES = 256;

  /** A counter's value. */
  public static final long COUNTER_BYTES = 8;

  private Sizes() {}

  /** Length of {@code s} in UTF-8, without encoding it. */
  public static long of(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /** What an item named {@code name} counts in memory besides its value: bookkeeping plus its name. */
  static long item(String name) {
    return ITEM_OVERHEAD_BYTES + of(name);
  }

  /** What a queued write holds besides its value: bookkeeping plus its names. */
  static long write(String... names) {
    long n = WRITE_OVERHEAD_BYTES;
    for (String name : names) {
      n += of(name);
    }
    return n;
  }
}
