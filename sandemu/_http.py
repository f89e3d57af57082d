"""The emulator's HTTP front: the same invoke API as the SAND frontend, served by Flask."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, jsonify, request

from grainworker.envelope import is_error
from sandemu import Emulator, EmulatorError


def _error(status: int, code: str, message: str) -> tuple[Response, int]:
    return jsonify({"error": {"code": code, "message": message}}), status


def create_app(emulator: Emulator) -> Flask:
    app = Flask("sand-emulator")

    @app.post("/app/<name>")
    def invoke(name: str) -> Any:
        if name != emulator.app:
            return _error(404, "not_found", f"no application {name!r} here; the emulator runs {emulator.app!r}")
        body = request.get_data()
        try:
            value = request.get_json(force=True, silent=False) if body.strip() else None
        except Exception as e:  # noqa: BLE001 - werkzeug raises BadRequest with the parser's message
            return _error(400, "bad_request", f"request body is not valid JSON: {getattr(e, 'description', e)}")
        try:
            result, execution_id = emulator.invoke(value)
        except TimeoutError as e:
            return _error(504, "timeout", str(e))
        except EmulatorError as e:  # a grain's code did not load: the application cannot run (a failed deploy)
            return _error(503, "not_deployed", str(e))
        # A grain's failure reaches the caller as 500 with the error event (same as the frontend).
        status = 500 if is_error(result) else 200
        resp = jsonify(result)
        resp.status_code = status
        resp.headers["X-Sand-Execution-Id"] = execution_id
        return resp

    @app.get("/healthz")
    def healthz() -> Any:
        return jsonify({"status": "ok", "app": emulator.app})

    return app
