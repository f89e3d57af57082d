package sand.contracts;

import java.util.Locale;

/** The kinds of data item an application can store; {@link #wireName()} is the name in the IDL. */
public enum DataKind {
  KV,
  MAP,
  SET,
  COUNTER;

  /** "kv", "map", "set" or "counter", as in {@code DataMetadata.kind} of datalayer.thrift. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The kind named {@code wireName}; throws IllegalArgumentException for anything else. */
  public static DataKind parse(String wireName) {
    for (DataKind k : values()) {
      if (k.wireName().equals(wireName)) {
        return k;
      }
    }
    throw new IllegalArgumentException(
        "unknown data kind '" + wireName + "': use kv, map, set or counter");
  }

  @Override
  public String toString() {
    return wireName();
  }
}
