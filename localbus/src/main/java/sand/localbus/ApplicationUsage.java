package sand.localbus;

/**
 * What one application holds in the local bus now (metrics; docs/local-bus.md "Quotas").
 *
 * @param bytes      bytes waiting in its grain queues and in LQ_HA: payloads plus
 *                   {@link LocalMessageBus#MESSAGE_OVERHEAD_BYTES} per message (what its quota counts)
 * @param messages   messages waiting in its grain queues and in LQ_HA
 * @param haMessages of those, messages in LQ_HA
 * @param queues     grain queues it has
 */
public record ApplicationUsage(long bytes, int messages, int haMessages, int queues) {}
