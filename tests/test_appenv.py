"""settings.env and secrets in the sandbox (grainworker/appenv.py) and in the emulator (sandemu/_env.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from grainworker import appenv
from grainworker.appenv import AppEnvError, AppEnvironment
from grainworker.context import GrainContext
from grainworker.rules import RULES
from grainworker.supervisor import GrainSettings, Supervisor, SupervisorConfig
from grainworker.workflow import parse_workflow
from sandemu import Emulator, EmulatorError
from sandemu._env import app_environment, parse_dotenv


@pytest.fixture
def installed() -> Iterator[None]:
    before = appenv.current()
    yield
    appenv.install(before)


def _context() -> GrainContext:
    wf = parse_workflow(json.dumps({"name": "w", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]}))

    def no_data() -> None:
        raise AssertionError("no data layer here")

    return GrainContext({"execution_id": "e1"}, "g", wf, no_data, lambda e: None)  # type: ignore[arg-type]


def test_the_grain_api_answers_what_the_worker_installed(tmp_path: Path, installed: None) -> None:
    f = tmp_path / "env.json"
    f.write_text(json.dumps({"config": {"GREETING": "hi"}, "secrets": {"API_TOKEN": "hunter2"}}))
    appenv.install(appenv.read(f))
    c = _context()
    assert c.get_config("GREETING") == "hi"
    assert c.get_config("MISSING", "d") == "d"
    assert c.get_config() == {"GREETING": "hi"}
    assert c.get_secret("API_TOKEN") == "hunter2"
    assert c.get_secret("MISSING") is None
    assert "hunter2" not in repr(appenv.current())


def test_a_bad_env_file_is_refused_naming_it(tmp_path: Path) -> None:
    f = tmp_path / "env.json"
    f.write_text(json.dumps({"config": {"N": 3}}))
    with pytest.raises(AppEnvError, match="'config' must be an object of names to strings"):
        appenv.read(f)


def test_names_follow_the_shared_rules() -> None:
    assert appenv.check_name("_OK1") == "_OK1"
    for bad in ("1X", "A-B", "", "SAND_X", "PYTHONPATH", "A" * (RULES["application_env"]["max_name_chars"] + 1)):
        with pytest.raises(AppEnvError):
            appenv.check_name(bad)


def test_the_supervisor_gives_the_workers_the_environment_and_the_file(tmp_path: Path) -> None:
    f = tmp_path / "env.json"
    f.write_text(json.dumps({"config": {"GREETING": "hi"}, "secrets": {"API_TOKEN": "hunter2"}}))
    cfg = SupervisorConfig("app", "wf", "code", "bus", "data", {"g": GrainSettings()}, env_file=str(f))
    env = Supervisor(cfg, env={"PATH": "/bin"}).env
    assert env["GREETING"] == "hi" and env["API_TOKEN"] == "hunter2"
    assert env[appenv.ENV_FILE_VAR] == str(f)
    assert appenv.ENV_FILE_VAR not in Supervisor(SupervisorConfig("app", "wf", "c", "b", "d", {}), env={}).env


def test_dotenv_lines() -> None:
    text = "\n".join(
        [
            "# comment",
            "",
            "PLAIN = hello world  # trailing",
            "export SINGLE='a # b \\n'",
            'DOUBLE="x\\ny \\"q\\""',
            "EMPTY=",
        ]
    )
    assert parse_dotenv(text) == {
        "PLAIN": "hello world",
        "SINGLE": "a # b \\n",
        "DOUBLE": 'x\ny "q"',
        "EMPTY": "",
    }
    with pytest.raises(AppEnvError, match="line 1: expected NAME=value"):
        parse_dotenv("JUSTANAME")
    with pytest.raises(AppEnvError, match="line 2.*reserved"):
        parse_dotenv("A=1\nSAND_X=2")
    with pytest.raises(AppEnvError, match="not closed"):
        parse_dotenv("A='open")


def test_the_emulator_reads_settings_env_and_dotenv(tmp_path: Path) -> None:
    (tmp_path / "workflow.json").write_text(
        json.dumps({"name": "envapp", "entry": "show", "functions": [{"name": "show", "next": ["end"]}]})
    )
    (tmp_path / "settings.json").write_text(json.dumps({"env": {"GREETING": "hi"}}))
    (tmp_path / ".env").write_text("API_TOKEN='hunter2'\n")
    (tmp_path / "show.py").write_text(
        "import os\n"
        "AT_LOAD = os.environ.get('GREETING')\n"
        "def handle(event, context):\n"
        "    return {'env': os.environ.get('GREETING'), 'secret_env': os.environ.get('API_TOKEN'),\n"
        "            'config': context.get_config('GREETING'), 'secret': context.get_secret('API_TOKEN'),\n"
        "            'at_load': AT_LOAD}\n"
    )
    assert app_environment(tmp_path) == AppEnvironment({"GREETING": "hi"}, {"API_TOKEN": "hunter2"})
    with Emulator(tmp_path, echo=lambda line: None) as emu:
        result, _ = emu.invoke({})
    assert result == {"env": "hi", "secret_env": "hunter2", "config": "hi", "secret": "hunter2", "at_load": "hi"}
    (tmp_path / ".env").write_text("SAND_TOKEN=x\n")
    with pytest.raises(EmulatorError, match="reserved"):
        Emulator(tmp_path, echo=lambda line: None)
