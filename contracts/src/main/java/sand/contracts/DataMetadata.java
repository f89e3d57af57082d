package sand.contracts;

/**
 * What the data backup flag carries (paper §4.3): which item, the size of its value and the SHA-256
 * (lower-case hex) of its {@link CanonicalEncoding canonical encoding}. An absent item has size -1
 * and sha256 "".
 */
public record DataMetadata(DataKind kind, String name, long size, String sha256) {

  /** The metadata of an absent item. */
  public static DataMetadata absent(DataKind kind, String name) {
    return new DataMetadata(kind, name, -1, "");
  }

  public boolean isAbsent() {
    return size < 0;
  }

  /** Same size and digest: the value this metadata describes is the value {@code other} describes. */
  public boolean sameValueAs(DataMetadata other) {
    return size == other.size && sha256.equals(other.sha256);
  }
}
