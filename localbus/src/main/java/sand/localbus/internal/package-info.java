/**
 * Machinery of the local bus: the bounded FIFO queue with its parked remote pollers ({@code Waiter})
 * and their deadlines, and queue-name parsing. Not an API: other modules use
 * {@link sand.localbus.LocalMessageBus} and may see this change without notice.
 */
package sand.localbus.internal;
