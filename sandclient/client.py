"""SAND's REST API (docs/api.md) from Python: `Client`, the credentials `sand login` stores, and what the
calls return. Standard library only: the `sand` CLI (sandclient.cli) is built on it.

The grain worker never imports this package: it only serves the developer's side.

Longer than 600 lines because `Client` has one method per route of the REST API, each with its
docstring; split by resource, one class would span several modules.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from grainworker.workflow import Workflow, WorkflowError, parse_workflow
from sandclient._bundle import BundleError, Upload, bundle
from sandclient._endpoint import endpoint_headers

__all__ = [
    "NO_INPUT",
    "ApiError",
    "AppFolder",
    "Client",
    "Credentials",
    "Deployment",
    "Invocation",
    "Progress",
    "Response",
    "app_hosts",
    "credentials_path",
    "load_credentials",
    "load_folder",
    "names_app_id",
    "save_credentials",
    "without_app_ids",
]

USER_AGENT = "sand-cli/0.1"


class ApiError(Exception):
    """The API answered with an error, or could not be reached or used (status 0: `code` says why, e.g.
    "unreachable", "config", "usage", "timeout", "failed"); str() is the message to show.

    `method` and `path` name the request that failed (empty for status 0 errors of no request), `url` the
    SAND address it went to; `execution_id` is the execution the answer names, if any (e.g. an invocation
    that timed out)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        method: str = "",
        path: str = "",
        execution_id: str | None = None,
        url: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.body = body
        self.headers = headers or {}
        self.method = method
        self.path = path
        self.execution_id = execution_id
        self.url = url


@dataclass(frozen=True)
class Credentials:
    url: str
    api_key: str


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: Any  # parsed JSON, or the text when the answer is not JSON


def credentials_path() -> Path:
    """$XDG_CONFIG_HOME/sand/credentials.json, by default ~/.config/sand/credentials.json."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sand" / "credentials.json"


def save_credentials(url: str, api_key: str) -> Path:
    """Write url and key readable by the owner only (0600, folder 0700); returns the file."""
    path = credentials_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)  # the file may have existed with a wider mode
        json.dump({"url": url, "api_key": api_key}, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return path


def load_credentials() -> Credentials:
    """The stored login, with SAND_URL / SAND_API_KEY overriding each part; ApiError if either is missing."""
    stored: dict[str, Any] = {}
    path = credentials_path()
    if path.is_file():
        try:
            stored = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as e:
            raise ApiError(0, "config", f"cannot read {path}: {e}; run `sand login <url> <api-key>` again") from None
    url = os.environ.get("SAND_URL") or stored.get("url") or ""
    key = os.environ.get("SAND_API_KEY") or stored.get("api_key") or ""
    if not url or not key:
        raise ApiError(
            0,
            "config",
            "not logged in: run `sand login <url> <api-key>` (or `sand signup <url> <name>`),"
            " or set SAND_URL and SAND_API_KEY",
        )
    return Credentials(url.rstrip("/"), key)


def _parse(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
    return text


def _error_of(status: int, body: Any, headers: dict[str, str], method: str, path: str, url: str) -> ApiError:
    err = body.get("error") if isinstance(body, dict) else None
    exec_id = headers.get("X-Sand-Execution-Id") or (err.get("execution_id") if isinstance(err, dict) else None)
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return ApiError(
            status,
            str(err.get("code", "")),
            err["message"],
            body,
            headers,
            method=method,
            path=path,
            execution_id=exec_id,
            url=url,
        )
    text = body if isinstance(body, str) and body.strip() else f"HTTP {status}"
    return ApiError(
        status,
        "http",
        f"{text.strip()[:500]} (HTTP {status})",
        body,
        headers,
        method=method,
        path=path,
        execution_id=exec_id,
        url=url,
    )


# The platform names an application by its internal id (`a` + 12 hex digits) in what its host agents and data
# layer say ("[app a4d6165d9e101] cannot store ...", "application a4d6165d9e101: its requirements ..."); the
# developer knows it by its name.
_APP_ID = re.compile(r"(\[app |\bapplication )a[0-9a-f]{12}\b")


def names_app_id(text: str) -> bool:
    """Whether `text` names an application by its internal id (see `without_app_ids`)."""
    return _APP_ID.search(text) is not None


def without_app_ids(text: str, app: str) -> str:
    """`text` (an error of application `app`: a deploy's, a grain's) with the application's internal id, where
    the platform names it, replaced by its name."""
    return _APP_ID.sub(lambda m: m.group(1) + app, text)


def _listed(r: Response, key: str) -> list[dict[str, Any]]:
    """The list under `key` of a listing's answer ({"apps": [...]}, {"grains": [...]})."""
    rows = r.body.get(key) if isinstance(r.body, dict) else None
    if not isinstance(rows, list):
        raise ApiError(
            0,
            "bad_answer",
            f"the answer has no {key!r} list: {str(r.body)[:200]!r}; is the SAND address right (`sand login`)?",
            r.body,
        )
    return [row for row in rows if isinstance(row, dict)]


