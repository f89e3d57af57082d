"""What a call of a baseline platform returns: the output, or the error, and one record per hop with its timestamps.

Every timestamp is ``time.time_ns()`` of the one host clock: the controller and the invoker take theirs on the host,
the action server inside the container (containers share the host's clock: Docker uses no time namespace), so all
of them compare directly.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Hop", "Result"]


@dataclass
class Hop:
    """One function of a sequence, as the controller sent it and the invoker ran it."""

    function: str
    activation_id: str
    sent_ns: int = 0  # controller: just before producing the activation to the invoker's topic
    invoker_received_ns: int = 0  # invoker: the activation taken off its topic
    start: str = ""  # how it got a container: "cold" (new), "warm" (unpaused), "hot" (idle, running)
    container: str = ""  # the container's name
    # Invoker-side phases, each (begin_ns, end_ns): "acquire" (the pool: a free container or a new one), "create"
    # and "start" (docker create / start; TC6's "docker run"), "unpause", "ready" (until the action server accepts a
    # connection), "init" (POST /init: the code loaded), "run" (POST /run, request to response).
    phases: dict[str, tuple[int, int]] = field(default_factory=dict)
    handler_start_ns: int = 0  # in the container: just before handle(event, context)
    handler_end_ns: int = 0  # in the container: just after it returned (or raised)
    completed_ns: int = 0  # invoker: just before producing the completion to the controller's topic
    received_ns: int = 0  # controller: the completion taken off its topic
    error: str | None = None

    def durations_ms(self) -> dict[str, float]:
        """The hop's parts in milliseconds: the invoker's phases, the handler, and the two Kafka legs."""
        out = {name: (end - begin) / 1e6 for name, (begin, end) in self.phases.items()}
        if self.invoker_received_ns and self.sent_ns:
            out["kafka_to_invoker"] = (self.invoker_received_ns - self.sent_ns) / 1e6
        if self.received_ns and self.completed_ns:
            out["kafka_to_controller"] = (self.received_ns - self.completed_ns) / 1e6
        if self.handler_end_ns and self.handler_start_ns:
            out["handler"] = (self.handler_end_ns - self.handler_start_ns) / 1e6
        if self.received_ns and self.sent_ns:
            out["hop"] = (self.received_ns - self.sent_ns) / 1e6
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Hop:
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        known["phases"] = {k: (int(v[0]), int(v[1])) for k, v in (known.get("phases") or {}).items()}
        return cls(**known)


@dataclass
class Result:
    """A call of a sequence: the last hop's output (each hop's output was the next hop's input), or an error."""

    output: Any
    error: str | None
    hops: list[Hop]
    start_ns: int
    end_ns: int

    @property
    def ok(self) -> bool:
        return self.error is None

    def interactions_ns(self) -> list[int]:
        """Per pair of consecutive hops: the start of hop N+1's handler minus the end of hop N's (paper Fig 5c)."""
        return [
            b.handler_start_ns - a.handler_end_ns
            for a, b in zip(self.hops, self.hops[1:], strict=False)
            if a.handler_end_ns and b.handler_start_ns
        ]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
