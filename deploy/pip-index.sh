#!/usr/bin/env bash
# The package index this host's pip uses, as the host agent's dependency-install settings (docs/host-agent.md,
# Requirements): prints three lines
#   SAND_HOSTAGENT_SANDBOX_PIP_ALLOWED_HOSTS=<host:port,...>   the index and the host it serves files from
#   SAND_HOSTAGENT_SANDBOX_PIP_INDEX_URL=<url>                 empty: pip's default index
#   SAND_HOSTAGENT_SANDBOX_PIP_CERT=<CA bundle file>           empty: the image's own
# read from pip itself (its configuration, PIP_* variables, and its built-in default index), so no index's
# name is written into this repository. deploy/hostagent.sh exports them unless the operator set them.
source "$(dirname "$0")/lib.sh"
py="$SAND_VENV/bin/python"
[ -x "$py" ] || py="$(command -v python3)"
"$py" - <<'PY'
import os
import urllib.parse

from pip._internal.configuration import Configuration
from pip._internal.models.index import PyPI

config = Configuration(isolated=False)
config.load()


def setting(name: str) -> str:
    env = os.environ.get("PIP_" + name.upper().replace("-", "_"), "")
    if env:
        return env
    for section in ("install", "global"):
        try:
            return str(config.get_value(f"{section}.{name}"))
        except Exception:  # noqa: BLE001 - not set in that section
            pass
    return ""


index = setting("index-url")
hosts = []
for url in [index or PyPI.simple_url] + setting("extra-index-url").split():
    u = urllib.parse.urlsplit(url)
    if u.hostname:
        hosts.append(f"{u.hostname.lower()}:{u.port or (443 if u.scheme == 'https' else 80)}")
if not index or urllib.parse.urlsplit(index).hostname == urllib.parse.urlsplit(PyPI.url).hostname:
    hosts.append(f"{PyPI.file_storage_domain}:443")  # the default index serves its files from a second host
cert = setting("cert")
print("SAND_HOSTAGENT_SANDBOX_PIP_ALLOWED_HOSTS=" + ",".join(dict.fromkeys(hosts)))
print("SAND_HOSTAGENT_SANDBOX_PIP_INDEX_URL=" + index)
print("SAND_HOSTAGENT_SANDBOX_PIP_CERT=" + (cert if cert and os.path.isfile(cert) else ""))
PY
