package sand.localbus;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.TBaseHelper;
import sand.localbus.thrift.BusError;
import sand.localbus.thrift.BusErrorCode;
import sand.localbus.thrift.LocalBus;

/**
 * The Thrift face of a {@link LocalMessageBus} (localbus.thrift): converts payloads and maps
 * {@link BusException} to {@link BusError}. Payloads are not copied: the server's binary protocol reads
 * each into a fresh array, which the bus keeps; polled arrays are wrapped as they are.
 *
 * <p>Serve it through {@link LocalBusServer} (or {@link LocalBusServer#serveUnix}): its processor puts
 * back at the head of the queue what it could not send to a poller that died. The plain generated
 * processor does not (a blocked poll takes a message for a poller that died meanwhile, and loses it),
 * so this class offers none.
 */
public final class LocalBusService implements LocalBus.Iface {

  private final LocalMessageBus bus;

  public LocalBusService(LocalMessageBus bus) {
    this.bus = bus;
  }

  @Override
  public void publish(String credential, String queue, ByteBuffer payload) throws BusError {
    try {
      bus.publish(credential, queue, bytes(payload));
    } catch (BusException e) {
      throw toBusError(e);
    }
  }

  @Override
  public void publishBatch(String credential, List<sand.localbus.thrift.Delivery> deliveries)
      throws BusError {
    try {
      List<Delivery> batch = null;
      if (deliveries != null) {
        batch = new ArrayList<>(deliveries.size());
        for (sand.localbus.thrift.Delivery d : deliveries) {
          batch.add(d == null ? null : new Delivery(d.queue, bytes(d.payload)));
        }
      }
      bus.publishBatch(credential, batch);
    } catch (BusException e) {
      throw toBusError(e);
    }
  }

  @Override
  public List<ByteBuffer> poll(String credential, String queue, int maxMessages, int timeoutMs)
      throws BusError {
    try {
      List<byte[]> messages = bus.poll(credential, queue, maxMessages, timeoutMs);
      List<ByteBuffer> out = new ArrayList<>(messages.size());
      for (byte[] m : messages) {
        out.add(ByteBuffer.wrap(m));
      }
      return out;
    } catch (BusException e) {
      throw toBusError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the server is closing this connection
      return List.of();
    }
  }

  @Override
  public List<sand.localbus.thrift.HostAgentMessage> pollHostAgent(
      String credential, int maxMessages, int timeoutMs) throws BusError {
    try {
      return HostAgentMessage.toThrift(bus.pollHostAgent(credential, maxMessages, timeoutMs));
    } catch (BusException e) {
      throw toBusError(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    }
  }

  @Override
  public int length(String credential, String queue) throws BusError {
    try {
      return bus.length(credential, queue);
    } catch (BusException e) {
      throw toBusError(e);
    }
  }

  @Override
  public int deleteQueue(String credential, String queue) throws BusError {
    try {
      return bus.deleteQueue(credential, queue);
    } catch (BusException e) {
      throw toBusError(e);
    }
  }

  @Override
  public void grantApplication(String credential, String application, String applicationCredential)
      throws BusError {
    try {
      bus.grantApplication(credential, application, applicationCredential);
    } catch (BusException e) {
      throw toBusError(e);
    }
  }

  @Override
  public void revokeApplication(String credential, String application) throws BusError {
    try {
      bus.revokeApplication(credential, application);
    } catch (BusException e) {
      throw toBusError(e);
    }
  }

  /** The wire form of a refusal. */
  static BusError toBusError(BusException e) {
    return new BusError(BusErrorCode.findByValue(e.code().value()), e.getMessage());
  }

  /** The bytes of a payload, without a copy when the buffer wraps a whole array (as read off the wire). */
  private static byte[] bytes(ByteBuffer payload) {
    return payload == null ? null : TBaseHelper.rightSize(payload).array();
  }
}
