"""Calls to SAND's REST API shared by the end-to-end tests: a raw HTTP client, deploying a folder the way
`sand deploy` does, and removing an application whatever state a test left it in."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import socket
import subprocess
import time
import zipfile
from pathlib import Path
from typing import Any

import requests

DEPLOY_TIMEOUT_S = 180


class Http:
    """Raw calls to the REST API."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.s = requests.Session()

    def __call__(
        self,
        method: str,
        path: str,
        key: str | None = None,
        *,
        data: Any = None,
        json_body: Any = None,
        content_type: str | None = None,
        timeout: float = 60,
    ) -> requests.Response:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if content_type:
            headers["Content-Type"] = content_type
        return self.s.request(method, self.base + path, data=data, json=json_body, headers=headers, timeout=timeout)

    def wait_status(self, key: str, app: str, want: str, timeout: float = DEPLOY_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            body = self("GET", f"/api/v1/apps/{app}", key).json()
            if body["status"] in (want, "failed") or time.monotonic() > deadline:
                return body
            time.sleep(0.3)


def free_port() -> int:
    """A TCP port nobody listens on now on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def error_code(r: requests.Response) -> str:
    return r.json()["error"]["code"]


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def raw_deploy(http: Http, key: str, folder: Path, name: str, settings: dict[str, Any] | None = None) -> dict:
    """What `sand deploy` does, by hand: grains (files beside the grains ride in the entry grain's zip),
    the workflow, deploy, wait."""
    wf = json.loads((folder / "workflow.json").read_text()) | {"name": name}
    code = {f["name"]: f.get("resource", f["name"]) for f in wf["functions"]}
    resources = set(code.values())
    extras = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.name != "workflow.json"
        and "__pycache__" not in p.parts
        and p.relative_to(folder).as_posix() not in {r + ".py" for r in resources}
    }
    for r in resources:
        source = (folder / f"{r}.py").read_bytes()
        if r == code[wf["entry"]] and extras:
            resp = http(
                "PUT",
                f"/api/v1/grains/{r}",
                key,
                data=zip_bytes({f"{r}.py": source} | extras),
                content_type="application/zip",
            )
        else:
            resp = http("PUT", f"/api/v1/grains/{r}", key, data=source, content_type="text/x-python")
        assert resp.status_code in (200, 201), resp.text
        assert resp.json()["name"] == r and resp.json()["version"] >= 1 and len(resp.json()["sha256"]) == 64
    body = wf | ({"settings": settings} if settings else {})
    resp = http("PUT", f"/api/v1/apps/{name}", key, json_body=body)
    assert resp.status_code in (200, 201), resp.text
    resp = http("POST", f"/api/v1/apps/{name}/deploy", key)
    assert resp.status_code == 202, resp.text
    app = http.wait_status(key, name, "deployed")
    assert app["status"] == "deployed", app
    return app


def raw_remove(http: Http, key: str, name: str) -> None:
    """Undeploy and delete; retried for a while, so a test that upset nginx (502 for fail_timeout) leaves
    no sandbox running behind."""
    deadline = time.monotonic() + 60
    while True:
        try:
            r = http("POST", f"/api/v1/apps/{name}/undeploy", key)
            if r.status_code == 404:
                return
            if r.status_code == 202 and http.wait_status(key, name, "undeployed", timeout=60)["status"] == "undeployed":
                if http("DELETE", f"/api/v1/apps/{name}", key).status_code in (200, 204, 404):
                    return
        except (requests.RequestException, KeyError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"could not undeploy and delete {name}")
        time.sleep(1)


def sign_up(http: Http, name: str) -> str:
    """A new account; returns its API key."""
    r = http("POST", "/api/v1/accounts", json_body={"name": name})
    assert r.status_code in (200, 201), r.text
    return r.json()["api_key"]


def put_app(
    http: Http,
    key: str,
    name: str,
    functions: list[dict[str, Any]],
    grains: dict[str, bytes | str],
    settings: dict[str, Any] | None = None,
    deploy: bool = True,
    wait: bool = True,
) -> dict[str, Any]:
    """Upload grains (str: a .py source; bytes: a zip), save the workflow and (optionally) deploy and wait.
    Returns the application as GET answers it."""
    for grain, code in grains.items():
        zipped = isinstance(code, bytes)
        r = http(
            "PUT",
            f"/api/v1/grains/{grain}",
            key,
            data=code if zipped else code.encode(),
            content_type="application/zip" if zipped else "text/x-python",
        )
        assert r.status_code in (200, 201), r.text
    body: dict[str, Any] = {"name": name, "entry": functions[0]["name"], "functions": functions}
    if settings:
        body["settings"] = settings
    r = http("PUT", f"/api/v1/apps/{name}", key, json_body=body)
    assert r.status_code in (200, 201), r.text
    if deploy:
        r = http("POST", f"/api/v1/apps/{name}/deploy", key)
        assert r.status_code == 202, r.text
        if wait:
            return http.wait_status(key, name, "deployed")
    return http("GET", f"/api/v1/apps/{name}", key).json()


def execution_tag(secret: bytes, app: str, execution_id: str, frontend: str) -> str:
    """What a frontend puts in an event's "tag" (common/.../ExecutionTag.java): HMAC-SHA256 under the cluster
    secret of the length-prefixed application, execution id and frontend, its first 16 bytes in hex. Tests that
    play a frontend need it; the host agent forwards no output without it."""
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    for part in (app, execution_id, frontend):
        b = part.encode()
        mac.update(len(b).to_bytes(4, "big") + b)
    return mac.digest()[:16].hex()


def sandbox_ids(app_id: str) -> list[str]:
    """The running sandbox containers of an application on this host (Docker's labels)."""
    return subprocess.run(
        ["docker", "ps", "-q", "--filter", f"label=sand.app={app_id}", "--filter", "label=sand.component=sandbox"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
