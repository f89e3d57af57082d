"""docs/getting-started.md runs as written: every `$ ` command of its ```console blocks, in order, with bash in the
repository's root, in a fresh HOME (the CLI's stored login goes there), against the running system.

The only change to the guide's text is its names: the account `alice` (and so `hello-alice`, `my-app-alice`, ...)
becomes a fresh name of the same length, as the guide tells a second user to do, so the test can run again and
again on one SAND. Ids and keys the guide took from an earlier command's output (the API key given to
`sand login`, an execution id given to `sand execution`) are the ones this run's output showed.

Each command's exit status must be what the guide implies (1 where its output shows `Error: ...` or a grain's
error event, else 0), and its output (stdout and stderr together) must be the guide's, line for line, except for
what differs from run to run:
  - API keys and invoke keys (and their 16-digit ids), execution ids (32 hex digits, or their first 8) and the host's
    id (`vm` in the guide) stand for whatever this run printed, the same value wherever the guide shows the same one;
  - times (ISO 8601 or `logging`'s), durations (`in 0.6s`, `"duration_ms": 31.0`, `12.5ms`), which frontend answered
    (`fe-8082`) and the home folder (`/root` in the guide) may be anything;
  - a line `...` in the guide stands for one or more lines;
  - the progress lines `<app>: deploying (0/1 hosts)` and `<app>: undeploying (0/1 hosts)` show only when a poll
    happened to see that state, so they are left out on both sides;
  - lines whose order is not fixed are compared as a set, in place of in order: the grain workers' `logging`
    lines in the emulator (one process per grain, writing to the same stderr).
Anything else, a changed, missing or extra line, fails with the command and both outputs.

Afterwards the test undeploys what the guide left running and deletes the account (`sand account delete`).
"""

from __future__ import annotations

import difflib
import json
import os
import random
import re
import signal
import string
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "getting-started.md"
URL = "http://127.0.0.1:8080"  # the address the guide uses
GUIDE_NAME = "alice"  # the guide's account; its applications are <example>-alice
GUIDE_HOME = "/root"  # where the guide's run had its home folder
GUIDE_HOSTS = ("vm",)  # the host ids the guide's run showed
COMMAND_TIMEOUT_S = 300  # the longest command is a deploy (its own wait is 300 s by default, as in the guide)
HEALTH_WAIT_S = 90  # the other services may be restarting: wait this long for the frontend before a command

# Commands that cannot run inside the test: `make` starts or stops the very system the test runs against
# (`make up`: it is already up; `make down` would stop it).
SKIPPED = re.compile(r"^make\b")


@dataclass
class Step:
    command: str
    expected: list[str]  # the output the guide shows under it
    line: int  # where the command is in the guide (1-based)


def guide_steps(text: str) -> list[Step]:
    """The `$ ` commands of every ```console block with the lines shown under each (a command ending in `\\`
    goes on on the next line)."""
    steps: list[Step] = []
    in_block = False
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block = line.strip() == "```console"
        elif in_block and line.startswith("$ "):
            start, command = i + 1, line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command + "\n" + lines[i]
            steps.append(Step(command, [], start))
        elif in_block:
            assert steps, f"{GUIDE.name}:{i + 1}: output before any command in a console block"
            steps[-1].expected.append(line)
        i += 1
    return steps


# --- what may differ from the guide ------------------------------------------------------------------------------

