/**
 * The global data layer's client (Cassandra; in memory for tests), shared by the host agents' local data layers,
 * which back every write up to it, and the frontends, whose KNIX door stores accounts' data in it: both processes
 * use it without depending on each other's modules. Its settings are {@link
 * sand.cluster.globaldata.GlobalDataSettings} ({@code SAND_DATALAYER_GLOBAL}, {@code SAND_DATALAYER_CASSANDRA_*}).
 */
package sand.cluster.globaldata;
