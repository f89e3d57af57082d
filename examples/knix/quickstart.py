"""A KNIX MicroFunctions user's script, unchanged, against SAND (docs/knix.md).

It uses only KNIX's published SDK (pip install mfn-sdk==0.8.9) and KNIX's own calls: sign up (or log in), upload a
function, deploy a workflow in KNIX's JSON and one in Amazon States Language, run them synchronously and
asynchronously, use storage, read the logs, and clean up.

    MFN_URL=http://127.0.0.1:8080 MFN_USER=you@example.com MFN_PASSWORD=secret MFN_NAME=You \\
        python examples/knix/quickstart.py
"""

import json
import os

from mfn_sdk import MfnClient

GREET = """def handle(event, context):
    context.log("greeting " + event["name"])
    return "Hello, " + event["name"] + "!"
"""

client = MfnClient(
    mfn_url=os.environ.get("MFN_URL", "http://127.0.0.1:8080"),
    mfn_user=os.environ.get("MFN_USER", "knix-user@example.com"),
    mfn_password=os.environ.get("MFN_PASSWORD", "knix-password"),
    mfn_name=os.environ.get("MFN_NAME", "KNIX User"),
)
print("server:", client.version())

greet = client.add_function("greet")
greet.code = GREET

native = client.add_workflow("hello-knix")
native.json = json.dumps({"name": "hello-knix", "entry": "greet", "functions": [{"name": "greet", "next": ["end"]}]})
native.deploy(timeout=120)
print("\nnative workflow:", native.status, native.endpoint)
print("execute:", native.execute({"name": "SAND"}))
execution = native.execute_async({"name": "async SAND"})
print("execute_async:", execution.execution_id, "->", execution.get())

asl = client.add_workflow("hello-asl")
asl.json = json.dumps(
    {
        "StartAt": "Greet",
        "States": {
            "Greet": {"Type": "Task", "Resource": "greet", "ResultPath": "$.greeting", "Next": "Many?"},
            "Many?": {
                "Type": "Choice",
                "Default": "Done",
                "Choices": [{"Variable": "$.friends", "IsPresent": True, "Next": "Friends"}],
            },
            "Friends": {
                "Type": "Map",
                "ItemsPath": "$.friends",
                "Parameters": {"name.$": "$$.Map.Item.Value"},
                "Iterator": {
                    "StartAt": "GreetFriend",
                    "States": {"GreetFriend": {"Type": "Task", "Resource": "greet", "End": True}},
                },
                "ResultPath": "$.friends",
                "Next": "Done",
            },
            "Done": {"Type": "Pass", "End": True},
        },
    }
)
asl.deploy(timeout=120)
print("\nASL workflow:", asl.status)
print("execute:", asl.execute({"name": "Ada", "friends": ["Alan", "Grace"]}))

client.put("visits", "1")
client.create_counter("hits", 2)
client.increment_counter("hits", 3)
print("\nstorage: visits =", client.get("visits"), "| hits =", client.get_counter("hits"))

print("\nlogs of hello-knix:")
print(native.logs()["log"], end="")

for wf in (native, asl):
    wf.undeploy(timeout=120)
    client.delete_workflow(wf)
client.delete_function(greet)
print("\ncleaned up:", [w.name for w in client.workflows], [f.name for f in client.functions])
