"""KNIX's own test suite against SAND, through the PyPI SDK only (issue 30: "KNIX parity, measured by KNIX's tests").

The `tests/` folder of KNIX's repository is exported at run time (`git archive`) into a scratch directory, never
copied into this repository. Each folder runs as KNIX's tests/Makefile runs it (`python -m unittest discover -v` in
the folder), with KNIX's settings.json written for the given SAND URL and PYTHONPATH not pointing at KNIX's own SDK:
the tests import `mfn_sdk` 0.8.9 from this venv, so SAND is measured by the SDK its users have.

    python benchmarks/knix_suite.py --url http://127.0.0.1:8080            # every folder
    python benchmarks/knix_suite.py --url ... --only echo asl_Fail          # some folders

Writes benchmarks/results/knix_suite.json (per folder: pass/fail/set aside, duration, the failing output's last
lines) and prints a table. Exit status 0 when every counted folder passed, 1 otherwise, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, write_result  # noqa: E402

DEFAULT_REPO = Path("/work/.mirror/knix-microfunctions+knix/repo")
# Folders set aside by rule, with the reason: the issue's exceptions ("Java functions, the one that calls internet
# services, and the ones that need an AMQP broker"), and one whose premise the world changed (import_error). Every
# other folder counts.
SET_ASIDE_PREFIXES = {"java_": "Java functions (SAND runs Python grains)"}
SET_ASIDE = {
    "etl": "calls an internet service (newsapi.org) from its functions",
    "triggers_amqp": "needs an AMQP broker",
    "triggers_timer_based_trigger_control": "needs an AMQP broker (it starts RabbitMQ in Docker)",
    "asl_Context": "its second test deploys a Java function (its Python test passes: docs/knix.md)",
    "import_error": "expects `pip install numpyu` to fail, but numpyu has since been published on PyPI",
}
TAIL_LINES = 25
# How the suite's helper (mfn_test_utils.report) and its own tests print a failed check: unittest still says OK, so a
# folder passes only when unittest does and no check printed this.
CHECK_FAILED = "\033[1m\033[91mFAILED\033[0m"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# The suite's shared helper at KNIX's HEAD passes an `endpoint` argument to Workflow.execute() that came with commit
# 632783a (2021-06-08, "sdk: allow endpoint selection"), after the last SDK published on PyPI (0.8.9). The helper of
# that commit's parent is the newest that speaks the published SDK; every test folder is HEAD's, unchanged.
UTILS_REVISION = "632783a^"


def set_aside_reason(folder: str) -> str | None:
    for prefix, reason in SET_ASIDE_PREFIXES.items():
        if folder.startswith(prefix):
            return reason
    return SET_ASIDE.get(folder)


def export_tests(repo: Path, dest: Path) -> tuple[Path, str]:
    """`git archive HEAD tests` of KNIX's (bare or not) repository into dest; returns the tests dir and the commit."""
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    blob = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "tests"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(dest, filter="data")
    utils = subprocess.run(
        ["git", "-C", str(repo), "show", f"{UTILS_REVISION}:tests/mfn_test_utils.py"], check=True, capture_output=True
    ).stdout
    (dest / "tests" / "mfn_test_utils.py").write_bytes(utils)
    return dest / "tests", commit


def write_settings(tests: Path, url: str, user: str, password: str, name: str, timeout: int) -> None:
    settings = {
        "mfn_url": url,
        "mfn_user": user,
        "mfn_password": password,
        "mfn_name": name,
        "proxies": {},
        "timeout": timeout,
    }
    (tests / "settings.json").write_text(json.dumps(settings, indent=4) + "\n")


def folders(tests: Path) -> list[str]:
    return sorted(p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("*.py")))


