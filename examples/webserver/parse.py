"""webserver (paper §7): parse the request and dispatch by file type to the grain that returns it."""

import posixpath

TEXT = {".html": "text/html", ".css": "text/css", ".js": "application/javascript", ".txt": "text/plain"}
BINARY = {".png": "image/png", ".ico": "image/x-icon"}


def handle(event, context):
    raw = str(event.get("path", "/") if isinstance(event, dict) else event)
    path = posixpath.normpath("/" + raw.lstrip("/"))
    if path == "/":
        path = "/index.html"
    ext = posixpath.splitext(path)[1].lower()
    if ext in TEXT:
        context.add_workflow_next("serve_text", {"path": path, "content_type": TEXT[ext]})
    elif ext in BINARY:
        context.add_workflow_next("serve_binary", {"path": path, "content_type": BINARY[ext]})
    else:
        context.add_workflow_next("not_found", {"path": path})
    return None
