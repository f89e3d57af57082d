package sand.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TList;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocolUtil;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.apache.thrift.transport.TTransportException;
import org.junit.jupiter.api.Test;

/**
 * A call is read as generated code reads it (message, args struct, fields); what a caller declares but
 * does not send is never allocated, and nothing big is read for a caller whose credential is unknown.
 */
class BoundedBinaryProtocolTest {
  private static final String GOOD = "a-credential-of-the-application";
  private static final int HUNDRED_MB =
      100_000_000; // under Thrift's 100 MiB message cap, which refuses 100 << 20 itself

  private final ReadBudget budget = new ReadBudget(64L << 20);
  private final ThriftLimits limits = new ThriftLimits(GOOD::equals, 8, 16 << 20, 1000, 1000);

  /** The bytes a client writes: a call, its credential (field 1), then what {@code rest} writes. */
  private static byte[] call(String name, String credential, Writer rest) throws TException {
    TMemoryBuffer buf = new TMemoryBuffer(1024);
    TBinaryProtocol p = new TBinaryProtocol(buf);
    p.writeMessageBegin(new TMessage(name, TMessageType.CALL, 7));
    p.writeStructBegin(new TStruct("args"));
    if (credential != null) {
      p.writeFieldBegin(new TField("credential", TType.STRING, (short) 1));
      p.writeString(credential);
      p.writeFieldEnd();
    }
    rest.write(p);
    return Arrays.copyOf(buf.getArray(), buf.length());
  }

  interface Writer {
    void write(TBinaryProtocol p) throws TException;
  }

  /** Only the header of a field 2 of {@code type}; the declared length follows, the bytes never do. */
  private static Writer declares(byte type, int length) {
    return p -> {
      p.writeFieldBegin(new TField("value", type, (short) 2));
      p.writeI32(length);
    };
  }

  private BoundedBinaryProtocol reading(byte[] wire) throws TTransportException {
    return new BoundedBinaryProtocol(
        new TMemoryInputTransport(wire),
        new Admission(limits.authenticator(), budget, System.nanoTime()),
        limits);
  }

  /** Read args as generated code does: field 1 a string, field 2 a binary (or whatever the test reads). */
  private static ByteBuffer readArgs(BoundedBinaryProtocol in) throws TException {
    in.readMessageBegin();
    in.readStructBegin();
    ByteBuffer value = null;
    while (true) {
      TField f = in.readFieldBegin();
      if (f.type == TType.STOP) {
        break;
      }
      if (f.id == 1 && f.type == TType.STRING) {
        in.readString();
      } else if (f.id == 2 && f.type == TType.STRING) {
        value = in.readBinary();
      } else if (f.id == 2 && f.type == TType.LIST) {
        TList l = in.readListBegin();
        for (int i = 0; i < l.size; i++) {
          in.readBinary();
        }
        in.readListEnd();
      } else {
        TProtocolUtil.skip(in, f.type);
      }
      in.readFieldEnd();
    }
    in.readStructEnd();
    in.readMessageEnd();
    return value;
  }

  private static long allocatedDuring(Runnable r) {
    ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().getId();
    long before = mx.getThreadAllocatedBytes(id);
    r.run();
    return mx.getThreadAllocatedBytes(id) - before;
  }

  private void refusedWithoutAllocating(byte[] wire) {
    long allocated = allocatedDuring(
        () -> assertThrows(TTransportException.class, () -> readArgs(reading(wire))));
    assertTrue(
        allocated < (4 << 20), "refusing a declared 100 MB allocated " + allocated + " bytes");
  }

  @Test
  void aMethodNameOf100MbIsRefusedBeforeItIsAllocated() {
    byte[] header = ByteBuffer.allocate(8)
        .putInt(0x80010000 | TMessageType.CALL)
        .putInt(HUNDRED_MB)
        .array();
    refusedWithoutAllocating(header);
    byte[] oldStyle =
        ByteBuffer.allocate(4).putInt(HUNDRED_MB).array(); // unversioned: the length comes first
    refusedWithoutAllocating(oldStyle);
  }

