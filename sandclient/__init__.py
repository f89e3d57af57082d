"""SAND's Python client and the `sand` CLI built on it (standard library only; docs/getting-started.md).

    from sandclient import Client

    client = Client("http://127.0.0.1:8080", "<api-key>")   # or Client.from_login(): what `sand login` stored
    client.deploy("examples/hello")                          # upload the grains and workflow, deploy, wait
    run = client.invoke("hello", {"name": "sand"})
    print(run.output, run.execution_id)                      # {'greeting': 'HELLO, SAND!', ...}
    print(client.execution(run.execution_id)["status"])      # "succeeded"
    for line in client.logs(run.execution_id):
        print(line["grain"], line["text"])

Every refusal of the API is an `ApiError` (status, code, message as the API gave them).
"""

from sandclient.client import ApiError, Client, Deployment, Invocation

__all__ = ["ApiError", "Client", "Deployment", "Invocation"]
