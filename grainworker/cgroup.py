"""The sandbox's memory as its cgroup sees it (inside a sandbox, the process's cgroup is the sandbox's).

Docker on this kind of host may mount cgroup v1 or v2; each reading tries v2's file first, then v1's.
"""

from __future__ import annotations

__all__ = ["MEMORY_FILES", "memory_limit", "memory_share", "oom_kills"]

# (usage, limit, where the OOM-kill counter is): cgroup v2, then v1
MEMORY_FILES = [
    ("/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.events"),
    (
        "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        "/sys/fs/cgroup/memory/memory.oom_control",
    ),
]
_UNLIMITED = 1 << 60


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def memory_limit() -> int:
    """The sandbox's memory limit in bytes; 0 when unknown or unlimited."""
    for _, limit_path, _ in MEMORY_FILES:
        limit = _read(limit_path)
        if limit is None:
            continue
        limit = limit.strip()
        return int(limit) if limit.isdigit() and int(limit) < _UNLIMITED else 0
    return 0


def memory_share() -> float:
    """How much of its memory limit the sandbox uses; 0 when unknown or unlimited."""
    for used_path, limit_path, _ in MEMORY_FILES:
        used, limit = _read(used_path), _read(limit_path)
        if used is None or limit is None:
            continue
        limit = limit.strip()
        if not limit.isdigit() or int(limit) >= _UNLIMITED:
            return 0.0
        return int(used.strip()) / max(1, int(limit))
    return 0.0


def oom_kills() -> int:
    """How many processes the kernel has killed for the sandbox's memory limit so far (-1 when unknown)."""
    for _, _, events_path in MEMORY_FILES:
        text = _read(events_path)
        if text is None:
            continue
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return -1
    return -1
