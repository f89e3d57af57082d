"""fork() for grain workers and instances, without CPython's at-fork handlers.

``os.fork()`` runs the handlers modules register with ``os.register_at_fork``: threading's ``_after_fork`` and
logging's lock re-creation alone touch ~185 pages of the child's memory, each one a copy-on-write page fault
(expensive on a VM). Those handlers repair state that other *threads* may have left behind; a grain worker and
the sandbox's supervisor are single-threaded, so the child needs none of it, and fork() is called directly
(keeping the GIL, hence PyDLL). What a child does need is handled here: ``random``'s generator is reseeded, or
every instance would draw the same numbers. With any other thread alive this falls back to ``os.fork()``.
Measured: 51 instead of 236 faults in the child, 1.3 instead of 1.9 ms per fork and exit (docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

__all__ = ["die_with_parent", "fork"]

_libc = ctypes.PyDLL(None, use_errno=True)
_libc_fork = _libc.fork
_libc_fork.restype = ctypes.c_int
_libc_fork.argtypes = []


def fork() -> int:
    """Like os.fork(): 0 in the child, the child's pid in the parent."""
    if threading.active_count() > 1:
        return os.fork()
    pid: int = _libc_fork()  # ctypes: restype c_int gives an int
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    if pid == 0:
        random = sys.modules.get("random")
        if random is not None:
            random.seed()
    return pid


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, on: bool = True) -> None:
    """While ``on``, this process is killed (SIGKILL) when its parent ``parent`` dies; if it already has, now."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL if on else 0, 0, 0, 0)
    if on and os.getppid() != parent:
        os._exit(0)
