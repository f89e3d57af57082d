"""The grain API's management calls (KNIX's names and answers; docs/knix.md "From a grain"), a part of ``GrainContext``.

A KNIX function manages triggers, triggerable buckets and even workflows from inside a workflow:
``context.addTrigger``, ``addTriggerForWorkflow``, ``addStorageTriggerForWorkflow``, ``_invoke_management_api``...
On KNIX they are HTTP calls to the management service with the user's token. A SAND sandbox has no network and holds
no key: the request goes over the local data layer's connection (``manage``) to the host agent, which hands it through
its gate to a frontend; the frontend runs it as a KNIX door action of the application's owner (so a function can do
what its owner may, through the same checks, and nothing of another account) and the answer comes back the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["ManagementCalls"]


class ManagementCalls:
    """Mixed into GrainContext, which provides ``_dl()``."""

    _dl: Callable[[], Any]
    flush_logs: Callable[[], None] | None

    # ---- the channel
    def _invoke_management_api(self, request: Any) -> tuple[bool, str, Any]:
        """KNIX's (status, message, response): status True when the platform answered with a KNIX reply
        ({"status": "success" | "failure", "data": {...}}), whatever it says."""
        if not isinstance(request, dict):
            return False, "Request must be specified as a dictionary", None
        if not isinstance(request.get("data"), dict):
            return False, "Request must contain a dictionary named 'data'", None
        if (
            self.flush_logs is not None
        ):  # what it printed so far is in its workflow's logs, as on KNIX, if it reads them
            self.flush_logs()
        try:
            raw = self._dl().manage(json.dumps(request).encode())
        except Exception as e:  # a DataLayerError (not imported: it pulls in Thrift): no frontend, too large, busy
            return False, f"the management request did not reach the platform: {e}", None
        try:
            response = json.loads(raw)
        except ValueError as e:
            return False, f"Json parsing error: {e}, response body: {raw!r}", None
        if isinstance(response, dict) and "status" in response:
            return True, "Received a valid response from the management service", response
        return False, f"Received an incorrectly formed response from the management service: {response}", response

    def _manage(self, action: str, data: dict[str, Any], what: str) -> tuple[bool, str, Any]:
        """(ok, message, response) of one action; on failure ``message`` says why, as KNIX prints it."""
        status, message, response = self._invoke_management_api({"action": action, "data": data})
        if not status or not isinstance(response, dict) or response.get("status") != "success":
            error = f"{message}, response: {response}"
            print(f"Error: Unable to {what}, Error message: {error}")
            return False, error, response
        return True, str(response.get("data", {}).get("message", "")), response

    # ---- timer triggers (KNIX: trigger_type "timer"; "amqp" is refused by the platform, naming what it supports)
    def addTrigger(self, trigger_name: str, trigger_info: dict[str, Any]) -> tuple[bool, str]:  # noqa: N802
        ok, message, _ = self._manage(
            "addTrigger",
            {"trigger_name": trigger_name, "trigger_info": trigger_info},
            f"create trigger {trigger_name} with information: {trigger_info}",
        )
        return ok, message

    def addTriggerTimer(self, trigger_name: str, trigger_info: dict[str, Any]) -> tuple[bool, str]:  # noqa: N802
        if "timer_interval_ms" not in trigger_info:
            return False, "Missing parameter for timer trigger: timer_interval_ms"
        return self.addTrigger(trigger_name, trigger_info)

    def addTriggerAMQP(self, trigger_name: str, trigger_info: dict[str, Any]) -> tuple[bool, str]:  # noqa: N802
        for field in ("amqp_addr", "routing_key"):
            if field not in trigger_info:
                return False, f"Missing parameter for AMQP trigger: {field}"
        return self.addTrigger(trigger_name, trigger_info)

    def addTriggerForWorkflow(  # noqa: N802
        self, trigger_name: str, workflow_name: str, workflow_state: str = ""
    ) -> tuple[bool, str]:
        """``workflow_state``: the state the trigger's events start the workflow at (default its StartAt)."""
        data = {"trigger_name": trigger_name, "workflow_name": workflow_name, "workflow_state": workflow_state or ""}
        ok, message, _ = self._manage(
            "addTriggerForWorkflow", data, f"add trigger {trigger_name} for workflow {workflow_name}"
        )
        return ok, message

    def deleteTriggerForWorkflow(self, trigger_name: str, workflow_name: str) -> tuple[bool, str]:  # noqa: N802
        ok, message, _ = self._manage(
            "deleteTriggerForWorkflow",
            {"trigger_name": trigger_name, "workflow_name": workflow_name},
            f"remove workflow: {workflow_name} from the trigger: {trigger_name}",
        )
        return ok, message

    def deleteTrigger(self, trigger_name: str) -> tuple[bool, str]:  # noqa: N802
        ok, message, _ = self._manage("deleteTrigger", {"trigger_name": trigger_name}, f"delete trigger {trigger_name}")
        return ok, message

    # ---- triggerable buckets (docs/data-triggers.md); KNIX answers a bare boolean for these
    def addTriggerableBucket(self, bucketName: str) -> bool:  # noqa: N802, N803
        return self._manage(
            "addTriggerableBucket", {"bucketname": bucketName}, f"add a triggerable bucket: {bucketName}"
        )[0]

    def deleteTriggerableBucket(self, bucketName: str) -> bool:  # noqa: N802, N803
        return self._manage(
            "deleteTriggerableBucket", {"bucketname": bucketName}, f"delete a triggerable bucket: {bucketName}"
        )[0]

    def addStorageTriggerForWorkflow(self, workflowName: str, bucketName: str) -> bool:  # noqa: N802, N803
        return self._manage(
            "addStorageTriggerForWorkflow",
            {"workflowname": workflowName, "bucketname": bucketName},
            f"add a storage trigger for workflow {workflowName}, triggerable bucket {bucketName}",
        )[0]

    def deleteStorageTriggerForWorkflow(self, workflowName: str, bucketName: str) -> bool:  # noqa: N802, N803
        # "tablename": the field KNIX's own function API sends for this action
        return self._manage(
            "deleteStorageTriggerForWorkflow",
            {"workflowname": workflowName, "tablename": bucketName},
            f"delete a storage trigger for workflow {workflowName}, triggerable bucket {bucketName}",
        )[0]

    def _getTriggerableBuckets(self) -> dict[str, Any] | None:  # noqa: N802
        ok, _, response = self._manage("getTriggerableBuckets", {}, "fetch the triggerable buckets")
        return response if ok else None

    def _getWorkflowDetails(self, workflowName: str) -> dict[str, Any] | None:  # noqa: N802, N803
        ok, _, response = self._manage(
            "getWorkflowDetails", {"workflowname": workflowName}, f"fetch details for workflow: {workflowName}"
        )
        return response if ok else None
