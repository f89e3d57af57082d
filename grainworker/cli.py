"""The `sand` command line: developers' entry point.

    sand emulate <app-dir> [--input JSON | --input @file] [--port 5000]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _error(message: str) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return 1


def _read_input(text: str) -> Any:
    if text.startswith("@"):
        text = Path(text[1:]).read_text()
    return json.loads(text)


def cmd_emulate(args: argparse.Namespace) -> int:
    from grainworker.emulator import Emulator, EmulatorError

    try:
        value = _read_input(args.input) if args.input is not None else None
    except (OSError, json.JSONDecodeError) as e:
        return _error(f"--input is not valid JSON: {e}")
    try:
        emulator = Emulator(args.app_dir, timeout_s=args.timeout, standby=not args.no_standby)
    except EmulatorError as e:
        return _error(str(e))
    with emulator:
        if args.input is not None:
            try:
                result, execution_id = emulator.invoke(value)
            except TimeoutError as e:
                return _error(str(e))
            print(json.dumps(result, indent=2))
            print(f"execution id: {execution_id}", file=sys.stderr)
            return 1 if isinstance(result, dict) and set(result) == {"error"} else 0
        from grainworker.emulator._http import create_app

        print(f"Emulating {emulator.app!r} from {emulator.app_dir}: "
              f"curl -X POST http://127.0.0.1:{args.port}/app/{emulator.app} -d '{{...}}'", file=sys.stderr)
        create_app(emulator).run(host="127.0.0.1", port=args.port, threaded=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sand", description="SAND serverless platform")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command")
    emu = sub.add_parser("emulate", help="run an application folder locally, no Docker/Kafka/Cassandra")
    emu.add_argument("app_dir", help="folder with workflow.json and the grains' .py files")
    emu.add_argument("--input", help="run once with this JSON (or @file) and print the result")
    emu.add_argument("--port", type=int, default=5000, help="HTTP port to serve POST /app/<name> on")
    emu.add_argument("--timeout", type=float, default=30.0, help="grain timeout in seconds")
    emu.add_argument("--no-standby", action="store_true", help="fork on demand instead of a pre-forked standby")
    emu.set_defaults(func=cmd_emulate)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from importlib.metadata import version

        print(version("sand"))
        return 0
    if not getattr(args, "func", None):
        parser.print_usage(sys.stderr)
        print("Error: no command given; try `sand emulate <app-dir> --input '{}'`", file=sys.stderr)
        return 2
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