  @Test
  void aStrangerGetsNothingBig() throws TException {
    // No credential, a wrong one, or a huge one: a declared 100 MB string, binary or list is
    // refused at once.
    refusedWithoutAllocating(call("publish", null, declares(TType.STRING, HUNDRED_MB)));
    refusedWithoutAllocating(call("publish", "not-known", declares(TType.STRING, HUNDRED_MB)));
    refusedWithoutAllocating(call("publish", "not-known", p -> {
      p.writeFieldBegin(new TField("deliveries", TType.LIST, (short) 2));
      p.writeListBegin(new TList(TType.STRING, HUNDRED_MB));
    }));
    refusedWithoutAllocating(call("publish", null, p -> {
      p.writeFieldBegin(new TField("credential", TType.STRING, (short) 1));
      p.writeI32(HUNDRED_MB);
    }));
    // A small call with a wrong credential is still read whole: the service answers it
    // UNAUTHORIZED.
    byte[] small = call("publish", "not-known", p -> {
      p.writeFieldBegin(new TField("payload", TType.STRING, (short) 2));
      p.writeBinary(ByteBuffer.wrap(new byte[100]));
      p.writeFieldEnd();
      p.writeFieldStop();
      p.writeStructEnd();
      p.writeMessageEnd();
    });
    assertEquals(100, readArgs(reading(small)).remaining());
  }

  @Test
  void aKnownCallerIsHeldToTheEndpointsCapAndADeclaredLengthPinsNothing() throws TException {
    refusedWithoutAllocating(
        call("publish", GOOD, declares(TType.STRING, HUNDRED_MB))); // above 16 MB
    // 15 MB declared, 10 bytes sent: the buffer grows only as bytes arrive.
    byte[] partial = call("publish", GOOD, declares(TType.STRING, 15 << 20));
    byte[] wire = Arrays.copyOf(partial, partial.length + 10);
    ReadBudget own = new ReadBudget(64L << 20);
    Admission admission = new Admission(limits.authenticator(), own, System.nanoTime());
    BoundedBinaryProtocol in =
        new BoundedBinaryProtocol(new TMemoryInputTransport(wire), admission, limits);
    long allocated =
        allocatedDuring(() -> assertThrows(TTransportException.class, () -> readArgs(in)));
    assertTrue(
        allocated < (1 << 20), "10 bytes of a declared 15 MB allocated " + allocated + " bytes");
    assertTrue(own.used() > 0, "what it holds counts until its connection closes");
    admission.close();
    assertEquals(
        0, own.used(), "a call cut short gives its budget back once its connection closes");
  }

  @Test
  void aCorrectCallOf1MbAfterTheCredentialIsReadWhole() throws TException {
    byte[] payload = new byte[1 << 20];
    Arrays.fill(payload, (byte) 'x');
    payload[payload.length - 1] = 'y';
    byte[] wire = call("publish", GOOD, p -> {
      p.writeFieldBegin(new TField("payload", TType.STRING, (short) 2));
      p.writeBinary(ByteBuffer.wrap(payload));
      p.writeFieldEnd();
      p.writeFieldStop();
      p.writeStructEnd();
      p.writeMessageEnd();
    });
    ReadBudget own = new ReadBudget(64L << 20);
    ByteBuffer got = readArgs(new BoundedBinaryProtocol(
        new TMemoryInputTransport(wire),
        new Admission(limits.authenticator(), own, System.nanoTime()),
        limits));
    byte[] bytes = new byte[got.remaining()];
    got.get(bytes);
    assertArrayEquals(payload, bytes);
    assertEquals(0, own.used(), "a call read whole gives its budget back");
  }

  @Test
  void callsBeyondTheProcessesReadBudgetAreCut() throws TException {
    ReadBudget small = new ReadBudget(512 * 1024);
    byte[] wire = call("publish", GOOD, p -> {
      p.writeFieldBegin(new TField("payload", TType.STRING, (short) 2));
      p.writeBinary(ByteBuffer.wrap(new byte[1 << 20]));
      p.writeFieldEnd();
      p.writeFieldStop();
      p.writeStructEnd();
      p.writeMessageEnd();
    });
    Admission admission = new Admission(limits.authenticator(), small, System.nanoTime());
    BoundedBinaryProtocol in =
        new BoundedBinaryProtocol(new TMemoryInputTransport(wire), admission, limits);
    TTransportException e = assertThrows(TTransportException.class, () -> readArgs(in));
    assertTrue(e.getMessage().contains("budget"), e.getMessage());
    admission.close();
    assertEquals(0, small.used());
  }

  @Test
  void theFirstKnownCredentialTrustsTheConnectionAndTheDeadlineCannotUndoIt() throws TException {
    Admission a = new Admission(GOOD::equals, budget, System.nanoTime() - 10_000_000_000L);
    assertFalse(a.admit("not-known"));
    assertFalse(a.trusted());
    assertTrue(a.admit(GOOD));
    assertFalse(a.expireIfOverdue(System.nanoTime(), 1), "a trusted connection never expires");
    Admission late = new Admission(GOOD::equals, budget, System.nanoTime() - 10_000_000_000L);
    assertTrue(late.expireIfOverdue(System.nanoTime(), 1));
    assertThrows(
        TTransportException.class, () -> late.admit(GOOD), "an expired connection is not admitted");
  }
}
