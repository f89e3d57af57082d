"""Rotating the cluster secret (issue 31) on the running system: `sand admin cluster-secret rotate` runs begin,
switch and finish while end users call an application whose endpoint wants an HMAC signature and whose grain reads
a secret. Every call is answered with the secret's value; after the rotation the cluster holds one, new, secret;
the application's secret and signing secret (sealed again under it) still work, and a new sandbox of the
application, whose host agent opens its secrets under the new secret alone, still gets the value.

Needs `make up` (nginx, two frontends, a host agent, Kafka, Cassandra, Docker) and its admin key."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import subprocess
import sys
import threading
import time
import uuid

import pytest
import requests

from tests.conftest import ROOT, SAND_HOME
from tests.e2e.api import Http, put_app, raw_remove, sign_up

SECRET = f"rot-{uuid.uuid4().hex}"
SHOW = (
    "import os\n"
    "AT_LOAD = os.environ.get('API_TOKEN')\n"
    "def handle(event, context):\n"
    "    return {'token': context.get_secret('API_TOKEN'), 'at_load': AT_LOAD, 'n': event.get('n')}\n"
)


def signed_call(http: Http, app: str, secret: str, n: int) -> requests.Response:
    body = f'{{"n": {n}}}'.encode()
    ts = str(int(time.time()))
    mac = hmac.new(secret.encode(), f"{ts}.".encode() + body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Sand-Timestamp": ts, "X-Sand-Signature": f"sha256={mac}"}
    return http.s.post(f"{http.base}/app/{app}", data=body, headers=headers, timeout=60)


def rotation_state(http: Http, admin: str) -> dict:
    r = http("GET", "/api/v1/admin/cluster-secret", admin)
    assert r.status_code == 200, r.text
    return r.json()


def test_the_cluster_secret_rotates_under_signed_calls_and_sealed_values_follow(http: Http, base: str) -> None:
    admin_file = SAND_HOME / "admin-key"
    if not admin_file.is_file():
        pytest.skip(f"needs the admin key `make up` writes ({admin_file})")
    admin = admin_file.read_text().strip()
    owner = sign_up(http, f"rot-{uuid.uuid4().hex[:8]}")
    app = f"rot-{uuid.uuid4().hex[:8]}"
    put_app(http, owner, app, [{"name": "rotshow", "next": ["end"]}], {"rotshow": SHOW}, deploy=False)
    assert http("PUT", f"/api/v1/apps/{app}/secrets/API_TOKEN", owner, json_body={"value": SECRET}).status_code == 200
    assert http("POST", f"/api/v1/apps/{app}/deploy", owner).status_code == 202
    assert http.wait_status(owner, app, "deployed")["status"] == "deployed"
    r = http("POST", f"/api/v1/apps/{app}/signing-secret", owner)
    assert r.status_code == 201, r.text
    signing = r.json()["secret"]
    assert http("PUT", f"/api/v1/apps/{app}/endpoint", owner, json_body={"auth": "hmac"}).status_code == 200
    try:
        deadline = time.monotonic() + 30  # every frontend's cached application has the new mode
        while signed_call(http, app, "wrong", 0).status_code != 401 and time.monotonic() < deadline:
            time.sleep(0.5)
        first = signed_call(http, app, signing, 0)
        assert first.status_code == 200 and first.json()["token"] == SECRET, first.text
        env = {k: v for k, v in os.environ.items() if k not in ("SAND_URL", "SAND_ADMIN_KEY")}
        env |= {"PYTHONPATH": str(ROOT), "SAND_URL": base, "SAND_ADMIN_KEY": admin}
        rotate = [sys.executable, "-m", "sandclient.cli", "admin", "cluster-secret", "rotate", "--finish-after", "5"]
        if rotation_state(http, admin)["step"] != "none under way":  # one left begun (the contract test's fuzzing)
            done = subprocess.run(rotate, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
            assert done.returncode == 0, done.stdout + done.stderr
        before = rotation_state(http, admin)
        assert before["step"] == "none under way", before

        answers: list[tuple[int, str]] = []
        stop = threading.Event()

        def stream() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    r = signed_call(http, app, signing, n)
                    answers.append((r.status_code, r.json().get("token", r.text) if r.status_code == 200 else r.text))
                except requests.RequestException as e:
                    answers.append((0, repr(e)))
                time.sleep(0.02)

        caller = threading.Thread(target=stream, daemon=True)
        caller.start()
        p = subprocess.run(rotate, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
        stop.set()
        caller.join(timeout=70)
        print("\n" + p.stdout)
        assert p.returncode == 0 and "rotated in" in p.stdout, p.stdout + p.stderr
        bad = [a for a in answers if a != (200, SECRET)]
        assert answers and not bad, f"{len(bad)} of {len(answers)} calls during the rotation: {bad[:5]}"
        print(f"{len(answers)} signed calls during the rotation, all 200 with the secret")

        after = rotation_state(http, admin)
        assert after["current"]["fingerprint"] != before["current"]["fingerprint"], after
        assert after["next"] is None and after["previous"] is None and after["step"] == "none under way", after
        # this application's two sealed values among them (other tests' applications may have theirs)
        sealed = re.search(r"sealed again: (\d+) secrets, (\d+) signing secrets", p.stdout)
        assert sealed and int(sealed[1]) >= 1 and int(sealed[2]) >= 1, p.stdout

        # a new sandbox: its host agent opens the application's secret under the new cluster secret alone
        assert http("POST", f"/api/v1/apps/{app}/undeploy", owner).status_code in (200, 202)
        assert http.wait_status(owner, app, "undeployed")["status"] == "undeployed"
        assert http("POST", f"/api/v1/apps/{app}/deploy", owner).status_code == 202
        assert http.wait_status(owner, app, "deployed")["status"] == "deployed"
        again = signed_call(http, app, signing, 1)
        assert again.status_code == 200, again.text
        assert again.json()["token"] == SECRET and again.json()["at_load"] == SECRET, again.text
    finally:
        raw_remove(http, owner, app)
