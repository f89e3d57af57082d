"""The grain API's session calls (KNIX's names and defaults; docs/sessions.md), a part of ``GrainContext``.

They work in a workflow with at least one session function; elsewhere each logs a WARNING once and answers what
KNIX answers outside a session (None, or an empty list or dict). A message to a session function that is not
running in the session, or runs on another host, raises ``GrainApiError`` naming it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

from grainworker.session import SessionFunction, SessionRegistry, message_payload, session_id

__all__ = ["SessionCalls"]


class SessionCalls:
    """Mixed into GrainContext, which provides ``_event``, ``_grain``, ``_workflow``, ``_dl()`` and ``_warn()``."""

    _event: dict[str, Any]
    _grain: str
    _workflow: Any
    _dl: Callable[[], Any]
    _warn: Callable[[str, str], None]

    def _session_init(self) -> None:
        self.session_function: SessionFunction | None = None  # set by instance.py for a session function's instance
        self.session_messages: list[tuple[str, bytes]] = []  # messages sent when the instance publishes its outputs
        self.publish_now: Callable[[str, bytes], None] | None = None  # instance.py: publish one message right now
        self._registry: SessionRegistry | None = None

    # ---- where we are
    def _session(self, call: str) -> SessionRegistry | None:
        if not self._workflow.has_sessions:
            self._warn(
                call, f"{call}: this workflow has no session functions; it answers what KNIX answers outside one"
            )
            return None
        if self._registry is None:
            sid = session_id(self._event.get("value"), self._event.get("execution_id", ""))
            self._registry = SessionRegistry(self._dl(), sid)
        return self._registry

    def _own(self, call: str) -> SessionFunction | None:
        if self.session_function is None:
            self._warn(
                call, f"{call}: grain {self._grain!r} is not a session function (sessionFunction in the workflow)"
            )
        return self.session_function

    def get_session_id(self) -> str | None:
        reg = self._session("get_session_id")
        return reg.sid if reg else None

    def get_session_function_id(self) -> str | None:
        own = self._own("get_session_function_id")
        return own.fid if own else None

    def is_still_running(self) -> bool | None:
        """False once the session function was sent --stop (or its helper failed)."""
        own = self._own("is_still_running")
        return own.running if own else None

    def get_session_update_messages(self, count: int = 1, block: bool = False) -> list[Any]:
        """Up to ``count`` messages sent to this session function since the last call; ``block``: wait for ``count``
        (bounded by the instance's session_timeout_s)."""
        own = self._own("get_session_update_messages")
        return own.messages(int(count), bool(block)) if own else []

    def get_all_session_function_ids(self) -> list[str]:
        reg = self._session("get_all_session_function_ids")
        return reg.ids() if reg else []

    def get_all_session_metadata(self) -> dict[str, str]:
        reg = self._session("get_all_session_metadata")
        return {fid: json.dumps(meta) for fid, meta in reg.all().items()} if reg else {}

    # ---- messages
    def send_to_running_function_in_session(
        self, rgid: str, message: Any, send_now: bool = False, session_metadata: Any = None
    ) -> None:
        """Send ``message`` to the session function ``rgid`` of this session: when this instance publishes its
        outputs, or at once with ``send_now``."""
        reg = self._session("send_to_running_function_in_session")
        if reg is None:
            return
        meta = reg.get(str(rgid))
        if meta is None:
            raise _api_error(
                f"no session function {rgid!r} runs in session {reg.sid}: it ended or never started; "
                "context.get_all_session_function_ids() lists the running ones"
            )
        self._deliver(reg, str(rgid), meta, message, send_now)

    def send_to_all_running_functions_in_session_with_function_name(
        self, gname: str, message: Any, send_now: bool = False
    ) -> None:
        reg = self._session("send_to_all_running_functions_in_session_with_function_name")
        if reg is None:
            return
        running = {fid: meta for fid, meta in reg.all().items() if gname in (meta.get("grain"), meta.get("name"))}
        if not running:
            self._warn(
                "none-named", f"no session function {gname!r} runs in session {reg.sid}: the message went nowhere"
            )
        for fid, meta in running.items():
            self._deliver(reg, fid, meta, message, send_now, every=True)

    def send_to_all_running_functions_in_session(self, message: Any, send_now: bool = False) -> None:
        reg = self._session("send_to_all_running_functions_in_session")
        if reg is None:
            return
        running = reg.all()
        if not running:
            self._warn("none-running", f"no session function runs in session {reg.sid}: the message went nowhere")
        for fid, meta in running.items():
            self._deliver(reg, fid, meta, message, send_now, every=True)

    def send_to_running_function_in_session_with_alias(self, alias: str, message: Any, send_now: bool = False) -> None:
        reg = self._session("send_to_running_function_in_session_with_alias")
        if reg is None:
            return
        fid = reg.with_alias(alias)
        if fid is None:
            raise _api_error(
                f"no session function of session {reg.sid} has the alias {alias!r}; set it with "
                "context.set_session_function_alias(alias, session_function_id)"
            )
        self.send_to_running_function_in_session(fid, message, send_now)

    def _deliver(
        self, reg: SessionRegistry, fid: str, meta: dict[str, Any], message: Any, send_now: bool, every: bool = False
    ) -> None:
        if meta.get("sandbox") != socket.gethostname():
            text = (
                f"session function {fid} of session {reg.sid} runs on another host: session messages reach only "
                "session functions on the host of the sender (docs/sessions.md)"
            )
            if every:
                self._warn("other-host", text)
                return
            raise _api_error(text)
        try:
            payload = message_payload(message, self._grain, str(self._event.get("execution_id", "")))
        except (TypeError, ValueError) as e:
            raise _api_error(f"a session message must be JSON (dict, list, str, number, bool or None): {e}") from None
        if send_now and self.publish_now is not None:
            self.publish_now(str(meta["queue"]), payload)
        else:
            self.session_messages.append((str(meta["queue"]), payload))

    # ---- aliases
    def set_session_alias(self, alias: str) -> None:
        _check_alias(alias, "session alias")
        reg = self._session("set_session_alias")
        if reg is not None:
            why = reg.set_session_alias(alias)
            if why:
                self._warn("set_session_alias", f"set_session_alias: {why}")

    def unset_session_alias(self) -> None:
        reg = self._session("unset_session_alias")
        if reg is not None:
            reg.unset_session_alias()

    def get_session_alias(self) -> str | None:
        reg = self._session("get_session_alias")
        return reg.session_alias() if reg else None

    def _function(self, call: str, fid: str | None) -> tuple[SessionRegistry | None, str | None]:
        reg = self._session(call)
        if reg is None:
            return None, None
        if fid is None:
            own = self._own(call)
            return reg, own.fid if own else None
        if reg.get(fid) is None:
            self._warn(call, f"{call}: no session function {fid!r} runs in session {reg.sid}")
            return reg, None
        return reg, fid

    def set_session_function_alias(self, alias: str, session_function_id: str | None = None) -> None:
        _check_alias(alias, "session function alias")
        reg, fid = self._function("set_session_function_alias", session_function_id)
        if reg is not None and fid is not None:
            why = reg.set_function_alias(fid, alias)
            if why:
                self._warn("set_session_function_alias", f"set_session_function_alias: {why}")

    def unset_session_function_alias(self, session_function_id: str | None = None) -> None:
        reg, fid = self._function("unset_session_function_alias", session_function_id)
        if reg is not None and fid is not None:
            reg.unset_function_alias(fid)

    def get_session_function_alias(self, session_function_id: str | None = None) -> str | None:
        reg, fid = self._function("get_session_function_alias", session_function_id)
        return reg.function_alias(fid) if reg is not None and fid is not None else None

    def get_session_function_id_with_alias(self, alias: str | None = None) -> str | None:
        if alias is None:
            return self.get_session_function_id()
        reg = self._session("get_session_function_id_with_alias")
        return reg.with_alias(alias) if reg else None

    def get_all_session_function_aliases(self) -> dict[str, str]:
        """alias -> session function id, for this session."""
        reg = self._session("get_all_session_function_aliases")
        return {alias: fid for fid, alias in reg.aliases_by_function().items()} if reg else {}

    def get_alias_summary(self) -> dict[str, Any]:
        """{"session": {id: alias or ""}, "session_functions": {function id: alias or ""}}."""
        reg = self._session("get_alias_summary")
        if reg is None:
            return {}
        functions = dict.fromkeys(reg.ids(), "")
        functions.update(reg.aliases_by_function())
        return {"session": {reg.sid: reg.session_alias() or ""}, "session_functions": functions}


def _check_alias(alias: Any, what: str) -> None:
    if not isinstance(alias, str) or not alias:
        raise _api_error(f"a {what} must be a non-empty string, got {alias!r}")


def _api_error(text: str) -> Exception:
    from grainworker.context import GrainApiError  # context imports this module

    return GrainApiError(text)
