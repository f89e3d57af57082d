"""`sand admin ...`: the operator's commands (the admin key): every account's applications, the hosts (cordon,
drain, uncordon, remove), undeploy, disable, the cluster secret's rotation (docs/operations.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from sandclient._commands import _run
from sandclient.client import ApiError, Client, app_hosts

__all__ = ["admin_client", "cmd_admin"]


def admin_client(args: argparse.Namespace) -> Client:
    """A client with the operator's admin key: --admin-key, $SAND_ADMIN_KEY, --admin-key-file, or the file `make up`
    writes ($SAND_HOME/admin-key, .sand/admin-key here); the address from --url, $SAND_URL or the stored login."""
    import os

    key = args.admin_key or os.environ.get("SAND_ADMIN_KEY", "")
    files = (
        [args.admin_key_file]
        if args.admin_key_file
        else [
            str(Path(os.environ["SAND_HOME"]) / "admin-key") if os.environ.get("SAND_HOME") else "",
            ".sand/admin-key",
        ]
    )
    for f in filter(None, files):
        if not key and Path(f).is_file():
            key = Path(f).read_text().strip()
    if not key:
        raise ApiError(
            0,
            "config",
            "no admin key: pass --admin-key, set SAND_ADMIN_KEY, or --admin-key-file "
            "$SAND_HOME/admin-key (make up writes it there)",
        )
    url = args.url or os.environ.get("SAND_URL", "")
    if not url:
        try:
            url = Client.from_login().url
        except ApiError:
            raise ApiError(0, "config", "no SAND address: pass --url http://127.0.0.1:8080 or set SAND_URL") from None
    return Client(url, key)


def _admin(args: argparse.Namespace) -> int:
    client = admin_client(args)
    if args.admin_command == "apps":
        rows = client.admin_apps()
        if args.json:
            print(json.dumps(rows, indent=2))
            return 0
        print(f"{'APP':<24} {'OWNER':<16} {'STATUS':<12} {'VER':>3}  HOSTS / ERROR")
        for a in rows:
            hosts = " ".join(f"{h}:{s}" for h, s, _ in app_hosts(a)) or "-"
            error_line = (a.get("error") or "").splitlines()[0][:100] if a.get("error") else ""
            print(
                f"{a['name']:<24} {a['owner']:<16} {a['status']:<12} {a['version']:>3}  {hosts}"
                + (f"  {error_line}" if error_line else "")
            )
    elif args.admin_command == "hosts":
        rows = client.admin_hosts()
        if args.json:
            print(json.dumps(rows, indent=2))
            return 0
        print(f"{'HOST':<12} {'ALIVE':<6} {'SCHEDULE':<12} {'HEARTBEAT':<26} {'MEMORY (MB)':<16} {'CPUS':<9} SANDBOXES")
        for h in rows:
            boxes = " ".join(f"{s['app']}:{s['status']}" for s in h["sandboxes"]) or "-"
            sched = "drained" if h.get("drained") else h.get("schedule", "-")
            memory, cpus = _use(h)
            print(
                f"{h['host']:<12} {'yes' if h['alive'] else 'NO':<6} {sched:<12} {h['heartbeat'] or '-':<26} "
                f"{memory:<16} {cpus:<9} {boxes}"
            )
    elif args.admin_command in ("cordon", "drain", "uncordon", "remove"):
        return _admin_host(client, args)
    elif args.admin_command == "cluster-secret":
        return _cluster_secret(client, args)
    elif args.admin_command == "undeploy":
        a = client.admin_undeploy(args.app)
        print(f"{a['name']} (account {a['owner']}): {a['status']}")
    elif args.admin_command == "disable":
        d = client.admin_disable(args.account, args.reason or "")
        print(f"account {d['account']}: disabled ({d['reason']}); undeployed: {', '.join(d['undeployed']) or 'none'}")
    else:
        client.admin_enable(args.account)
        print(f"account {args.account}: enabled (its applications stay undeployed: `sand deploy` them again)")
    return 0


def _use(h: dict[str, Any]) -> tuple[str, str]:
    """A host's sandboxes' memory and CPU limits against what it has: "768/4096", "1.5/2" ("-" for what a host
    agent older than this did not report)."""
    use, res = h.get("use") or {}, h.get("resources") or {}
    if not use:
        return "-", "-"
    memory = f"{use['sandbox_memory_mb']}/{res.get('memory_mb') or '-'}"
    return memory, f"{use['sandbox_cpus']:g}/{res.get('cpus') or '-'}"


def _admin_host(client: Client, args: argparse.Namespace) -> int:
    """sand admin cordon|drain|uncordon|remove HOST: the host's new schedule, and with drain --wait S until no
    application is deployed or deploying there any more."""
    r = client.admin_host(args.host, args.admin_command, getattr(args, "reason", None) or "")
    if args.admin_command == "remove":
        print(f"host {r['host']}: removed from the cluster state")
        return 0
    print(f"host {r['host']}: {r['schedule']}; {r['next']}")
    deadline = time.monotonic() + (getattr(args, "wait", 0) or 0)
    if args.admin_command != "drain" or deadline <= time.monotonic():
        return 0
    started = time.monotonic()
    while True:
        host = next((h for h in client.admin_hosts() if h["host"] == args.host), {})
        if host.get("drained"):
            print(f"host {args.host}: drained in {time.monotonic() - started:.1f} s")
            return 0
        if time.monotonic() >= deadline:
            left = " ".join(f"{s['app']}:{s['status']}" for s in host.get("sandboxes", []))
            print(f"host {args.host}: not drained after {args.wait:.0f} s (still: {left or '?'})", file=sys.stderr)
            return 1
        time.sleep(0.5)


def _secret_state(state: dict[str, Any]) -> str:
    fp = {k: (state.get(k) or {}).get("fingerprint", "-") for k in ("current", "next", "previous")}
    return f"current {fp['current']}, next {fp['next']}, previous {fp['previous']} ({state['step']})"


def _cluster_secret(client: Client, args: argparse.Namespace) -> int:
    """sand admin cluster-secret [show|begin|switch|finish|rotate]: one step, or all three (those left of a rotation
    under way), each once the one before has reached every process (the API says when: next_step_allowed_in_s)."""
    if args.step in ("show", "begin", "switch", "finish"):
        state = client.admin_cluster_secret("" if args.step == "show" else args.step)
        print(_secret_state(state))
        if state.get("next_step_allowed_in_s"):
            print(f"next step: {state['next_step']}, allowed in {state['next_step_allowed_in_s']} s")
        if "resealed" in state:
            r = state["resealed"]
            print(f"sealed again: {r['secrets']} secrets, {r['signing_secrets']} signing secrets")
        return 0
    started = switched = time.monotonic()
    steps = ("begin", "switch", "finish")
    under_way = client.admin_cluster_secret()["next_step"]  # a rotation interrupted goes on where it stopped
    for step in steps[steps.index(under_way) :]:
        state = client.admin_cluster_secret()
        wait = float(state.get("next_step_allowed_in_s") or 0)
        if step == "finish":
            wait = max(wait, args.finish_after - (time.monotonic() - switched))
        if wait > 0:
            print(f"waiting {wait:.0f} s before {step}", flush=True)
            time.sleep(wait)
        state = client.admin_cluster_secret(step)
        switched = time.monotonic()
        print(f"{step} ({time.monotonic() - started:.0f} s): {_secret_state(state)}", flush=True)
    r = state["resealed"]
    print(
        f"rotated in {time.monotonic() - started:.0f} s; sealed again: {r['secrets']} secrets, "
        f"{r['signing_secrets']} signing secrets"
    )
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    return _run(_admin, args)
