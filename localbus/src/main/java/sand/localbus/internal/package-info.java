/**
 * Machinery of the local bus: the bounded FIFO queue and queue-name parsing. Not an API: other
 * modules use {@link sand.localbus.LocalMessageBus} and may see this change without notice.
 */
package sand.localbus.internal;
