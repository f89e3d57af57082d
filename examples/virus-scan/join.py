"""virus-scan: joins the three scanners' verdicts into one answer and cleans up."""

import json


def handle(event, context):
    run = context.get_execution_id()
    verdicts = {k: json.loads(v) for k, v in context.retrieveMap(f"verdicts-{run}").items()}
    context.deleteMap(f"verdicts-{run}")
    context.deleteCounter(f"pending-{run}")
    context.delete(event["email_key"])
    findings = {k: v for k, v in verdicts.items() if v}
    return {"infected": bool(findings), "findings": findings, "scanners": sorted(verdicts)}
