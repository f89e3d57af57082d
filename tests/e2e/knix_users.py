"""A KNIX user of the real system for the e2e tests: signed up through mfn-sdk (its first login fails, so it signs up
when given a name, as KNIX's quick start does), and everything it made removed after its tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any


def knix_user(base: str, tag: str) -> Iterator[Any]:
    """Yield an mfn_sdk.MfnClient of a new user ``<tag>-<random>@example.com``; remove what it made after."""
    import mfn_sdk  # a dev dependency: the tests that use this skip without it

    email = f"{tag}-{uuid.uuid4().hex[:8]}@example.com"
    client = mfn_sdk.MfnClient(mfn_url=base, mfn_user=email, mfn_password="correct horse", mfn_name="KNIX User")
    yield client
    for wf in list(client.workflows):  # (delete_workflow removes from the list it returned)
        if wf.status not in ("undeployed", "failed"):
            wf.undeploy(timeout=120)
        client.delete_workflow(wf)
    for f in list(client.functions):
        client.delete_function(f)
    client.delete_user()
