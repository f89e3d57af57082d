"""webserver: everything the site does not serve."""


def handle(event, context):
    return {"status": 404, "content_type": "text/plain", "body": f"{event['path']} not found"}
