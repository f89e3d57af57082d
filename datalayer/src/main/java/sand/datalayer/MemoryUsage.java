package sand.datalayer;

/**
 * What one application holds in this host's local data layer (for the host agent's metrics).
 *
 * @param bytes        bytes counted against the application's quota ({@code app.max.bytes}): its names
 *                     and values in memory, plus writes waiting for the global layer
 * @param pendingBytes how many of {@code bytes} belong to writes not yet in the global layer (they cannot
 *                     be evicted until they reach it)
 * @param evictedItems items of the application evicted from memory so far (a running total)
 */
public record MemoryUsage(long bytes, long pendingBytes, long evictedItems) {}
