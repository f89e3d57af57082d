"""`sand alias set|list|delete` against the fake REST API of test_cli."""

from __future__ import annotations

import pytest

from sandclient.cli import main as sand
from tests.test_cli import FakeApi, api, logged_in  # noqa: F401 - pytest fixtures

__all__ = ["api", "logged_in"]

ROUTE = "/api/v1/apps/shop/aliases"


def test_set_sends_the_version_and_the_canary_with_its_weight(
    logged_in: FakeApi,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    answer = {"name": "prod", "version": 3, "weights": {"4": 0.1}, "serves": True}
    logged_in.on("PUT", f"{ROUTE}/prod", 200, answer)
    assert sand(["alias", "set", "shop", "prod", "3", "--canary", "4", "--weight", "0.1"]) == 0
    [req] = logged_in.requests
    assert req.json() == {"version": 3, "weights": {"4": 0.1}}
    assert capsys.readouterr().out == "shop: prod -> version 3 + version 4 (10%)\n"


def test_set_without_a_canary_sends_the_version_only(logged_in: FakeApi) -> None:  # noqa: F811
    logged_in.on("PUT", f"{ROUTE}/prod", 200, {"name": "prod", "version": 2, "weights": {}})
    assert sand(["alias", "set", "shop", "prod", "2"]) == 0
    assert logged_in.requests[0].json() == {"version": 2}


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--canary", "4"], "go together"),
        (["--weight", "0.1"], "go together"),
        (["--canary", "4", "--weight", "2"], "from 0 to 1"),
    ],
)
def test_a_bad_split_is_refused_before_calling(
    logged_in: FakeApi,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    assert sand(["alias", "set", "shop", "prod", "3", *extra]) == 1
    assert logged_in.requests == []
    assert message in capsys.readouterr().err


def test_list_shows_splits_and_what_does_not_serve(
    logged_in: FakeApi,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    aliases = [
        {"name": "canary", "version": 2, "weights": {"1": 0.5}, "serves": False, "note": "version 1 does not run"},
        {"name": "prod", "version": 2, "weights": {}, "serves": True},
    ]
    logged_in.on("GET", ROUTE, 200, {"app": "shop", "running_version": 2, "aliases": aliases})
    assert sand(["alias", "list", "shop"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "canary -> version 2 + version 1 (50%)  (answers 409: version 1 does not run)",
        "prod -> version 2",
    ]


def test_delete_and_an_api_error_is_one_line(
    logged_in: FakeApi,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    logged_in.on("DELETE", f"{ROUTE}/prod", 200, {"app": "shop", "name": "prod", "deleted": True})
    assert sand(["alias", "delete", "shop", "prod"]) == 0
    assert capsys.readouterr().out == "shop: alias prod deleted\n"
    logged_in.on("DELETE", f"{ROUTE}/beta", 404, {"error": {"code": "not_found", "message": "no alias 'beta'"}})
    assert sand(["alias", "delete", "shop", "beta"]) == 1
    assert "no alias 'beta'" in capsys.readouterr().err
