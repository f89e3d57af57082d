"""Run one grain worker: ``python -m grainworker --app A --grain G --code DIR --workflow FILE ...``.

The credential for the local bus and data layer comes from the environment
(``SAND_GRAINWORKER_CREDENTIAL``), never the command line (it would show in ``ps``). Every option has
an environment default ``SAND_GRAINWORKER_<OPTION>`` (upper case, dashes as underscores).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
from functools import partial
from pathlib import Path

from grainworker import _logs, appenv
from grainworker.datalayer import DataLayerClient
from grainworker.instance import InstanceSpec
from grainworker.localbus import LocalBusClient, report_worker
from grainworker.worker import GrainWorker, WorkerConfig, load_grain
from grainworker.workflow import (
    DEFAULT_CONCURRENCY,
    DEFAULT_SESSION_FUNCTIONS_MAX,
    DEFAULT_SESSION_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
    Workflow,
    WorkflowError,
    parse_workflow,
)

log = logging.getLogger(__name__)

EXIT_LOAD_FAILED = 3  # the grain's code did not import (the supervisor restarts the worker with its back-off)

SETTINGS = [
    # (option, default, help) -- declared once; docs/config.md lists them.
    ("app", None, "application name"),
    ("grain", None, "grain name (its local queue is <app>/<grain>)"),
    ("code", None, "folder holding the grain's code (<resource>.py) and its libraries"),
    ("workflow", None, "the application's workflow JSON file"),
    ("bus", None, "local bus address: host:port or unix:/path"),
    ("data", None, "local data layer address: host:port or unix:/path"),
    ("local-grains", "", "grains of the workflow running on this host, comma-separated (default: all)"),
    ("concurrency", str(DEFAULT_CONCURRENCY), "most grain instances running at once; more events wait in the queue"),
    ("timeout", f"{DEFAULT_TIMEOUT_S:g}", "seconds an instance may run before it is killed"),
    ("memory-mb", "0", "address space an instance may map beyond the worker's, MB (0 = no limit)"),
    ("standby", "1", "keep a pre-forked standby instance (1) or fork on demand (0)"),
    (
        "session-timeout",
        f"{DEFAULT_SESSION_TIMEOUT_S:g}",
        "seconds a session function's instance may run before it is killed",
    ),
    (
        "session-functions-max",
        str(DEFAULT_SESSION_FUNCTIONS_MAX),
        "most session function instances of the application at once in the sandbox",
    ),
]


def env_name(option: str) -> str:
    return "SAND_GRAINWORKER_" + option.upper().replace("-", "_")


def settings_markdown() -> str:
    """The reference table for docs/config.md."""
    rows = ["| option | environment | default | what it does |", "|---|---|---|---|"]
    rows += [f"| `--{o}` | `{env_name(o)}` | {'required' if d is None else f'`{d}`'} | {t} |" for o, d, t in SETTINGS]
    rows.append(
        "| (none) | `SAND_GRAINWORKER_CREDENTIAL` | required | the sandbox's credential for the local bus "
        "and data layer (never on the command line) |"
    )
    return "\n".join(rows) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m grainworker", description="SAND grain worker")
    for option, default, text in SETTINGS:
        value = os.environ.get(env_name(option), default)
        ap.add_argument(f"--{option}", default=value, required=value is None, help=f"{text} [{env_name(option)}]")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    _logs.configure()
    return serve(
        args.app,
        args.grain,
        args.code,
        args.workflow,
        args.bus,
        args.data,
        args.local_grains,
        int(args.concurrency),
        float(args.timeout),
        int(args.memory_mb),
        args.standby not in ("0", "false"),
        session_timeout_s=float(args.session_timeout),
        session_functions_max=int(args.session_functions_max),
    )


def serve(
    app: str,
    grain_name: str,
    code: str,
    workflow_file: str | Workflow,
    bus: str,
    data: str,
    local_grains: str | frozenset[str],
    concurrency: int,
    timeout_s: float,
    memory_mb: int,
    standby: bool,
    announce: bool = False,
    session_timeout_s: float = DEFAULT_SESSION_TIMEOUT_S,
    session_functions_max: int = DEFAULT_SESSION_FUNCTIONS_MAX,
) -> int:
    """Run the grain worker until it is stopped. The sandbox's supervisor calls this in the worker it forks, with
    the workflow it parsed once for all of them (no argument parsing and no parsing of the workflow there: every
    page the worker writes stops being shared with the supervisor; argparse alone writes ~3.5 MB). ``announce``: this
    worker was started for new code (supervisor ``reload``): it tells the host agent once the code has loaded."""
    credential = os.environ.get("SAND_GRAINWORKER_CREDENTIAL", "")
    if not credential:
        print(
            "Error: SAND_GRAINWORKER_CREDENTIAL is not set: the sandbox's credential for the local bus", file=sys.stderr
        )
        return 2
    try:
        workflow = (
            workflow_file if isinstance(workflow_file, Workflow) else parse_workflow(Path(workflow_file).read_bytes())
        )
        grain = workflow.grain(grain_name)
    except (OSError, WorkflowError) as e:
        print(f"Error: {e}", file=sys.stderr)
        if isinstance(e, WorkflowError):  # the deploy fails saying why (an ASL rule the platform's side left here)
            try:
                report_worker(bus, credential, app, grain_name, "load-failed", f"workflow: {e}")
            except Exception as r:  # noqa: BLE001 - the line above says it all
                log.warning("could not report the workflow error: %s", r)
            return EXIT_LOAD_FAILED
        return 2
    # a set is the supervisor's, exactly (empty: no local shortcut); the command line's "" means every grain
    local = (
        local_grains
        if isinstance(local_grains, frozenset)
        else (frozenset(g for g in local_grains.split(",") if g) or frozenset(workflow.grains))
    )
    spec = InstanceSpec(app, grain_name, workflow, local, timeout_s, session_timeout_s, session_functions_max)
    cfg = WorkerConfig(
        app=app,
        grain=grain_name,
        spec=spec,
        code_dir=code,
        bus_address=bus,
        data_address=data,
        credential=credential,
        max_concurrency=concurrency,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        standby=standby,
    )
    try:
        appenv.install_from_environ()  # before the grain's code loads: module-level code may read its config
    except appenv.AppEnvError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    if grain.asl is None:
        handler, load_error = load_grain(code, grain.code)
    else:  # an Amazon States Language state: built-in code, around the uploaded grain a Task names
        from grainworker import aslrun

        task, load_error = load_grain(code, grain.code) if grain.code else (None, "")
        handler = aslrun.make_handler(workflow, grain_name, task)
    if load_error:
        # The deploy fails with this (the host agent hears it before the deploy's wait for pollers ends: this worker
        # never polls); the supervisor restarts the worker, in case what failed was passing.
        try:
            report_worker(
                bus, credential, app, grain_name, "load-failed", f"grain {grain_name} failed to load: {load_error}"
            )
        except Exception as e:  # noqa: BLE001 - the log line of load_grain says it all
            log.warning("could not report that grain %s failed to load: %s", grain_name, e)
        return EXIT_LOAD_FAILED
    gc.collect()
    gc.freeze()  # the standby and every instance are forks of this process: collections there leave these pages shared
    worker = GrainWorker(
        cfg, handler, partial(LocalBusClient, bus, credential), partial(DataLayerClient, data, credential)
    )
    signal.signal(signal.SIGTERM, worker.stop)
    signal.signal(signal.SIGINT, worker.stop)
    if announce:
        try:
            report_worker(bus, credential, app, grain_name, "reloaded", f"grain worker {grain_name} runs its new code")
        except Exception as e:  # noqa: BLE001 - the host agent then waits for it until its deadline
            log.warning("could not report that grain %s runs its new code: %s", grain_name, e)
    worker.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
