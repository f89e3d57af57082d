"""webserver: return a text file of the site."""

from pathlib import Path

SITE = Path(__file__).resolve().parent / "site"


def handle(event, context):
    f = (SITE / event["path"].lstrip("/")).resolve()
    if SITE not in f.parents or not f.is_file():
        return {"status": 404, "content_type": "text/plain", "body": f"{event['path']} not found"}
    return {"status": 200, "content_type": event["content_type"], "body": f.read_text()}