Progress = Callable[[str, float | None], None]
"""What `deploy`, `wait` and `undeploy` report as they go: (line, None) once per step (a grain uploaded, the
workflow saved), and (line, seconds since the wait began) on every poll while waiting."""

NO_INPUT: Any = object()
"""`Client.invoke`'s default: the request has no body (the application gets null)."""

POLL_S = 0.5  # how often `wait` reads an application's status


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def app_hosts(app: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(host, status, error) for each target host of an application, whatever shape the API gives them in."""
    hosts = app.get("hosts")
    out = []
    if isinstance(hosts, dict):
        hosts = [{"host": k} | (v if isinstance(v, dict) else {"status": v}) for k, v in hosts.items()]
    for h in hosts or []:
        if isinstance(h, dict):
            out.append(
                (
                    str(h.get("host") or h.get("host_id") or h.get("id") or "?"),
                    # a dead host keeps its last state in the cluster state: say it is down, not "deployed"
                    str(h.get("status") or "") + (" (host down)" if h.get("alive") is False else ""),
                    str(h.get("error") or ""),
                )
            )
        else:
            out.append((str(h), "", ""))
    return out


def _progress(app: dict[str, Any], want: str) -> str:
    hosts = app_hosts(app)
    # a host where the application failed runs nothing of it: for an undeploy, it is done
    done = sum(1 for _, s, _ in hosts if s == want or (want == "undeployed" and s in ("stopped", "failed")))
    parts = f" ({done}/{len(hosts)} hosts)" if hosts and any(s for _, s, _ in hosts) else ""
    return f"{app.get('status', '?')}{parts}"


def _quiet(line: str, elapsed_s: float | None) -> None:
    pass


@dataclass(frozen=True)
class AppFolder:
    """An application folder read and checked, ready to deploy: nothing is sent yet."""

    path: Path
    workflow_json: dict[str, Any]  # workflow.json as read, its name replaced when asked
    workflow: Workflow
    settings: Any  # settings.json (None without one), merged with what `with_settings` adds
    uploads: list[Upload]

    @property
    def name(self) -> str:
        return self.workflow.name

    @property
    def document(self) -> dict[str, Any]:
        """What PUT /api/v1/apps/{name} gets: the workflow, with the settings if there are any."""
        return self.workflow_json if self.settings is None else self.workflow_json | {"settings": self.settings}

    def with_settings(self, settings: dict[str, Any]) -> AppFolder:
        """These settings merged over the folder's own (settings.json)."""
        return replace(self, settings=(self.settings or {}) | settings)


def load_folder(app_dir: str | Path, name: str | None = None) -> AppFolder:
    """Read workflow.json (deployed as `name` if given), settings.json if present, and the grains' code;
    raises ApiError (code "usage", status 0) naming what to fix."""
    d = Path(app_dir)
    wf_file = d / "workflow.json"
    if not wf_file.is_file():
        raise ApiError(
            0, "usage", f"{wf_file} is missing: an application folder holds workflow.json and the grains' .py files"
        )
    try:
        doc = json.loads(wf_file.read_text())
        if isinstance(doc, dict) and name:
            doc["name"] = name
        wf = parse_workflow(doc)
    except (json.JSONDecodeError, WorkflowError) as e:
        raise ApiError(0, "usage", f"{wf_file}: {e}") from None
    settings = None
    settings_file = d / "settings.json"
    if settings_file.is_file():
        try:
            settings = json.loads(settings_file.read_text())
        except OSError as e:
            raise ApiError(0, "usage", f"settings: {e}") from None
        except json.JSONDecodeError as e:
            raise ApiError(
                0, "usage", f"settings: {settings_file} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
            ) from None
    try:
        uploads = bundle(d, wf)
    except BundleError as e:
        raise ApiError(0, "usage", str(e)) from None
    return AppFolder(d, doc, wf, settings, uploads)


@dataclass(frozen=True)
class Deployment:
    """What `Client.deploy` did: the version the deploy call started and the application as last read."""

    name: str
    version: int | None  # from POST /api/v1/apps/{name}/deploy
    app: dict[str, Any]  # GET /api/v1/apps/{name} once deployed; the deploy call's answer with wait=False
    seconds: float = 0.0  # from the deploy call to `deployed` (0 with wait=False)

    @property
    def status(self) -> str:
        return str(self.app.get("status", ""))

    @property
    def hosts(self) -> list[tuple[str, str, str]]:
        return app_hosts(self.app)


@dataclass(frozen=True)
class Invocation:
    """An application's answer to `Client.invoke`."""

    status: int  # 200; 202 with async_=True; 500 when a grain raised (output is then the error event)
    output: Any  # the workflow's output, or the error event; with async_=True the answer {"execution_id"}
    execution_id: str
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def error(self) -> dict[str, Any] | None:
        """The error event's `error` ({"type", "message", "grain"}) when a grain raised, else None."""
        out = self.output
        return out["error"] if isinstance(out, dict) and set(out) == {"error"} else None


class Client:
    """One SAND address (a frontend, or nginx in front of several) and an account's API key.

    The methods name the REST API's operations and raise ApiError when it refuses (the message is the
    API's). `call` sends any request and returns the parsed answer.
    """

    def __init__(self, url: str, api_key: str | None = None, timeout_s: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"Client({self.url!r}, api_key={'...' if self.api_key else None})"

    @classmethod
    def from_login(cls, need_key: bool = True) -> Client:
        """The login `sand login` stored, SAND_URL / SAND_API_KEY overriding each part; ApiError if either
        is missing. With need_key=False, SAND_URL alone will do (invoking an application needs no account)."""
        try:
            creds = load_credentials()
            return cls(creds.url, creds.api_key)
        except ApiError:
            url = os.environ.get("SAND_URL")
            if need_key or not url:
                raise
            return cls(url)

    def save_login(self) -> Path:
        """Store this address and key as the login `from_login` (and the `sand` CLI) use; returns the file."""
        if not self.api_key:
            raise ApiError(0, "config", "no API key to store")
        return save_credentials(self.url, self.api_key)

    def login(self) -> Path:
        """Check the key (GET /api/v1/apps: ApiError 401 if refused), then `save_login`; returns the file."""
        self.apps(raw=True)  # only the key's acceptance matters here
        return self.save_login()

    def call(
        self,
        method: str,
        path: str,
        body: bytes | str | Any = None,
        *,
        content_type: str | None = None,
        query: dict[str, str] | None = None,
        ok: tuple[int, ...] = (),
        timeout_s: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """Send; raise ApiError for a status >= 400 unless it is in `ok`. A non-bytes, non-str body is sent
        as JSON."""
        data: bytes | None
        if body is None:
            data = None
        elif isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
            content_type = content_type or "application/json"
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("User-Agent", USER_AGENT)
        req.add_header("Accept", "application/json")
        if content_type:
            req.add_header("Content-Type", content_type)
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=timeout_s or self.timeout_s) as r:
                headers = dict(r.headers.items())
                return Response(r.status, headers, _parse(r.read(), r.headers.get("Content-Type", "")))
        except urllib.error.HTTPError as e:
            headers = dict(e.headers.items()) if e.headers else {}
            parsed = _parse(e.read(), headers.get("Content-Type", ""))
            if e.code in ok:
                return Response(e.code, headers, parsed)
            raise _error_of(e.code, parsed, headers, method, path, self.url) from None
        except urllib.error.URLError as e:
            raise ApiError(
                0,
                "unreachable",
                f"cannot reach {self.url}: {e.reason}; is the frontend running "
                "(`make up`), and is the URL right (`sand login`)?",
                method=method,
                path=path,
                url=self.url,
            ) from None
        except TimeoutError:
            raise ApiError(
                0,
                "unreachable",
                f"{method} {path}: no answer from {self.url} within {timeout_s or self.timeout_s:g}s",
                method=method,
                path=path,
                url=self.url,
            ) from None

    # --- accounts ---------------------------------------------------------------------------------------------

    def signup(self, name: str) -> dict[str, Any]:
        """Create an account (POST /api/v1/accounts; this client's key, if any, is the operator's admin key);
        returns {"name", "api_key"}. `Client(url, answer["api_key"])` is then the new account."""
        r = self.call("POST", "/api/v1/accounts", {"name": name})
        if not (isinstance(r.body, dict) and r.body.get("api_key")):
            raise ApiError(0, "bad_answer", f"sign-up answered without an api_key: {r.body!r}", r.body)
        return r.body

    def app_logs(self, app: str, since_ms: int | None = None, limit: int = 20) -> dict[str, Any]:
        """GET /api/v1/apps/{app}/logs: the application's executions that started at or after since_ms (epoch ms;
        default an hour ago), the newest `limit`, oldest first, each with its log lines."""
        query = {"limit": str(limit)} | ({"since": str(since_ms)} if since_ms is not None else {})
        return cast(dict[str, Any], self.call("GET", f"/api/v1/apps/{_q(app)}/logs", query=query).body)

    def set_secret(self, app: str, name: str, value: str) -> dict[str, Any]:
        """PUT /api/v1/apps/{app}/secrets/{name}: stored encrypted; the answer never holds the value. The running
        sandbox keeps its environment: the secret reaches the grains at the next deploy."""
        path = f"/api/v1/apps/{_q(app)}/secrets/{_q(name)}"
        return cast(dict[str, Any], self.call("PUT", path, {"value": value}).body)

    def secrets(self, app: str) -> list[dict[str, Any]]:
        """GET /api/v1/apps/{app}/secrets: each {"name", "bytes", "updated"}, never a value."""
        return cast(list[dict[str, Any]], self.call("GET", f"/api/v1/apps/{_q(app)}/secrets").body["secrets"])

    def triggers(self, app: str) -> list[dict[str, Any]]:
        """GET /api/v1/apps/{app}/triggers: each {"name", "kind", "every"|"cron"|"topic", ..., "next"?}."""
        return cast(list[dict[str, Any]], self.call("GET", f"/api/v1/apps/{_q(app)}/triggers").body["triggers"])

    def put_trigger(self, app: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        """PUT /api/v1/apps/{app}/triggers/{name}: a timer ({"every"} or {"cron"}) or a queue ({"topic"})."""
        return cast(dict[str, Any], self.call("PUT", f"/api/v1/apps/{_q(app)}/triggers/{_q(name)}", spec).body)

    def delete_trigger(self, app: str, name: str) -> None:
        self.call("DELETE", f"/api/v1/apps/{_q(app)}/triggers/{_q(name)}")

    def buckets(self) -> list[dict[str, Any]]:
        """GET /api/v1/buckets: the account's triggerable buckets, each {"name", "targets", "created"}."""
        return cast(list[dict[str, Any]], self.call("GET", "/api/v1/buckets").body["buckets"])

    def bucket(self, name: str) -> dict[str, Any]:
        """GET /api/v1/buckets/{bucket}: {"name", "targets": [{"app", "id", "deployed"}], "created"}."""
        return cast(dict[str, Any], self.call("GET", f"/api/v1/buckets/{_q(name)}").body)

    def put_bucket(self, name: str) -> dict[str, Any]:
        """PUT /api/v1/buckets/{bucket}: create it (an existing one is answered as it is)."""
        return cast(dict[str, Any], self.call("PUT", f"/api/v1/buckets/{_q(name)}").body)

    def delete_bucket(self, name: str) -> None:
        self.call("DELETE", f"/api/v1/buckets/{_q(name)}")

    def put_bucket_target(self, name: str, app: str, when_deployed: bool = False) -> dict[str, Any]:
        """PUT /api/v1/buckets/{bucket}/targets/{app}: a write into the bucket starts the (deployed) app."""
        query = {"when_deployed": "1"} if when_deployed else None
        path = f"/api/v1/buckets/{_q(name)}/targets/{_q(app)}"
        return cast(dict[str, Any], self.call("PUT", path, query=query).body)

    def delete_bucket_target(self, name: str, app: str) -> dict[str, Any]:
        return cast(dict[str, Any], self.call("DELETE", f"/api/v1/buckets/{_q(name)}/targets/{_q(app)}").body)

    def dead_letters(self, app: str, limit: int = 20, before: str | None = None) -> dict[str, Any]:
        """GET /api/v1/apps/{app}/dead-letters: {"dead_letters": [...], "next": id or None}, newest first."""
        query = {"limit": str(limit), **({"before": before} if before else {})}
        return cast(dict[str, Any], self.call("GET", f"/api/v1/apps/{_q(app)}/dead-letters", query=query).body)

    def endpoint(self, app: str, auth: str | None = None) -> dict[str, Any]:
        """GET (auth None) or PUT /api/v1/apps/{app}/endpoint: {"app", "auth", "keys", "signing_secret", "note"?}."""
        path = f"/api/v1/apps/{_q(app)}/endpoint"
        r = self.call("GET", path) if auth is None else self.call("PUT", path, {"auth": auth})
        return cast(dict[str, Any], r.body)

    def endpoint_call(self, method: str, app: str, tail: str, body: Any = None) -> dict[str, Any]:
        """/api/v1/apps/{app}/{tail}: POST keys {"name"} (answers the key once), GET keys, DELETE keys/{id},
        POST signing-secret (answers the secret once)."""
        return cast(dict[str, Any], self.call(method, f"/api/v1/apps/{_q(app)}/{tail}", body).body)

    def delete_secret(self, app: str, name: str) -> dict[str, Any]:
        """DELETE /api/v1/apps/{app}/secrets/{name}; ApiError 404 if the application has none of that name."""
        return cast(dict[str, Any], self.call("DELETE", f"/api/v1/apps/{_q(app)}/secrets/{_q(name)}").body)

    def delete_account(self, name: str) -> dict[str, Any]:
        """DELETE /api/v1/accounts/{name}: this account (or, with the admin key, any) with its applications and
        grains; ApiError 409 while one of its applications is not undeployed (the message names them)."""
        return cast(dict[str, Any], self.call("DELETE", f"/api/v1/accounts/{_q(name)}").body)

    def apps(self, *, raw: bool = False) -> Any:
        """GET /api/v1/apps: this account's applications, each {"name", "status", "version", "error"} (also a
        check of the key); raw=True: the answer as it is ({"apps": [...]})."""
        r = self.call("GET", "/api/v1/apps")
        return r.body if raw else _listed(r, "apps")

    # --- the operator's API (this client's key is the admin key) ------------------------------------------------

    def admin_apps(self) -> list[dict[str, Any]]:
        """GET /api/v1/admin/apps: every account's applications, each with its `owner`, status and hosts."""
        return cast(list[dict[str, Any]], self.call("GET", "/api/v1/admin/apps").body["apps"])

    def admin_hosts(self) -> list[dict[str, Any]]:
        """GET /api/v1/admin/hosts: every host agent that joined: `alive`, heartbeat, addresses, its sandboxes."""
        return cast(list[dict[str, Any]], self.call("GET", "/api/v1/admin/hosts").body["hosts"])

    def admin_undeploy(self, app: str) -> dict[str, Any]:
        """POST /api/v1/admin/apps/{app}/undeploy: undeploy any account's application (202: the host agents stop
        it)."""
        return cast(dict[str, Any], self.call("POST", f"/api/v1/admin/apps/{_q(app)}/undeploy").body)

    def admin_disable(self, account: str, reason: str = "") -> dict[str, Any]:
        """POST /api/v1/admin/accounts/{account}/disable: its keys answer 403 and its applications are undeployed."""
        r = self.call("POST", f"/api/v1/admin/accounts/{_q(account)}/disable", {"reason": reason} if reason else None)
        return cast(dict[str, Any], r.body)

    def admin_host(self, host: str, action: str, reason: str = "") -> dict[str, Any]:
        """POST /api/v1/admin/hosts/{host}/{action} (cordon, drain, uncordon), or DELETE /api/v1/admin/hosts/{host}
        for action "remove" (a dead host only: 409 for a live one)."""
        if action == "remove":
            return cast(dict[str, Any], self.call("DELETE", f"/api/v1/admin/hosts/{_q(host)}").body)
        body = {"reason": reason} if reason else None
        return cast(dict[str, Any], self.call("POST", f"/api/v1/admin/hosts/{_q(host)}/{action}", body).body)

    def admin_cluster_secret(self, step: str = "") -> dict[str, Any]:
        """GET /api/v1/admin/cluster-secret (the rotation's state: fingerprints, step, when the next is allowed), or
        POST /api/v1/admin/cluster-secret/{step} for step begin, switch or finish (409 while it is too early)."""
        if not step:
            return cast(dict[str, Any], self.call("GET", "/api/v1/admin/cluster-secret").body)
        return cast(dict[str, Any], self.call("POST", f"/api/v1/admin/cluster-secret/{_q(step)}").body)

    def admin_enable(self, account: str) -> dict[str, Any]:
        """POST /api/v1/admin/accounts/{account}/enable: its keys work again (its applications stay undeployed)."""
        return cast(dict[str, Any], self.call("POST", f"/api/v1/admin/accounts/{_q(account)}/enable").body)

    # --- applications -----------------------------------------------------------------------------------------

    def status(self, name: str) -> Any:
        """GET /api/v1/apps/{name}: the application's workflow, settings, `status`, `version`, hosts, `error`."""
        return self.call("GET", f"/api/v1/apps/{_q(name)}").body

    def grains(self, app: str | None = None, *, raw: bool = False) -> Any:
        """GET /api/v1/apps/{app}/grains (an application's own grains) or, without app, GET /api/v1/grains (the
        account's shared grains): the newest version of each, {"name", "version", "kind" ("py" or "zip"),
        "sha256", "size" (bytes), "created"}; raw=True: the answer as it is."""
        r = self.call("GET", f"/api/v1/apps/{_q(app)}/grains" if app else "/api/v1/grains")
        return r.body if raw else _listed(r, "grains")

    def delete_grain(self, name: str, app: str | None = None) -> Any:
        """DELETE one of an application's own grains, or without app one of the account's shared grains: every
        version ({"name", "deleted": true}); ApiError 409 while a deployed application uses it."""
        path = f"/api/v1/apps/{_q(app)}/grains/{_q(name)}" if app else f"/api/v1/grains/{_q(name)}"
        return self.call("DELETE", path).body

    def upload_grain(
        self, resource: str, code: bytes | str, content_type: str = "text/x-python", app: str | None = None
    ) -> Any:
        """PUT /api/v1/apps/{app}/grains/{resource} (one of that application's own grains, which no other
        application runs) or, without app, PUT /api/v1/grains/{resource} (a grain shared by the account's
        applications that have none of their own by that name): Python source, or a zip (content_type
        application/zip); a new version."""
        path = f"/api/v1/apps/{_q(app)}/grains/{_q(resource)}" if app else f"/api/v1/grains/{_q(resource)}"
        return self.call("PUT", path, code, content_type=content_type).body

    def save_app(self, workflow: dict[str, Any]) -> Any:
        """PUT /api/v1/apps/{name}: create or update an application from its workflow (and `settings`)."""
        return self.call(
            "PUT",
            f"/api/v1/apps/{_q(workflow['name'])}",
            json.dumps(workflow, indent=2),
            content_type="application/json",
        ).body

    def deploy(
        self,
        app_dir: str | Path | AppFolder,
        *,
        name: str | None = None,
        settings: dict[str, Any] | None = None,
        wait: bool = True,
        timeout_s: float = 300.0,
        progress: Progress | None = None,
    ) -> Deployment:
        """Deploy an application folder as `sand deploy` does: upload its grains (`load_folder`), save its
        workflow (under `name` if given; `settings` merged over the folder's settings.json), start the deploy
        and, unless wait=False, wait until it is deployed.

        Raises ApiError: code "usage" if the folder cannot be deployed (before anything is sent), "failed" if
        the deploy failed (the message has the hosts' errors), "timeout" after timeout_s, or the API's refusal
        (e.g. status 409 from PUT /api/v1/apps/{name}: another account holds the name)."""
        folder = app_dir if isinstance(app_dir, AppFolder) else load_folder(app_dir, name=name)
        if settings is not None:
            folder = folder.with_settings(settings)
        say = progress or _quiet
        wf = folder.workflow
        # The workflow first (it claims the name), then the folder's grains as the application's own: deploying
        # one folder never changes the code another application runs.
        self.save_app(folder.document)
        for u in folder.uploads:
            meta = self.upload_grain(u.resource, u.body, u.content_type, app=wf.name)
            meta = meta if isinstance(meta, dict) else {}
            what = "zip of " + ", ".join(u.files) if u.content_type == "application/zip" else u.files[0]
            say(f"grain {u.resource}: version {meta.get('version', '?')} ({what}, {len(u.body)} bytes)", None)
        say(f"workflow {wf.name}: entry {wf.entry}, grains {', '.join(wf.grains)}", None)
        r = self.call("POST", f"/api/v1/apps/{_q(wf.name)}/deploy")
        version = r.body.get("version") if isinstance(r.body, dict) else None
        if not wait:
            return Deployment(wf.name, version, r.body if isinstance(r.body, dict) else {})
        start = time.monotonic()
        app = self.wait(wf.name, "deployed", timeout_s, version if isinstance(version, int) else None, progress)
        if app.get("status") == "failed":
            detail = app.get("error") or "; ".join(f"{h}: {e}" for h, _, e in app_hosts(app) if e) or "no error text"
            raise ApiError(0, "failed", f"deploy of {wf.name} failed: {without_app_ids(detail, wf.name)}", app)
        return Deployment(wf.name, version, app, time.monotonic() - start)

    def update(
        self,
        app: str,
        grains: list[str],
        app_dir: str | Path | AppFolder = ".",
        *,
        wait: bool = True,
        timeout_s: float = 120.0,
        progress: Progress | None = None,
    ) -> Deployment:
        """New code for some grains of a deployed application, as `sand update` does: ask POST
        /api/v1/apps/{app}/update with "dry_run" first (a refused update uploads nothing), upload each grain's code
        from the folder as the application's own (PUT /api/v1/apps/{app}/grains/{resource}), then POST
        /api/v1/apps/{app}/update; unless wait=False, wait until every host runs it. A .py grain's new code is
        swapped in by restarting only its grain workers; a zip grain's redeploys the sandbox.

        Raises ApiError: code "usage" for a grain the folder's workflow does not have, "failed" if the update
        failed on a host (the message says why; the grain's previous code still runs there), "timeout", or the
        API's refusal (409: not deployed, or the grain's requirements changed: deploy instead)."""
        folder = app_dir if isinstance(app_dir, AppFolder) else load_folder(app_dir, name=app)
        say = progress or _quiet
        wf = folder.workflow
        resources = []
        for g in grains:
            resource = wf.grains[g].code if g in wf.grains else g
            if resource not in {u.resource for u in folder.uploads}:
                raise ApiError(
                    0, "usage", f"{folder.path}: the workflow has no grain {g!r} (its grains: {', '.join(wf.grains)})"
                )
            resources.append(resource)
        # Asked first, so an update the platform would refuse (not deployed, changed requirements) uploads nothing.
        proposed = {u.resource: u.requirements() for u in folder.uploads if u.resource in resources}
        self.call(
            "POST",
            f"/api/v1/apps/{_q(app)}/update",
            json.dumps({"grains": resources, "dry_run": True, "requirements": proposed}),
            content_type="application/json",
        )
        for u in folder.uploads:
            if u.resource in resources:
                meta = self.upload_grain(u.resource, u.body, u.content_type, app=app)
                meta = meta if isinstance(meta, dict) else {}
                say(f"grain {u.resource}: version {meta.get('version', '?')} ({len(u.body)} bytes)", None)
        r = self.call(
            "POST", f"/api/v1/apps/{_q(app)}/update", json.dumps({"grains": resources}), content_type="application/json"
        )
        body = r.body if isinstance(r.body, dict) else {}
        version = body.get("version")
        if not wait:
            return Deployment(app, version, body)
        start = time.monotonic()
        state = self.wait(app, "deployed", timeout_s, version if isinstance(version, int) else None, progress)
        problem = state.get("error") or "; ".join(f"{h}: {e}" for h, _, e in app_hosts(state) if e)
        if state.get("status") == "failed" or problem:
            # after an update every host's state is new: an error there is about this update
            raise ApiError(
                0, "failed", f"update of {app} failed: {without_app_ids(problem or 'no error text', app)}", state
            )
        return Deployment(app, version, state, time.monotonic() - start)

    def wait(
        self, name: str, want: str, timeout_s: float, version: int | None = None, progress: Progress | None = None
    ) -> dict[str, Any]:
        """Poll GET /api/v1/apps/{name} until its status is `want` or "failed" (for `version` or later, if
        given) and return it; ApiError code "timeout" (status 0) after timeout_s."""
        start = time.monotonic()
        say = progress or _quiet
        while True:
            app = self.status(name)
            app = app if isinstance(app, dict) else {}
            stale = version is not None and isinstance(app.get("version"), int) and app["version"] < version
            status = "" if stale else app.get("status", "")
            elapsed = time.monotonic() - start
            say(f"{name}: {_progress(app, want) if not stale else 'waiting for version ' + str(version)}", elapsed)
            if status in (want, "failed"):
                return app
            if elapsed > timeout_s:
                raise ApiError(0, "timeout", f"{name} is still {app.get('status', '?')} after {timeout_s:g}s", app)
            time.sleep(POLL_S)

    def undeploy(
        self, name: str, *, wait: bool = True, timeout_s: float = 120.0, progress: Progress | None = None
    ) -> dict[str, Any]:
        """Stop an application's sandboxes and, unless wait=False, wait until it is undeployed (ApiError code
        "failed" if that failed, "timeout" after timeout_s). The application and its grains stay."""
        r = self.call("POST", f"/api/v1/apps/{_q(name)}/undeploy")
        if not wait:
            return r.body if isinstance(r.body, dict) else {}
        app = self.wait(name, "undeployed", timeout_s, progress=progress)
        if app.get("status") == "failed":
            detail = without_app_ids(app.get("error") or "no error text", name)
            raise ApiError(0, "failed", f"undeploy of {name} failed: {detail}", app)
        return app

    def delete(self, name: str) -> None:
        """DELETE /api/v1/apps/{name}: delete an undeployed application, freeing its name."""
        self.call("DELETE", f"/api/v1/apps/{_q(name)}")

    # --- invocations and executions -----------------------------------------------------------------------------

    def invoke(
        self,
        app: str,
        value: Any = NO_INPUT,
        *,
        async_: bool = False,
        timeout_s: float = 330.0,
        key: str | None = None,
        sign: str | None = None,
        idempotency_key: str | None = None,
    ) -> Invocation:
        """POST /app/{app} with `value` as JSON: the workflow's output. A grain's exception is not raised: it
        comes back as the error event (`Invocation.error`). async_=True returns at once with the execution id
        (`execution` reads the result later). ApiError for the platform's own failures (e.g. 504 timeout:
        `ApiError.execution_id` names the execution). A protected endpoint wants `key` (an invoke key) or `sign`
        (its signing secret: the request is signed). `idempotency_key`: a repeat within a day runs nothing and
        answers the first execution's result (docs/triggers.md)."""
        body = b"" if value is NO_INPUT else json.dumps(value).encode()
        headers = endpoint_headers(body, key, sign)
        if idempotency_key is not None:
            headers = {**(headers or {}), "Idempotency-Key": idempotency_key}
        r = self.call(
            "POST",
            f"/app/{_q(app)}",
            body,
            content_type="application/json",
            query={"async": "1"} if async_ else None,
            ok=(500,),
            timeout_s=timeout_s,
            headers=headers,
        )
        exec_id = r.headers.get("X-Sand-Execution-Id") or (
            r.body.get("execution_id") if isinstance(r.body, dict) else None
        )
        inv = Invocation(r.status, r.body, str(exec_id or ""), r.headers)
        err = inv.error
        if r.status == 500 and not (isinstance(err, dict) and ("type" in err or "grain" in err)):
            # A 500 that is not a grain's error event is the platform's own failure.
            message = err.get("message") if isinstance(err, dict) else None
            raise ApiError(
                500,
                str(err.get("code", "")) if isinstance(err, dict) else "http",
                f"{message or repr(r.body)} (HTTP 500)",
                r.body,
                r.headers,
                method="POST",
                path=f"/app/{_q(app)}",
                execution_id=exec_id or None,
            )
        return inv

    def result(self, app: str, execution_id: str, *, key: str | None = None, sign: str | None = None) -> Invocation:
        """GET /app/{app}/executions/{id}, an end user's call (no API key needed): what the synchronous call would
        have answered (status 200, or 500 with the error event), or status 202 while the execution runs."""
        path = f"/app/{_q(app)}/executions/{_q(execution_id)}"
        r = self.call("GET", path, ok=(500,), headers=endpoint_headers(b"", key, sign))
        return Invocation(r.status, r.body, execution_id, r.headers)

    def execution(self, execution_id: str) -> Any:
        """GET /api/v1/executions/{id}: `status`, `result`, `error` and `timings` (with the per-hop `hops`)."""
        return self.call("GET", f"/api/v1/executions/{_q(execution_id)}").body

    def logs(self, execution_id: str, *, raw: bool = False) -> Any:
        """The log lines of every grain instance of an execution ({"ts", "grain", "level", "text"} each);
        raw=True: GET /api/v1/executions/{id}/logs's answer as it is."""
        body = self.call("GET", f"/api/v1/executions/{_q(execution_id)}/logs").body
        if raw:
            return body
        if isinstance(body, dict):
            for k in ("logs", "lines", "items"):
                if isinstance(body.get(k), list):
                    return body[k]
        return body if isinstance(body, list) else []
