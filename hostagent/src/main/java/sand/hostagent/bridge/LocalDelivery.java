package sand.hostagent.bridge;

import java.util.concurrent.CompletableFuture;
import sand.cluster.KafkaClients;
import sand.contracts.ConditionFlag;
import sand.contracts.Event;
import sand.contracts.GrainRef;
import sand.contracts.gate.Admission;
import sand.hostagent.bridge.InFlightEvents.Home;
import sand.localbus.BusException;
import sand.localbus.LocalMessageBus;

/**
 * An event that enters the system on this host (a frontend's request through the gate, a data trigger) goes
 * straight into its grain's local queue and is backed up by this host to the grain's topic as {@code processing},
 * in a partition it owns: exactly what happens to an output a grain instance delivered locally (Figure 4 step
 * 6b), so a failure of this host afterwards is recovered like any other event (§4.2.1).
 */
public final class LocalDelivery {
  private final GlobalBusBridge bridge;
  private final LocalMessageBus bus;
  private final String agentCredential;

  public LocalDelivery(GlobalBusBridge bridge, LocalMessageBus bus, String agentCredential) {
    this.bridge = bridge;
    this.bus = bus;
    this.agentCredential = agentCredential;
  }

  /**
   * Deliver {@code event} (its trace complete: it is sent as is) here. {@code ACCEPTED}: in the local queue, its
   * backup on its way ({@code backedUp} completes when Kafka has it); {@code NOT_HERE}: the grain does not run
   * here (or this host owns none of its partitions); {@code BUSY}: its local queue or the application's share is
   * full; {@code REFUSED}: the bus refused it. Only {@code ACCEPTED} leaves anything behind.
   */
  public Admission deliver(Event event, CompletableFuture<Object> backedUp) {
    GrainRef grain = new GrainRef(event.app(), event.grain());
    Integer partition =
        bridge.runsHere(grain) ? bridge.backupPartition(grain.topic(), event.id()) : null;
    if (partition == null) {
      return Admission.NOT_HERE;
    }
    byte[] delivered = event.toBytes();
    if (!bridge
        .inFlight()
        .hasRoom(grain.app(), delivered.length, bridge.settings().reports().appInFlightBytes())) {
      return Admission.BUSY; // the application holds its share of events in flight here
    }
    bridge
        .inFlight()
        .register(
            event.id(),
            new Home(grain.topic(), partition, grain.app(), backedUp, grain.grain(), event.json()),
            delivered.length);
    try {
      bus.publish(agentCredential, grain.localQueue(), delivered);
    } catch (BusException e) {
      bridge.inFlight().remove(grain.app(), event.id());
      return e.code() == BusException.Code.QUEUE_FULL
              || e.code() == BusException.Code.QUOTA_EXCEEDED
          ? Admission.BUSY
          : Admission.REFUSED;
    }
    bridge
        .sender()
        .send(KafkaClients.record(
            grain.topic(), partition, ConditionFlag.processing(event.json(), bridge.host())))
        .whenComplete((md, e) -> {
          if (e == null) {
            backedUp.complete(md);
          } else {
            backedUp.completeExceptionally(e);
          }
        });
    return Admission.ACCEPTED;
  }

  /** Produce {@code event} as a {@code new} record to its grain's topic, for the hosts that run it. */
  public CompletableFuture<?> forward(Event event) {
    return bridge
        .sender()
        .send(KafkaClients.record(
            new GrainRef(event.app(), event.grain()).topic(),
            null,
            ConditionFlag.newEvent(event.json(), bridge.host())));
  }
}
