"""KNIX's stop after an error, for workflows deployed through the KNIX door (docs/knix.md, "Running a workflow").

On KNIX, a function whose code raises marks its execution stopped and sends the error to the workflow's exit; every
other function instance of that execution that would pass its output on to more functions reads the mark first and,
if it is set, writes "Not continuing because workflow execution has been stopped... <execution id>" to the
workflow's log and passes nothing on. SAND's own workflows let the other branches run to their end (the first
answer is the execution's); a workflow in KNIX's dialect does what KNIX does.

The mark is an entry of the application's map ``sand.knix.stopped`` (execution id -> when), in the data layer the
grains share: on one host the next instance sees it at once; across hosts once the write reaches the global layer.
Marks older than ``KEEP_S`` (longer than any instance may run) are removed by a failing instance now and then, so the
map holds about the errors of the last ``KEEP_S`` seconds.
"""

from __future__ import annotations

import random
import time
from typing import Any

from grainworker.workflow import END

__all__ = ["KEEP_S", "MESSAGE", "STOPPED_MAP", "apply"]

STOPPED_MAP = "sand.knix.stopped"
MESSAGE = "Not continuing because workflow execution has been stopped..."
KEEP_S = 86400 + 3600  # the longest an instance may run (application setting timeout_s), and some
PRUNE_ONE_IN = 32  # a failing instance removes old marks once in this many errors (a map read: not each time)


def apply(ctx: Any, execution_id: str, status: str, outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The outputs to publish: a failing instance marks its execution stopped and publishes its error; an instance
    of a stopped execution publishes nothing but what goes to the end. A data layer that does not answer is not
    the execution's fault: the outputs go on as they would on SAND."""
    try:
        if status == "error":
            ctx.putMapEntry(STOPPED_MAP, execution_id, str(int(time.time())))
            if random.randrange(PRUNE_ONE_IN) == 0:
                _prune(ctx, time.time() - KEEP_S)
            return outputs
        if all(o.get("grain") == END for o in outputs):
            return outputs  # as KNIX: only the exit gets it, no need to look
        if ctx.getMapEntry(STOPPED_MAP, execution_id) is not None:
            ctx.log(f"{MESSAGE} {execution_id}", "INFO")
            return [o for o in outputs if o.get("grain") == END]
    except Exception as e:  # noqa: BLE001 - the data layer's trouble, logged; the execution goes on
        ctx.log(f"could not read or write the execution's stop mark: {e}", "WARNING")
    return outputs


def _prune(ctx: Any, before: float) -> None:
    for execution_id, when in ctx.retrieveMap(STOPPED_MAP).items():
        try:
            old = float(when or 0) < before
        except ValueError:
            old = True
        if old:
            ctx.deleteMapEntry(STOPPED_MAP, execution_id)
