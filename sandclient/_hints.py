"""What to run next, in `sand` commands: the one place where the CLI rewords the API's errors.

The frontend's messages end with the REST call that fixes the problem ("no application 'nope' in your account;
create it with PUT /api/v1/apps/nope"), which is right for curl but not for someone typing `sand`. `explain`
keeps what the API said failed, drops its REST advice and adds the `sand` command to run instead, chosen from
`HINTS` by the command that failed and the error's status and code. An error with no entry is shown as the API
said it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable

from sandclient.client import ApiError

__all__ = ["HINTS", "command_of", "explain", "without_rest_advice"]

# The REST call a frontend message names as its advice ("... with PUT /api/v1/apps/nope").
_REST_CALL = re.compile(r"\b(?:GET|PUT|POST|DELETE) /(?:api/v1|app)/")
_QUOTED = re.compile(r"'([^']+)'")

Hint = Callable[[argparse.Namespace, ApiError, str], "str | None"]
"""(the parsed arguments, the error, its message without the REST advice) -> the message to show instead, or
None to show the API's own."""


def without_rest_advice(message: str) -> str:
    """`message` up to the clause that names a REST call: the last "; " before it, else the last " (", else the
    first ": " (e.g. "unknown API key: sign up with POST /api/v1/accounts ..." -> "unknown API key")."""
    m = _REST_CALL.search(message)
    if not m:
        return message
    head = message[: m.start()]
    for cut in (head.rfind("; "), head.rfind(" ("), head.find(": ")):
        if cut > 0:
            return head[:cut]
    return message


def _quoted(message: str, after: str) -> str | None:
    """The first 'quoted' word of `message` after the text `after` (e.g. the application a 409 names)."""
    at = message.find(after)
    m = _QUOTED.search(message, at + len(after)) if at >= 0 else None
    return m.group(1) if m else None


def _url(e: ApiError) -> str:
    return e.url or "<url>"


# --- the hints, one per situation ---------------------------------------------------------------------------------


def _no_account(args: argparse.Namespace, e: ApiError, said: str) -> str | None:
    if args.command == "admin":
        return None  # the operator's key: its message says where `make up` wrote it
    said = said.split(": ", 1)[0]  # "this call needs an API key: send 'Authorization: ...'" is for curl
    return (
        f"{said}; create an account with `sand signup {_url(e)} <name>`, or store the key you were given with "
        f"`sand login {_url(e)} <api-key>`"
    )


def _login_refused(args: argparse.Namespace, e: ApiError, said: str) -> str:
    fix = f"; create an account with `sand signup {_url(e)} <name>` or check the key" if e.status == 401 else ""
    return f"{args.url} refused the API key: {said}{fix}"


def _signup_closed(args: argparse.Namespace, e: ApiError, said: str) -> str:
    if args.admin_key or os.environ.get("SAND_ADMIN_KEY"):
        return f"{said}; check the operator's admin key (--admin-key or SAND_ADMIN_KEY)"
    said = said.split(": ", 1)[0] if e.status == 401 else said  # drop the header advice meant for curl
    return (
        f"{said}; ask the operator for an API key and store it with `sand login {_url(e)} <api-key>` (the "
        f"operator runs `sand signup {_url(e)} <name> --admin-key <admin key>`)"
    )


def _as_said(args: argparse.Namespace, e: ApiError, said: str) -> str:
    return said  # what failed is all there is to say; the REST advice is for curl


def _no_app(args: argparse.Namespace, e: ApiError, said: str) -> str:
    return f"{said}; deploy it with `sand deploy <folder> --name {args.app}`, or list yours with `sand apps`"


def _nothing_to_undeploy(args: argparse.Namespace, e: ApiError, said: str) -> str:
    return f"{said}; list yours with `sand apps`"


def _not_deployed(args: argparse.Namespace, e: ApiError, said: str) -> str:
    return f"{said}; deploy it with `sand deploy <folder> --name {args.app}`"


