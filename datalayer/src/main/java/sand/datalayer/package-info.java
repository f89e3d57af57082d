/**
 * The local and global data layers (paper §4.3).
 *
 * <p>The <em>local data layer</em> ({@link sand.datalayer.LocalDataLayer}) is an in-memory store per
 * host, per application: key-value entries, maps, sets and counters. Writes land in memory and are
 * backed up asynchronously, in order per item, to the <em>global data layer</em>
 * ({@link sand.cluster.globaldata.GlobalDataLayer}: Cassandra, or an in-memory fake for tests); a read that
 * misses memory reads the global layer. Each application reaches only its own data: the application
 * comes from the caller's credential, and every table of the global layer is keyed by application first.
 *
 * <p>{@link sand.datalayer.DataLayerService} serves the Thrift contract ({@code datalayer.thrift}) and
 * {@link sand.datalayer.DataLayerServer} runs it standalone or embedded.
 */
package sand.datalayer;
