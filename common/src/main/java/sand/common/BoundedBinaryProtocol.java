package sand.common;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TList;
import org.apache.thrift.protocol.TMap;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TProtocolException;
import org.apache.thrift.protocol.TSet;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * The server side of the binary protocol, wire compatible with every client, that allocates nothing big
 * for a caller it does not know. {@code TBinaryProtocol} allocates a string's declared length before the
 * bytes arrive, and our calls check their credential only once every argument is read; here:
 *
 * <ul>
 *   <li>a method name is at most {@link ThriftLimits#NAME_MAX_BYTES};
 *   <li>the arguments must begin with field 1, a string: the credential (our IDL puts it first in every
 *       call, and generated clients write fields in order). Until it is read and known, strings are capped
 *       at {@link ThriftLimits#STRANGER_STRING_MAX_BYTES} and containers at
 *       {@link ThriftLimits#STRANGER_CONTAINER_MAX}; a call with an unknown credential keeps those caps,
 *       so it is still answered UNAUTHORIZED by the service when it is small, and cut when it is not;
 *   <li>after a known credential, the endpoint's caps ({@link ThriftLimits});
 *   <li>a large string is read in chunks into a buffer that grows as bytes arrive, so a length declared
 *       but never sent holds nothing; what is held counts against the process's {@link ReadBudget}
 *       until the call is read whole.
 * </ul>
 * A cap exceeded is a protocol error: the server closes the connection.
 */
public final class BoundedBinaryProtocol extends TBinaryProtocol {
  /** Read in steps of this much: what a declared but unsent length can make us allocate at most. */
  static final int CHUNK_BYTES = 64 * 1024;

  private final Admission admission;
  private final ThriftLimits limits;
  private int depth;
  private boolean credentialFieldDue;
  private boolean credentialNext;
  private boolean trusted;

  public BoundedBinaryProtocol(TTransport transport, Admission admission, ThriftLimits limits) {
    super(transport);
    this.admission = admission;
    this.limits = limits;
  }

  @Override
  public TMessage readMessageBegin() throws TException {
    admission.giveBackAll(); // the last call was read whole
    depth = 0;
    trusted = false;
    credentialNext = false;
    credentialFieldDue = false;
    int size = readI32();
    String name;
    byte type;
    if (size < 0) {
      if ((size & VERSION_MASK) != VERSION_1) {
        throw new TProtocolException(
            TProtocolException.BAD_VERSION, "bad version in readMessageBegin");
      }
      type = (byte) (size & 0x000000ff);
      name = utf8(readBytes(readI32(), ThriftLimits.NAME_MAX_BYTES, "a method name"));
    } else {
      if (strictRead_) {
        throw new TProtocolException(
            TProtocolException.BAD_VERSION, "missing version in readMessageBegin");
      }
      name = utf8(readBytes(size, ThriftLimits.NAME_MAX_BYTES, "a method name"));
      type = readByte();
    }
    int seqid = readI32();
    credentialFieldDue = true;
    return new TMessage(name, type, seqid);
  }

  @Override
  public void readMessageEnd() throws TException {
    super.readMessageEnd();
    admission.giveBackAll();
  }

  @Override
  public TStruct readStructBegin() throws TException {
    depth++;
    return super.readStructBegin();
  }

  @Override
  public void readStructEnd() throws TException {
    depth--;
    super.readStructEnd();
  }

  @Override
  public TField readFieldBegin() throws TException {
    TField f = super.readFieldBegin();
    if (credentialFieldDue && depth == 1) {
      credentialFieldDue = false;
      // Without it the call stays a stranger's: the service answers it UNAUTHORIZED if it is small.
      credentialNext = f.id == 1 && f.type == TType.STRING;
    }
    return f;
  }

  @Override
  public String readString() throws TException {
    if (credentialNext) {
      credentialNext = false;
      String credential =
          utf8(readBytes(readI32(), ThriftLimits.STRANGER_STRING_MAX_BYTES, "a credential"));
      trusted = admission.admit(credential);
      return credential;
    }
    return utf8(readBytes(readI32(), stringCap(), "a string"));
  }

  @Override
  public String readStringBody(int size) throws TException {
    return utf8(readBytes(size, stringCap(), "a string"));
  }

  @Override
  public ByteBuffer readBinary() throws TException {
    if (credentialNext) {
      return ByteBuffer.wrap(readString().getBytes(StandardCharsets.UTF_8));
    }
    return ByteBuffer.wrap(readBytes(readI32(), stringCap(), "a binary"));
  }

  @Override
  protected void skipBinary() throws TException {
    int size = readI32();
    check(size, stringCap(), "a skipped field");
    skipBytes(size);
  }

  @Override
  public TList readListBegin() throws TException {
    TList l = super.readListBegin();
    container(l.size);
    return l;
  }

  @Override
  public TSet readSetBegin() throws TException {
    TSet s = super.readSetBegin();
    container(s.size);
    return s;
  }

  @Override
  public TMap readMapBegin() throws TException {
    TMap m = super.readMapBegin();
    container(m.size);
    return m;
  }

  /** A container's declared size is allocated up front by generated code (an ArrayList, a HashMap). */
  private void container(int size) throws TException {
    check(
        size,
        trusted ? limits.maxContainerSize() : ThriftLimits.STRANGER_CONTAINER_MAX,
        "a container");
    admission.take(8L * size);
  }

  private int stringCap() {
    return trusted ? limits.maxStringBytes() : ThriftLimits.STRANGER_STRING_MAX_BYTES;
  }

  /**
   * A transport error, not a protocol one: the generated processors answer a protocol error and go on
   * reading the connection, whose next bytes would be the rest of the refused call; this closes it.
   */
  private static void check(int size, int cap, String what) throws Refused {
    if (size < 0) {
      throw new Refused("negative length of " + what + ": " + size);
    }
    if (size > cap) {
      throw new Refused(what + " of " + size + " bytes is above this connection's limit of " + cap
          + " (before a known credential, or the endpoint's value limit)");
    }
  }

  /** A call this endpoint will not read: its connection is closed (and the server logs it sparingly). */
  public static final class Refused extends TTransportException {
    public Refused(String message) {
      super(TTransportException.CORRUPTED_DATA, message);
    }
  }

  /** Read {@code size} bytes, growing the buffer as they arrive; each buffer is taken from the read budget. */
  private byte[] readBytes(int size, int cap, String what) throws TException {
    check(size, cap, what);
    int first = Math.min(size, CHUNK_BYTES);
    admission.take(first);
    byte[] buf = new byte[first];
    int n = 0;
    while (true) {
      n += trans_.readAll(buf, n, buf.length - n);
      if (n == size) {
        return buf;
      }
      int next = (int) Math.min(size, 2L * buf.length);
      admission.take(next);
      buf = Arrays.copyOf(buf, next);
    }
  }

  private static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
