/**
 * Local message bus (paper §3.2, §4.1): one per host, named FIFO queues, one per grain
 * ({@code "<application>/<grain>"}) plus the host agent's queue LQ_HA ({@code "__ha__"}).
 *
 * <p>{@link sand.localbus.LocalMessageBus} is the in-process core the host agent embeds;
 * {@link sand.localbus.LocalBusService} serves it over Thrift ({@code localbus.thrift});
 * {@link sand.localbus.LocalBusServer} puts that service on TCP and a Unix socket, and runs it
 * standalone. Served so, a poll that finds its queue empty holds no thread: the thread of the
 * publisher that brings the message writes the poll's reply onto the poller's connection.
 */
package sand.localbus;
