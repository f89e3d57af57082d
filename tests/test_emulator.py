"""The emulator on the examples: a 2-grain chain, fan-out with a counter join, dynamic next; and its
HTTP API (the same invoke API as the frontend)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from grainworker.workflow import DEFAULT_TIMEOUT_S
from sandclient.cli import build_parser
from sandclient.cli import main as sand
from sandemu import Emulator, EmulatorError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ONE_G = [{"name": "g", "next": ["end"]}]  # one grain whose value answers the request


@pytest.fixture(scope="module")
def hello() -> Iterator[Emulator]:
    with Emulator(EXAMPLES / "hello", echo=lambda line: None) as e:
        yield e


def test_hello_chain(hello: Emulator) -> None:
    result, execution_id = hello.invoke({"name": "sand"})
    assert result == {"greeting": "HELLO, SAND!", "execution_id": execution_id}
    grains = [r["grain"] for r in hello.reports if r["execution_id"] == execution_id]
    assert grains == ["greet", "shout"]


def test_virus_scan_fan_out_and_join() -> None:
    email = {"from": "x@y", "body": "hi http://phish.example/a", "attachments": ["ok.pdf"]}
    with Emulator(EXAMPLES / "virus-scan", echo=lambda line: None) as e:
        result, run = e.invoke({"email": email})
        clean, _ = e.invoke({"email": {"from": "x@y", "body": "hello", "attachments": []}})
        grains = sorted(r["grain"] for r in e.reports if r["execution_id"] == run)
    assert result == {
        "infected": True,
        "findings": {"scan_links": ["phish.example"]},
        "scanners": ["scan_attachments", "scan_body", "scan_links"],
    }
    assert grains == ["join", "receive", "scan_attachments", "scan_body", "scan_links"]
    assert clean["infected"] is False


def test_an_asl_state_machine_runs_its_states_as_grains() -> None:
    """examples/asl-orders (docs/workflows.md): Choice, Map with MaxConcurrency, Task, Parallel with Retry and Catch,
    Fail, each state a grain worker of its own, the joins through the emulator's data layer."""
    order = {"customer": "ada", "items": [{"sku": "apple", "qty": 4}, {"sku": "cheese", "qty": 1}]}
    with Emulator(EXAMPLES / "asl-orders", echo=lambda line: None) as e:
        result, run = e.invoke(order)
        declined, _ = e.invoke({"customer": "mallory", "items": [{"sku": "bread", "qty": 2}]})
        empty, _ = e.invoke({"customer": "eve", "items": []})
        grains = sorted(r["grain"] for r in e.reports if r["execution_id"] == run)
    assert result["total"] == 8.0 and [line["cost"] for line in result["lines"]] == [2.0, 6.0]
    assert result["settled"] == {"payment": {"charged": 8.0}, "reservation": {"reserved": {"apple": 96, "cheese": 99}}}
    # Price (the Map) runs in Check's instance, Settle (the Parallel) in Sum's: no instance of their own
    assert grains == [
        "Check",
        "Price.it.PriceItem",
        "Price.it.PriceItem",
        "Settle.b0.Charge",
        "Settle.b1.Reserve",
        "Sum",
    ]
    assert declined == {"customer": "mallory", "declined": "card of mallory declined for 4.5"}
    assert empty["error"]["type"] == "EmptyOrder"


def test_webserver_dynamic_next() -> None:
    with Emulator(EXAMPLES / "webserver", echo=lambda line: None) as e:
        page, run = e.invoke({"path": "/"})
        missing, _ = e.invoke({"path": "/nope.bin"})
        chosen = [r["grain"] for r in e.reports if r["execution_id"] == run]
    assert page["status"] == 200 and "Served by SAND grains" in page["body"]
    assert chosen == ["parse", "serve_text"]
    assert missing["status"] == 404


def test_http_api(hello: Emulator) -> None:
    from sandemu._http import create_app

    client = create_app(hello).test_client()
    r = client.post("/app/hello", json={"name": "http"})
    assert r.status_code == 200 and r.json["greeting"] == "HELLO, HTTP!"
    assert r.headers["X-Sand-Execution-Id"] == r.json["execution_id"]
    r = client.post("/app/hello", data="{broken", content_type="application/json")
    assert r.status_code == 400 and r.json["error"]["code"] == "bad_request"
    r = client.post("/app/other", json={})
    assert r.status_code == 404


