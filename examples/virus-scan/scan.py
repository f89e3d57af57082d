"""virus-scan: one scanner per grain (the same code under three grain names). The last scanner to
finish, found through a data-layer counter, triggers the grain that joins the verdicts."""

import json
import re

SIGNATURES = ("X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR", "evil-macro")
BAD_EXTENSIONS = (".exe", ".scr", ".js", ".vbs")
BAD_HOSTS = ("malware.example", "phish.example")


def scan(kind, email):
    if kind == "scan_body":
        hits = [s for s in SIGNATURES if s in email.get("body", "")]
    elif kind == "scan_attachments":
        hits = [a for a in email.get("attachments", []) if a.lower().endswith(BAD_EXTENSIONS)]
    else:
        hits = [u for u in re.findall(r"https?://([^/\s]+)", email.get("body", "")) if u in BAD_HOSTS]
    return hits


def handle(event, context):
    run = context.get_execution_id()
    me = context.get_grain_name()
    email = json.loads(context.get(event["email_key"]))
    hits = scan(me, email)
    context.log(f"{me}: {len(hits)} finding(s)")
    context.putMapEntry(f"verdicts-{run}", me, json.dumps(hits))
    if context.decrementCounter(f"pending-{run}", 1) == 0:
        context.add_workflow_next("join", {"email_key": event["email_key"]})
    return None
