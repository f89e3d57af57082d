"""How the processes of a sandbox log (its supervisor, its grain workers): to stderr, which Docker keeps in the
container's json-file log, each line with an ISO-8601 UTC time as SAND's Java processes write it
(docs/operations.md "Logs")."""

from __future__ import annotations

import logging
import sys
import time

FORMAT = "%(asctime)s %(levelname)-5s %(message)s"


class IsoUtcFormatter(logging.Formatter):
    """Times as 2026-11-27T08:15:02.123Z: UTC, milliseconds, with the zone."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802 (logging's name)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


def configure(level: int = logging.INFO) -> None:
    """The process's root handler: stderr, ISO-8601 UTC times (a process's entry point calls it once)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(IsoUtcFormatter(FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