def test_grain_error_reaches_the_http_caller_as_500(tmp_path: Path) -> None:
    from sandemu._http import create_app

    wf = '{"name": "err", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]}'
    (tmp_path / "workflow.json").write_text(wf)
    (tmp_path / "g.py").write_text("def handle(e, c):\n    return 1 / 0\n")
    with Emulator(tmp_path, echo=lambda line: None) as e:
        r = create_app(e).test_client().post("/app/err", json={})
    assert r.status_code == 500
    assert r.json == {"error": {"type": "ZeroDivisionError", "message": "division by zero", "grain": "g"}}


def test_bad_app_folders_get_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(EmulatorError, match="workflow.json is missing"):
        Emulator(tmp_path)
    (tmp_path / "workflow.json").write_text(json.dumps({"name": "a", "entry": "g", "functions": ONE_G}))
    with pytest.raises(EmulatorError, match="grain 'g' runs code 'g' but .*g.py does not exist"):
        Emulator(tmp_path)


def test_cli_runs_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert sand(["emulate", str(EXAMPLES / "hello"), "--input", '{"name": "cli"}']) == 0
    assert '"greeting": "HELLO, CLI!"' in capsys.readouterr().out
    assert sand(["emulate", str(EXAMPLES / "hello"), "--input", "{bad"]) == 1
    assert "Error: --input is not valid JSON" in capsys.readouterr().err


def _two_grain_app(root: Path, b_code: str) -> Path:
    """Grain a answers (reading data.txt beside the code); grain b is on no request's path."""
    wf = {"name": "two", "entry": "a", "functions": [{"name": "a", "next": ["end"]}, {"name": "b", "next": ["end"]}]}
    (root / "workflow.json").write_text(json.dumps(wf))
    (root / "a.py").write_text("import os\ndef handle(e, c):\n    return [os.getcwd(), open('data.txt').read()]\n")
    (root / "b.py").write_text(b_code)
    (root / "data.txt").write_text("beside the code")
    return root


def test_a_grain_runs_in_its_code_folder(tmp_path: Path) -> None:
    with Emulator(_two_grain_app(tmp_path, "def handle(e, c):\n    return 1\n"), echo=lambda line: None) as e:
        assert e.invoke({})[0] == [str(tmp_path.resolve()), "beside the code"]


def test_a_grain_off_the_path_that_does_not_load_fails_the_run_with_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a deploy fails: whether or not a request would reach the grain; one `Error:` line, exit status 1."""
    app = _two_grain_app(tmp_path, "import no_such_module\ndef handle(e, c):\n    return 1\n")
    assert sand(["emulate", str(app), "--input", "{}"]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: grain b failed to load: ModuleNotFoundError: No module named 'no_such_module' (b.py, line 1)"
    ]
    assert "Traceback" not in captured.err and captured.out == ""
    assert sand(["emulate", str(app), "--input", "{}", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err
    from sandemu._http import create_app

    with Emulator(app, echo=lambda line: None) as e:
        r = create_app(e).test_client().post("/app/two", json={})
    assert r.status_code == 503 and "grain b failed to load" in r.json["error"]["message"]


def test_the_grain_timeout_is_the_platforms_by_default() -> None:
    # one constant for the emulator, `sand emulate` and a deployed application (contracts/rules.json)
    assert DEFAULT_TIMEOUT_S == 60
    assert inspect.signature(Emulator).parameters["timeout_s"].default is None  # the folder's settings, else this
    assert build_parser().parse_args(["emulate", str(EXAMPLES / "hello")]).timeout is None
    assert Emulator(EXAMPLES / "hello").timeout_s == DEFAULT_TIMEOUT_S


def test_the_grain_workers_get_the_emulators_timeout(hello: Emulator) -> None:
    assert hello.timeout_s == DEFAULT_TIMEOUT_S
    args = Path(f"/proc/{hello.worker_pid('greet')}/cmdline").read_bytes().split(b"\0")
    assert args[args.index(b"--timeout") + 1] == str(DEFAULT_TIMEOUT_S).encode()


def test_the_grain_timeout_is_the_folders_settings_as_deployed(tmp_path: Path) -> None:
    (tmp_path / "workflow.json").write_text(json.dumps({"name": "t", "entry": "g", "functions": ONE_G}))
    (tmp_path / "g.py").write_text("def handle(e, c):\n    return e\n")
    assert Emulator(tmp_path).timeout_s == DEFAULT_TIMEOUT_S
    (tmp_path / "settings.json").write_text('{"timeout_s": 7, "concurrency": 4}')
    assert Emulator(tmp_path).timeout_s == 7.0
    assert Emulator(tmp_path, timeout_s=2).timeout_s == 2.0, "--timeout wins"
    (tmp_path / "settings.json").write_text('{"timeout_s": "soon"}')
    with pytest.raises(EmulatorError, match="timeout_s must be a positive number of seconds, got 'soon'"):
        Emulator(tmp_path)