def run_folder(folder: Path, timeout: float, home: Path) -> dict[str, Any]:
    """One folder as KNIX's Makefile runs it; the outcome is unittest's (its exit status and its summary line)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "MFN_URL", "MFN_USER", "MFN_PASSWORD", "MFN_NAME")
    }
    # mfn_sdk also reads ~/settings.json and ~/.mfn/config.json: a scratch HOME keeps a person's own settings out
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "unittest", "discover", "-v"],
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
        out = proc.stdout.decode(errors="replace")
        timed_out = False
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else str(e.stdout or "")
        timed_out = True
    duration = round(time.monotonic() - start, 1)
    unittest_ok = not timed_out and proc.returncode == 0 and "\nOK" in out
    checks_failed = [ANSI.sub("", line)[:400] for line in out.splitlines() if CHECK_FAILED in line]
    status = "pass" if unittest_ok and not checks_failed else "fail"
    result: dict[str, Any] = {
        "status": status,
        "duration_s": duration,
        "tests": _tests_ran(out),
        "unittest_ok": unittest_ok,
        "checks_failed": len(checks_failed),
    }
    if timed_out:
        result["reason"] = f"timed out after {timeout:.0f}s"
    elif checks_failed:
        result["reason"] = f"{len(checks_failed)} check(s) printed FAILED: {checks_failed[0][:120]}"
    if status == "fail":
        result["failed_checks"] = checks_failed[:10]
        result["tail"] = [ANSI.sub("", line) for line in out.strip().splitlines()[-TAIL_LINES:]]
    return result


def _tests_ran(out: str) -> int | None:
    for line in out.splitlines():
        if line.startswith("Ran ") and " test" in line:
            try:
                return int(line.split()[1])
            except ValueError:
                return None
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default=os.environ.get("SAND_URL", "http://127.0.0.1:8080"), help="SAND's URL (nginx)")
    ap.add_argument("--only", nargs="+", metavar="FOLDER", help="run only these folders of KNIX's tests/")
    ap.add_argument("--repo", type=Path, default=DEFAULT_REPO, help=f"KNIX's git repository (default {DEFAULT_REPO})")
    ap.add_argument("--timeout", type=int, default=420, help="seconds per folder before it counts as failed")
    ap.add_argument("--user", default="knix-suite@sand.test")
    ap.add_argument("--password", default="knix-suite-password")
    ap.add_argument("--exec-timeout", type=int, default=60, help="the suite's own settings.json 'timeout' (seconds)")
    args = ap.parse_args(argv)
    if not (args.repo / "HEAD").exists() and not (args.repo / ".git").exists():
        print(
            f"Error: no KNIX repository at {args.repo}. "
            "Clone https://github.com/knix-microfunctions/knix and pass --repo PATH.",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="knix-suite-") as scratch:
        tests, commit = export_tests(args.repo, Path(scratch))
        home = Path(scratch) / "home"
        home.mkdir()
        write_settings(tests, args.url, args.user, args.password, "KNIX suite on SAND", args.exec_timeout)
        names = folders(tests)
        if args.only:
            unknown = sorted(set(args.only) - set(names))
            if unknown:
                print(
                    f"Error: no such folder in KNIX's tests/: {', '.join(unknown)} (have: {' '.join(names)})",
                    file=sys.stderr,
                )
                return 2
            names = [n for n in names if n in args.only]
        results: dict[str, dict[str, Any]] = {}
        for name in names:
            reason = set_aside_reason(name)
            if reason:
                results[name] = {"status": "set aside", "reason": reason}
            else:
                print(f"... {name}", file=sys.stderr, flush=True)
                results[name] = run_folder(tests / name, args.timeout, home)
            _print_row(name, results[name])
    counted = [r for r in results.values() if r["status"] != "set aside"]
    passed = sum(r["status"] == "pass" for r in counted)
    summary = {
        "passed": passed,
        "failed": len(counted) - passed,
        "counted": len(counted),
        "set_aside": len(results) - len(counted),
    }
    data = {
        "url": args.url,
        "knix_commit": commit,
        "mfn_test_utils_from": UTILS_REVISION,
        "machine": machine(),
        "summary": summary,
        "folders": results,
    }
    if not args.only:
        path = write_result("knix_suite", data)
    else:
        path = write_result("knix_suite_only", data)
    print(f"\n{passed} of {len(counted)} counted folders pass ({summary['set_aside']} set aside); {path}")
    return 0 if passed == len(counted) else 1


def _print_row(name: str, r: dict[str, Any]) -> None:
    extra = r.get("reason") or ("" if r["status"] == "pass" else (r.get("tail") or [""])[-1][:60])
    dur = f"{r['duration_s']:6.1f}s" if "duration_s" in r else "       "
    print(f"{name:40s} {r['status']:9s} {dur}  {extra}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
