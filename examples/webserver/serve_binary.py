"""webserver: return a binary file of the site, base64-encoded (events are JSON)."""

import base64
from pathlib import Path

SITE = Path(__file__).resolve().parent / "site"


def handle(event, context):
    f = (SITE / event["path"].lstrip("/")).resolve()
    if SITE not in f.parents or not f.is_file():
        return {"status": 404, "content_type": "text/plain", "body": f"{event['path']} not found"}
    data = f.read_bytes()
    return {
        "status": 200,
        "content_type": event["content_type"],
        "body_base64": base64.b64encode(data).decode(),
        "size": len(data),
    }
