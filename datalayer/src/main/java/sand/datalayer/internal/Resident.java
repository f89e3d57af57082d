package sand.datalayer.internal;

import java.util.concurrent.locks.ReentrantLock;

/**
 * One item (a key, map, set or counter) of one application in this host's memory: the unit the quota
 * counts and eviction drops. Its lock orders the item's local writes (and so their backups). Eviction
 * only ever tries the lock ({@link Residents#tryEvict}), so a writer holding one item's lock may evict
 * others without any risk of deadlock.
 */
abstract class Resident {
  final String name;
  final ReentrantLock lock = new ReentrantLock();
  /** Left its store (evicted, emptied or dropped): whoever still has it must look the name up again. */
  boolean dead; // guarded by lock
  /** Reads through the global layer in progress without the lock: the item must stay (not evictable). */
  int readers; // guarded by lock
  /** For least-recently-used eviction; a clock reading, racy on purpose (an approximation is enough). */
  volatile long lastUsed;

  Resident(String name) {
    this.name = name;
    touch();
  }

  final void touch() {
    lastUsed = System.nanoTime();
  }

  /** Whether the item's value is in memory, and charged to the application. Guarded by lock. */
  abstract boolean inMemory();

  /** Drop the value from memory and release what it was charged. Guarded by lock. */
  abstract void unload(AppContext ctx);
}
