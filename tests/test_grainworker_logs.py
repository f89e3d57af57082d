"""A sandbox's processes log each line with an ISO-8601 UTC time (grainworker/_logs.py)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from grainworker._logs import FORMAT, IsoUtcFormatter


def test_a_line_starts_with_an_iso_8601_utc_time_with_its_zone() -> None:
    record = logging.LogRecord("grainworker", logging.WARNING, __file__, 1, "worker %s exited", ("greet",), None)
    record.created, record.msecs = 1796112902.123, 123.0
    line = IsoUtcFormatter(FORMAT).format(record)
    assert line == "2026-12-01T08:15:02.123Z WARNING worker greet exited"
    stamp = datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00"))
    assert stamp.utcoffset() == timedelta(0)
