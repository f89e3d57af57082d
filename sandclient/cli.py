"""The `sand` command line: developers' entry point.

    sand signup <url> <name>            create an account and store its API key
    sand login <url> <api-key>          store url and key (~/.config/sand/credentials.json, mode 0600)
    sand deploy <app-dir>               upload the folder's grains and workflow.json, deploy, wait
    sand update <app> <grain>... [--dir <app-dir>]  new code for some grains: only their grain workers restart
    sand invoke <app> [json|@file] [--async]
    sand status <app> | sand logs <execution-id> | sand execution <execution-id> | sand undeploy <app>
    sand apps | sand grains | sand grain delete <grain>    your applications; your grains; delete a grain
    sand emulate <app-dir> [--input JSON | --input @file] [--port 5000]

SAND_URL and SAND_API_KEY override the stored login. Errors print `Error: ...` on stderr and exit 1, naming
the `sand` command to run next (sandclient._hints); usage errors exit 2. Everything but `emulate` is a call
of the Python client, `sandclient.Client`, over the REST API only (docs/api.md); `emulate` runs the emulator
(the `sandemu` package).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grainworker.workflow import DEFAULT_TIMEOUT_S
from sandclient import _cmd_admin, _cmd_buckets, _cmd_data, _cmd_executions, _cmd_triggers, _cmd_versions
from sandclient import _commands as commands
from sandclient._cmd_alias import add_alias_commands
from sandclient._cmd_endpoint import add_endpoint_commands, add_invoke_options
from sandclient._cmd_secrets import add_secret_commands


def _error(message: str) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return 1


def _read_input(text: str) -> Any:
    if text.startswith("@"):
        text = Path(text[1:]).read_text()
    return json.loads(text)


def cmd_emulate(args: argparse.Namespace) -> int:
    """Errors are one `Error: ...` line and exit 1, as a failed deploy or invoke says them (--debug: the traceback)."""
    from sandemu import Emulator, EmulatorError

    try:
        value = _read_input(args.input) if args.input is not None else None
    except (OSError, json.JSONDecodeError) as e:
        return _error(f"--input is not valid JSON: {e}")
    try:
        emulator = Emulator(args.app_dir, timeout_s=args.timeout, standby=not args.no_standby)
        with emulator:
            emulator.wait_loaded()  # a grain that does not load fails the run, as it fails a deploy
            if args.input is not None:
                result, execution_id = emulator.invoke(value)
                print(json.dumps(result, indent=2))
                print(f"execution id: {execution_id}", file=sys.stderr)
                return 1 if isinstance(result, dict) and set(result) == {"error"} else 0
            from sandemu._http import create_app

            print(
                f"Emulating {emulator.app!r} from {emulator.app_dir}: "
                f"curl -X POST http://127.0.0.1:{args.port}/app/{emulator.app} -d '{{...}}'",
                file=sys.stderr,
            )
            create_app(emulator).run(host="127.0.0.1", port=args.port, threaded=True)
    except (EmulatorError, TimeoutError, OSError) as e:
        if args.debug:
            import traceback

            traceback.print_exc()
        return _error(str(e))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sand", description="SAND serverless platform")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    emu = sub.add_parser("emulate", help="run an application folder locally, no Docker/Kafka/Cassandra")
    emu.add_argument("app_dir", help="folder with workflow.json and the grains' .py files")
    emu.add_argument("--input", help="run once with this JSON (or @file) and print the result")
    emu.add_argument("--port", type=int, default=5000, help="HTTP port to serve POST /app/<name> on")
    emu.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"grain timeout in seconds (default: as deployed, settings.json's timeout_s, else {DEFAULT_TIMEOUT_S:g})",
    )
    emu.add_argument("--no-standby", action="store_true", help="fork on demand instead of a pre-forked standby")
    emu.add_argument("--debug", action="store_true", help="print an error's traceback too")
    emu.set_defaults(func=cmd_emulate)
    _add_api_commands(sub)
    return parser


def _add_api_commands(sub: Any) -> None:
    p = sub.add_parser("signup", help="create an account (POST /api/v1/accounts) and store its API key")
    p.add_argument("url", help="the SAND address, e.g. http://127.0.0.1:8080")
    p.add_argument("name", help="account name")
    p.add_argument("--admin-key", help="the operator's admin key, when open sign-up is off (or SAND_ADMIN_KEY)")
    p.set_defaults(func=commands.cmd_signup)
    p = sub.add_parser("login", help="check and store the SAND address and your API key")
    p.add_argument("url", help="the SAND address, e.g. http://127.0.0.1:8080")
    p.add_argument("api_key", help="your API key (from `sand signup` or the operator)")
    p.set_defaults(func=commands.cmd_login)
    p = sub.add_parser("deploy", help="upload an application folder's grains and workflow, deploy, wait")
    p.add_argument("app_dir", help="folder with workflow.json, the grains' .py files, optional requirements.txt")
    p.add_argument("--name", help="deploy under this application name instead of workflow.json's name")
    p.add_argument("--settings", help="application settings as JSON or @file (merged over the folder's settings.json)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for deployed/failed")
    p.add_argument("--no-wait", action="store_true", help="return once the deploy started")
    p.set_defaults(func=commands.cmd_deploy)
    p = sub.add_parser(
        "update",
        help="new code for grains of a deployed application: only their grain workers restart (no new sandbox)",
    )
    p.add_argument("app", help="the deployed application")
    p.add_argument("grains", nargs="+", metavar="grain", help="the grain(s) whose code changed")
    p.add_argument("--dir", default=".", help="the application folder with the new code (default: this folder)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait until every host runs it")
    p.add_argument("--no-wait", action="store_true", help="return once the update started")
    p.set_defaults(func=commands.cmd_update)
    p = sub.add_parser("invoke", help="run an application once with a JSON input and print its output")
    p.add_argument("app", help="application name")
    p.add_argument("input", nargs="?", help="JSON input, @file, or @- for stdin (default: null)")
    p.add_argument("--async", dest="async_", action="store_true", help="do not wait; print the execution id")
    p.add_argument("--timeout", type=float, default=330.0, help="seconds to wait for the HTTP answer")
    add_invoke_options(p)
    p.set_defaults(func=commands.cmd_invoke)
    p = sub.add_parser("status", help="an application's status, hosts and error")
    p.add_argument("app", help="application name")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=commands.cmd_status)
    p = sub.add_parser("logs", help="an application's recent executions' log lines, or one execution's")
    p.add_argument(
        "execution_id",
        metavar="app|execution_id",
        help="an application (its recent executions) or an execution id (from `sand invoke`)",
    )
    p.add_argument(
        "--since",
        default="1h",
        help="an application's executions started this long ago or later: 30s, 10m, 2h, 1d (default 1h)",
    )
    p.add_argument("--follow", "-f", action="store_true", help="keep printing new executions' lines until Ctrl-C")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=commands.cmd_logs)
    p = sub.add_parser("execution", help="an execution's status, result, error and timings (JSON)")
    p.add_argument("execution_id", help="from `sand invoke --async`")
    p.add_argument("--timings", action="store_true", help="print only its per-hop timeline, one step a line")
    p.add_argument(
        "--instances", action="store_true", help="print its grain instances (every branch and Map item), with parents"
    )
    p.set_defaults(func=commands.cmd_execution)
    _cmd_executions.add_parser(sub)
    _cmd_versions.add_parsers(sub)
    _cmd_data.add_parser(sub)
    _cmd_triggers.add_parsers(sub)
    _cmd_buckets.add_parsers(sub)
    _add_listing_commands(sub)
    add_secret_commands(sub)
    add_endpoint_commands(sub)
    add_alias_commands(sub)
    account = sub.add_parser("account", help="your account: delete it")
    what = account.add_subparsers(dest="account_command", required=True)
    p = what.add_parser("delete", help="delete your account with its applications and grains (all undeployed)")
    p.add_argument("name", help="your account's name, typed out to confirm")
    account.set_defaults(func=commands.cmd_account)
    _add_admin_commands(sub)
    p = sub.add_parser("undeploy", help="stop an application's sandboxes")
    p.add_argument("app", help="application name")
    p.add_argument("--delete", action="store_true", help="then delete the application")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for undeployed")
    p.add_argument("--no-wait", action="store_true", help="return once the undeploy started")
    p.set_defaults(func=commands.cmd_undeploy)


def _add_listing_commands(sub: Any) -> None:
    p = sub.add_parser("apps", help="your applications: name, status, version, the first line of their error")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=commands.cmd_apps)
    p = sub.add_parser(
        "grains", help="an application's grains (or your shared ones): name, newest version, kind, size, created"
    )
    p.add_argument("app", nargs="?", help="the application (default: the account's shared grains)")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.set_defaults(func=commands.cmd_grains)
    grain = sub.add_parser("grain", help="one of your grains: delete it")
    what = grain.add_subparsers(dest="grain_command", required=True)
    p = what.add_parser("delete", help="delete every version of a grain (not while a deployed application uses it)")
    p.add_argument("grain", help="grain name, as `sand grains [app]` lists it")
    p.add_argument("--app", help="one of this application's own grains (default: a shared grain of the account)")
    grain.set_defaults(func=commands.cmd_grain)


def _add_admin_commands(sub: Any) -> None:
    admin = sub.add_parser(
        "admin",
        help="the operator's commands (admin key): every account's apps, hosts, undeploy, disable, cordon, drain, "
        "the cluster secret",
    )
    admin.add_argument("--url", help="the SAND address (default: $SAND_URL or the stored login's)")
    admin.add_argument("--admin-key", help="the operator's admin key (default: $SAND_ADMIN_KEY)")
    admin.add_argument("--admin-key-file", help="file holding it (default: $SAND_HOME/admin-key, .sand/admin-key)")
    what = admin.add_subparsers(dest="admin_command", required=True)
    p = what.add_parser("apps", help="every application of every account: owner, status, hosts, error")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("hosts", help="every host agent: alive, heartbeat, the sandboxes it runs")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p = what.add_parser("undeploy", help="undeploy any account's application")
    p.add_argument("app", help="application name")
    p = what.add_parser("disable", help="refuse an account's API keys and undeploy its applications")
    p.add_argument("account", help="account name")
    p.add_argument("--reason", help="said to the account's callers in the 403")
    p = what.add_parser("enable", help="let a disabled account's keys in again")
    p.add_argument("account", help="account name")
    p = what.add_parser("cordon", help="place nothing new on a host (what runs there keeps running)")
    p.add_argument("host", help="host id (sand admin hosts)")
    p.add_argument("--reason", help="kept with the host's schedule")
    p = what.add_parser("drain", help="cordon a host and move its applications to the others")
    p.add_argument("host", help="host id (sand admin hosts)")
    p.add_argument("--reason", help="kept with the host's schedule")
    p.add_argument("--wait", type=float, default=0, metavar="S", help="wait up to S seconds until it is drained")
    p = what.add_parser("uncordon", help="make a cordoned or drained host schedulable again")
    p.add_argument("host", help="host id (sand admin hosts)")
    p = what.add_parser("remove", help="remove a dead host from the cluster state (a live one is refused)")
    p.add_argument("host", help="host id (sand admin hosts)")
    p = what.add_parser(
        "cluster-secret",
        help="rotate the cluster secret: show, begin, switch, finish, or rotate (all three, waiting between them)",
    )
    p.add_argument("step", nargs="?", default="show", choices=["show", "begin", "switch", "finish", "rotate"])
    p.add_argument(
        "--finish-after",
        type=float,
        default=330,
        metavar="S",
        help="rotate: wait S seconds after the switch before finish, so executions tagged before it end first "
        "(default 330: the longest synchronous request and a margin)",
    )
    admin.set_defaults(func=_cmd_admin.cmd_admin)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from importlib.metadata import version

        print(version("sand"))
        return 0
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        print(
            "Error: no command given; try `sand emulate examples/hello --input '{}'` or `sand --help`", file=sys.stderr
        )
        return 2
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
