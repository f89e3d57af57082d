/**
 * Machinery of the local data layer, not an API: the per-application stores and the write-behind
 * queue to the global data layer. Use {@link sand.datalayer.LocalDataLayer} instead.
 */
package sand.datalayer.internal;
