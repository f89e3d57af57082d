"""SAND's developer side: the `sand` CLI (sandclient.cli) and its REST client (sandclient.client)."""
