"""A grain's set-up on the real platform (issue 29): an sdist whose build needs setuptools (langdetect==1.0.9)
installs in the install container (its build-isolation pip reaches the index through the host agent's proxy), a
zip grain runs in its unpacked code folder (a relative open finds the file beside the code), and init() runs once
in the grain worker before it forks. The same folder runs in the emulator with the same answer."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from sandemu import Emulator
from tests.e2e.api import Http, raw_remove
from tests.e2e.test_frontend_e2e import sand

RUN = uuid.uuid4().hex[:8]
GRAIN = """import os
from langdetect import DetectorFactory, detect

WARM = []


def init():
    DetectorFactory.seed = 0
    detect("warm up the profiles once")  # langdetect loads its profiles on first use
    WARM.append(os.getpid())


def handle(event, context):
    return {
        "lang": detect(event["text"]),
        "data": open("data.txt").read(),
        "warmed_in_parent": WARM == [os.getppid()],
    }
"""


def _app(root: Path) -> Path:
    (root / "workflow.json").write_text(
        json.dumps({"name": "lang", "entry": "g", "functions": [{"name": "g", "next": ["end"]}]})
    )
    (root / "g.py").write_text(GRAIN)
    (root / "data.txt").write_text("beside the code")
    (root / "requirements.txt").write_text("langdetect==1.0.9\n")
    return root


def test_an_sdist_requirement_a_data_file_and_init_work_on_the_platform_and_in_the_emulator(
    base: str, http: Http, tmp_path: Path
) -> None:
    app = _app(tmp_path)
    expected = {"lang": "en", "data": "beside the code", "warmed_in_parent": True}
    r = http("POST", "/api/v1/accounts", json_body={"name": f"e2e-setup-{RUN}"})
    assert r.status_code in (200, 201), r.text
    key = r.json()["api_key"]
    name = f"lang-{RUN}"
    try:
        p = sand(base, key, "deploy", str(app), "--name", name)
        assert p.returncode == 0, p.stdout + p.stderr  # not "Temporary failure in name resolution"
        for _ in range(3):  # every event a fresh fork of the warmed worker
            out = http("POST", f"/app/{name}", json_body={"text": "this is plainly an English sentence"})
            assert out.status_code == 200, out.text
            assert out.json() == expected
    finally:
        raw_remove(http, key, name)
    with Emulator(app, echo=lambda line: None) as emu:
        assert emu.invoke({"text": "this is plainly an English sentence"})[0] == expected
