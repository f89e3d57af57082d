"""First grain of the hello workflow: builds a greeting from the request."""


def handle(event, context):
    name = event.get("name", "world") if isinstance(event, dict) else str(event)
    context.log(f"greeting {name}")
    return {"greeting": f"hello, {name}"}
