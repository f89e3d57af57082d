"""Second grain of the hello workflow: makes the greeting louder."""


def handle(event, context):
    return {"greeting": event["greeting"].upper() + "!", "execution_id": context.get_execution_id()}