# (kind, pattern in the guide's text, what it may be in the real output); kinds "bound" stand for one value each
# (the same guide token is the same value wherever it shows), "free" ones for anything of their form.
TOKENS: list[tuple[str, str, str]] = [
    ("bound", r"sand_[0-9a-f]{48}", r"sand_[0-9a-f]{48}"),  # API key
    ("bound", r"sik_[A-Za-z0-9_-]{43}", r"sik_[A-Za-z0-9_-]{43}"),  # an application's invoke key
    ("bound", r"(?<![0-9a-z])(?=[a-f]*\d)[0-9a-f]{16}(?![0-9a-z])", r"[0-9a-f]{16}"),  # its id
    ("free", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"),
    ("free", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"),  # logging's
    ("bound", r"(?<![0-9a-z])(?=[a-f]*\d)[0-9a-f]{32}(?![0-9a-z])", r"[0-9a-f]{32}"),  # execution id
    ("bound", r"(?<![0-9a-z])(?=[a-f]*\d)[0-9a-f]{8}(?![0-9a-z])", r"[0-9a-f]{8}"),  # its first 8 digits
    ("free", r"(?<![\w.])\d+\.\d+s\b", r"\d+\.\d+s"),  # "in 0.6s"
    ("free", r'(?<=_ms": )\d+(?:\.\d+)?', r"\d+(?:\.\d+)?"),  # "duration_ms": 31.0
    # an execution's duration in `sand executions`, with the column's padding (its width varies with it)
    ("free", r"(?<= ) *\d+\.\dms\b", r" *\d+\.\dms"),
    ("free", r"\bfe-\d+\b", r"fe-\d+"),  # the frontend that answered
    *[("bound", rf"(?<![\w.-]){re.escape(h)}(?![\w-])", r"[A-Za-z0-9_.-]+") for h in GUIDE_HOSTS],
]
TOKEN_RE = re.compile("|".join(f"(?P<t{i}>{pattern})" for i, (_, pattern, _) in enumerate(TOKENS)))

# Lines shown or not depending on timing: a poll saw the application on its way (see the module's docstring).
TRANSIENT = re.compile(r"^[a-z0-9][a-z0-9_-]*: (?:deploying|undeploying)(?: \(\d+/\d+ hosts\))?$")
# Lines whose order is not fixed (see the module's docstring): compared as a set.
# a grain worker's logging line (ISO-8601 since issue 31; logging's own format before)
UNORDERED = re.compile(r"^\d{4}-\d\d-\d\d(?:T\d\d:\d\d:\d\d\.\d{3}Z| \d\d:\d\d:\d\d,\d{3}) [A-Z]+ +\[")


class Mismatch(AssertionError):
    pass


class Matcher:
    """Checks outputs against the guide's, remembering what each bound guide token (key, id, host) stood for."""

    def __init__(self, home: str) -> None:
        self.home = home
        self.bound: dict[str, str] = {}  # guide token -> this run's value

    def _line_regex(self, line: str, groups: dict[str, str], allow_new: bool) -> str:
        if line == "...":
            return r"[^\n]*(?:\n[^\n]*)*?"
        out, pos = [], 0
        for m in TOKEN_RE.finditer(line):
            out.append(self._literal(line[pos : m.start()]))
            kind, _, real = TOKENS[int(m.lastgroup[1:])]
            token = m.group()
            if kind == "free":
                out.append(f"(?:{real})")
            elif token in self.bound:
                out.append(re.escape(self.bound[token]))
            elif token in groups:
                out.append(f"(?P={groups[token]})")
            elif allow_new:
                groups[token] = f"g{len(groups)}"
                out.append(f"(?P<{groups[token]}>{real})")
            else:
                out.append(f"(?:{real})")
            pos = m.end()
        out.append(self._literal(line[pos:]))
        return "".join(out)

    def _literal(self, text: str) -> str:
        parts = text.split(GUIDE_HOME + "/")
        return (re.escape(self.home) + "/").join(re.escape(p) for p in parts)

    def check(self, expected: list[str], actual: list[str]) -> None:
        """Raises Mismatch unless `actual` is what `expected` shows; then binds the new guide tokens."""
        expected = [x for x in expected if not TRANSIENT.match(x)]
        actual = [x for x in actual if not TRANSIENT.match(x)]
        groups: dict[str, str] = {}
        ordered = [x for x in expected if not UNORDERED.match(x)]
        pattern = re.compile("\n".join(self._line_regex(x, groups, True) for x in ordered))
        m = pattern.fullmatch("\n".join(x for x in actual if not UNORDERED.match(x)))
        if not m:
            raise Mismatch("the lines in order differ")
        new = {token: m.group(name) for token, name in groups.items()}
        taken = {v: k for k, v in self.bound.items()}
        for token, value in new.items():
            other = taken.get(value) or next((t for t, v in new.items() if v == value and t != token), None)
            if other:
                raise Mismatch(f"the guide shows {token} and {other} for what is one value here, {value}")
        self.bound |= new
        rest = [x for x in actual if UNORDERED.match(x)]
        for x in (x for x in expected if UNORDERED.match(x)):
            regex = re.compile(self._line_regex(x, {}, False))
            hit = next((i for i, y in enumerate(rest) if regex.fullmatch(y)), None)
            if hit is None:
                raise Mismatch(f"no line like {x!r}")
            rest.pop(hit)
        if rest:
            raise Mismatch(f"lines the guide does not show: {rest}")

    def command(self, command: str) -> str:
        """The guide's command with the keys and ids it took from earlier outputs replaced by this run's."""

        def swap(m: re.Match[str]) -> str:
            kind = TOKENS[int(m.lastgroup[1:])][0]
            if kind == "bound" and m.group() not in GUIDE_HOSTS:
                assert m.group() in self.bound, f"the command uses {m.group()}, which no earlier output showed"
                return self.bound[m.group()]
            return m.group()

        return TOKEN_RE.sub(swap, command)


def masked_diff(expected: list[str], actual: list[str], bound: dict[str, str]) -> str:
    """The guide's lines against the real ones, with what may differ as <> (the values seen so far of the guide's
    keys, ids and hosts put back first)."""

    def mask(lines: list[str], back: bool) -> list[str]:
        if back:
            for token, value in sorted(bound.items(), key=lambda kv: -len(kv[1])):
                lines = [re.sub(rf"(?<![\w.-]){re.escape(value)}(?![\w-])", token, x) for x in lines]
        return [TOKEN_RE.sub("<>", x) for x in lines if not TRANSIENT.match(x)]

    return "\n".join(
        difflib.unified_diff(mask(expected, False), mask(actual, True), "the guide", "the real output", lineterm="")
    )


def expected_status(expected: list[str]) -> int:
    """1 where the guide shows `sand`'s `Error: ...` or a grain's error event (`{"error": {...}}`), else 0."""
    if any(x.startswith("Error: ") for x in expected):
        return 1
    return 1 if expected[:2] == ["{", '  "error": {'] else 0


def renamed(text: str, name: str) -> str:
    return text.replace(GUIDE_NAME, name).replace(GUIDE_NAME.upper(), name.upper())


# --- running the commands --------------------------------------------------------------------------------------


def bash(command: str, env: dict[str, str], timeout: float = COMMAND_TIMEOUT_S) -> tuple[int, str]:
    """Exit status and output (stdout and stderr as one stream, as on a terminal) of `command` in the repository's
    root; its whole process group is killed if it outlives `timeout`."""
    p = subprocess.Popen(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        raise AssertionError(f"`{command}` still ran after {timeout} s; its output:\n{out}") from None
    return p.returncode, out


def wait_healthy(timeout: float = HEALTH_WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if requests.get(URL + "/healthz", timeout=5).status_code == 200:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{URL}/healthz did not answer 200 for {timeout} s")
        time.sleep(2)


def transient(out: str) -> bool:
    """An answer of a system being restarted (another service restarting under the test), not of the guide."""
    return bool(re.search(r"\b(?:502|503|504)\b|Bad Gateway|cannot reach " + re.escape(URL), out))


def fresh_name() -> str:
    """A name for this run: as long as the guide's (the tables' columns stay where the guide shows them)."""
    return random.choice(string.ascii_lowercase) + "".join(
        random.choices(string.ascii_lowercase + string.digits, k=len(GUIDE_NAME) - 1)
    )


@pytest.fixture
def run_env(base: str, tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """A fresh user's shell environment (a new HOME, no SAND_* settings) and the account name to use; afterwards
    undeploys the account's applications and deletes it."""
    if base != URL:
        pytest.skip(f"the guide talks to {URL}, the tests to {base}")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SAND_") and k not in ("XDG_CONFIG_HOME", "PYTHONPATH", "VIRTUAL_ENV")
    }
    env |= {"HOME": str(home), "PYTHONUNBUFFERED": "1"}  # unbuffered: stdout and stderr in order, as on a terminal
    name = fresh_name()
    try:
        yield env, name
    finally:
        clean_up(env, name)


def clean_up(env: dict[str, str], name: str) -> None:
    creds = Path(env["HOME"]) / ".config" / "sand" / "credentials.json"
    deadline = time.monotonic() + 180
    while creds.is_file():  # `sand account delete` removes it
        rc, out = bash(".venv/bin/sand apps --json", env, timeout=60)
        if rc == 0:
            for app in json.loads(out)["apps"]:
                if app["status"] != "undeployed":
                    bash(f".venv/bin/sand undeploy {app['name']} --timeout 120", env, timeout=150)
            rc, out = bash(f".venv/bin/sand account delete {name}", env, timeout=60)
        if rc == 0 or "unknown API key" in out:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"could not delete the account {name}: {out}")
        time.sleep(3)


def test_the_guide_runs_as_written(run_env: tuple[dict[str, str], str]) -> None:
    env, name = run_env
    steps = guide_steps(GUIDE.read_text())
    assert len(steps) > 20, "the guide's console blocks were not found"
    matcher = Matcher(env["HOME"])
    ran = 0
    for step in steps:
        if SKIPPED.match(step.command):
            continue
        command = matcher.command(renamed(step.command, name))
        expected = [renamed(x, name) for x in step.expected]
        want = expected_status(expected)
        for _attempt in range(3):
            wait_healthy()
            rc, out = bash(command, env)
            if not (rc != want and transient(out) and not any(transient(x) for x in expected)):
                break
            time.sleep(10)
        where = f"{GUIDE.relative_to(ROOT)}:{step.line}: `{command}`"
        shown = "\n".join(expected)
        assert rc == want, f"{where} exited {rc}, the guide implies {want}; its output:\n{out}"
        try:
            matcher.check(expected, out.splitlines())
        except Mismatch as e:
            pytest.fail(
                f"{where}: its output is not the guide's ({e}).\n--- the guide (names replaced):\n{shown}\n"
                f"--- the real output:\n{out}\n--- the difference, what may differ masked as <>:\n"
                f"{masked_diff(expected, out.splitlines(), matcher.bound)}",
                pytrace=False,
            )
        ran += 1
    assert ran > 20


# --- the check itself can fail -----------------------------------------------------------------------------------

SHOWN = [
    "grain greet: version 1 (greet.py, 266 bytes)",
    "hello-alice: deploying (0/1 hosts)",
    "hello-alice: deployed on vm (version 1) in 0.6s; invoke it with `sand invoke hello-alice '<json>'`",
    "execution id: 3d3b1f6af37ef07286ad92463b007f44",
    "id again: 3d3b1f6af37ef07286ad92463b007f44",
]
REAL = [
    "grain greet: version 1 (greet.py, 266 bytes)",
    "hello-alice: deployed on h1 (version 1) in 12.3s; invoke it with `sand invoke hello-alice '<json>'`",
    "execution id: 0123456789abcdef0123456789abcdef",
    "id again: 0123456789abcdef0123456789abcdef",
]


def test_the_check_passes_what_legitimately_differs() -> None:
    matcher = Matcher("/tmp/h")
    matcher.check(SHOWN, REAL)
    assert matcher.bound == {"vm": "h1", "3d3b1f6af37ef07286ad92463b007f44": "0123456789abcdef0123456789abcdef"}
    assert matcher.command("sand logs 3d3b1f6af37ef07286ad92463b007f44") == "sand logs " + "0123456789abcdef" * 2


@pytest.mark.parametrize(
    "real",
    [
        REAL[1:],  # a line missing
        REAL + ["one more line"],  # a line the guide does not show
        [REAL[0].replace("266", "267"), *REAL[1:]],  # a changed size
        [*REAL[:3], "id again: " + "f" * 32],  # one id shown twice is two here
        [REAL[0], REAL[1].replace("version 1", "version 2"), *REAL[2:]],
    ],
    ids=["missing", "extra", "changed", "inconsistent-id", "version"],
)
def test_the_check_fails_a_wrong_guide(real: list[str]) -> None:
    with pytest.raises(Mismatch):
        Matcher("/tmp/h").check(SHOWN, real)


def test_the_guide_is_parsed_into_its_commands() -> None:
    steps = guide_steps(GUIDE.read_text())
    commands = [s.command for s in steps]
    assert commands[0].startswith(".venv/bin/sand emulate examples/hello")
    shell = (".venv/bin/sand", "SAND_", "make", "mkdir", "printf", "echo", "cp ", "sed ", "curl ")
    assert "make up" in commands and all(c.startswith(shell) for c in commands)
    assert expected_status(next(s for s in steps if s.command.startswith(".venv/bin/sand status nope")).expected) == 1