def _invoke_timeout(args: argparse.Namespace, e: ApiError, said: str) -> str | None:
    if not e.execution_id:
        return None
    return (
        f"{said}; its result, if it comes, is shown by `sand execution {e.execution_id}`, its logs by "
        f"`sand logs {e.execution_id}`"
    )


def _name_taken(args: argparse.Namespace, e: ApiError, said: str) -> str | None:
    if not (e.method == "PUT" and e.path.startswith("/api/v1/apps/") and "/grains/" not in e.path):
        return None  # e.g. racing grain uploads (PUT /api/v1/apps/{app}/grains/...): the API's words say it
    return f"{said}; deploy under another name with `sand deploy {args.app_dir} --name <name>`"


def _missing_grain(args: argparse.Namespace, e: ApiError, said: str) -> str:
    grain = _quoted(str(e), "needs grain") or "<grain>"
    return (
        f"{said}; add {grain}.py (or {grain}/__init__.py) to {args.app_dir} and run `sand deploy {args.app_dir}` again"
    )


def _still_deployed(args: argparse.Namespace, e: ApiError, said: str) -> str | None:
    if e.method != "DELETE":
        return None
    return f"{said}; once `sand status {args.app}` says undeployed, run `sand undeploy {args.app} --delete` again"


def _no_grain(args: argparse.Namespace, e: ApiError, said: str) -> str:
    app = getattr(args, "app", None)
    return f"{said}; list them with `sand grains{f' {app}' if app else ''}`"


def _grain_in_use(args: argparse.Namespace, e: ApiError, said: str) -> str:
    app = _quoted(str(e), "application") or "<app>"
    own = f" --app {args.app}" if getattr(args, "app", None) else ""
    return f"{said}; undeploy it first with `sand undeploy {app}`, then run `sand grain delete {args.grain}{own}` again"


# (command, status, code) -> hint; command "*" is any command without an entry of its own.
def _account_in_use(args: argparse.Namespace, e: ApiError, said: str) -> str:
    return f"{said}; undeploy each with `sand undeploy <app>`, then run `sand account delete {args.name}` again"


HINTS: dict[tuple[str, int, str], Hint] = {
    ("*", 400, "bad_request"): _as_said,  # e.g. a name the URL cannot hold
    ("*", 401, "unauthorized"): _no_account,
    ("*", 404, "not_found"): _as_said,
    ("login", 401, "unauthorized"): _login_refused,
    ("login", 403, "account_disabled"): _login_refused,
    ("signup", 401, "unauthorized"): _signup_closed,
    ("signup", 403, "forbidden"): _signup_closed,
    ("status", 404, "not_found"): _no_app,
    ("undeploy", 404, "not_found"): _nothing_to_undeploy,
    ("undeploy", 409, "conflict"): _still_deployed,
    ("invoke", 404, "not_found"): _no_app,
    ("invoke", 409, "conflict"): _not_deployed,
    ("invoke", 504, "timeout"): _invoke_timeout,
    ("deploy", 400, "missing_grain"): _missing_grain,
    ("deploy", 409, "conflict"): _name_taken,
    ("grain delete", 404, "not_found"): _no_grain,
    ("grain delete", 409, "conflict"): _grain_in_use,
    ("account delete", 409, "conflict"): _account_in_use,
}


def command_of(args: argparse.Namespace) -> str:
    """The `sand` command the arguments are for, with its subcommand: "status", "grain delete"."""
    sub = (
        getattr(args, "grain_command", None)
        or getattr(args, "admin_command", None)
        or getattr(args, "account_command", None)
    )
    return f"{args.command} {sub}" if sub else str(args.command)


def explain(args: argparse.Namespace, e: ApiError) -> str:
    """The message to show for `e`: the API's, its REST advice replaced by the `sand` command to run."""
    command = command_of(args)
    hint = HINTS.get((command, e.status, e.code)) or HINTS.get(("*", e.status, e.code))
    said = hint(args, e, without_rest_advice(str(e))) if hint else None
    return said or str(e)
