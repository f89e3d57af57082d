"""Install an application's requirements, inside a throw-away dependency container (docs/host-agent.md).

The host agent starts this in a container from the sandbox image with no network: the only way out is
the HTTP CONNECT proxy on the Unix socket it mounts at ``--proxy-socket``, which reaches only the package
index the operator allows. This program listens on the container's own loopback, forwards each
connection to that socket, runs pip from the wheel baked into the image with the requirement files, and
copies what pip installed into ``--out`` (the only writable host folder). Its output is pip's, which the
host agent shows the developer when the install fails. Standard library only.

    python3 -m grainworker._deps --out /deps/out --target /deps/target --proxy-socket /deps/proxy/proxy.sock \\
        [--index-url URL] [--cert /deps/in/ca.pem] -r /deps/in/app.txt [-r ...]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import threading
from typing import IO

PIP_WHEELS = "/opt/sand/pip/pip-*.whl"


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(listener: socket.socket, proxy_socket: str) -> None:
    """Forward every connection on the loopback listener to the proxy's Unix socket."""
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(proxy_socket)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def pip_command(
    pip: list[str], target: str, requirements: list[str], index_url: str, cert: str, proxy: str
) -> list[str]:
    """The pip install both the platform's install container and the emulator run (``pip``: how pip is started)."""
    # --isolated: no pip configuration or PIP_* variable of the machine counts, only these options
    cmd = [
        *pip,
        "install",
        "--isolated",
        "--no-input",
        "--disable-pip-version-check",
        "--no-cache-dir",
        "--no-warn-script-location",
        "--progress-bar",
        "off",
        "--no-compile",
        "--target",
        target,
    ]
    if proxy:
        cmd += ["--proxy", proxy]
    if index_url:
        cmd += ["--index-url", index_url]
    if cert:
        cmd += ["--cert", cert]
    for r in requirements:
        cmd += ["-r", r]
    return cmd


def pip_environment(proxy: str, cert: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """pip's environment. An sdist's build dependencies (setuptools for langdetect==1.0.9) are installed by a
    second pip that pip starts for build isolation; pip 24 passes it the index but not --proxy or --cert, so
    without these variables it resolves the index's name itself and fails ("Temporary failure in name
    resolution") where the proxy is the only way out. That pip is not --isolated: PIP_PROXY and PIP_CERT reach it
    (and the proxy variables reach any other HTTP client a build runs)."""
    env = {
        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_CACHE_DIR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        **(base or {}),
    }
    if proxy:
        env.update(PIP_PROXY=proxy, HTTP_PROXY=proxy, HTTPS_PROXY=proxy, http_proxy=proxy, https_proxy=proxy)
    if cert:
        env["PIP_CERT"] = cert
    return env


def install(
    pip: list[str],
    target: str,
    out: str,
    requirements: list[str],
    index_url: str,
    cert: str,
    proxy: str,
    env: dict[str, str] | None = None,
    output: IO[str] | None = None,
) -> int:
    """Install the requirements with pip into ``target``, then copy what it installed into ``out``; pip's exit
    status. pip's output goes to ``output`` (None: this process's stdout and stderr)."""
    code = subprocess.call(
        pip_command(pip, target, requirements, index_url, cert, proxy),
        env=env or pip_environment(proxy, cert),
        stdout=output,
        stderr=subprocess.STDOUT if output is not None else None,
    )
    if code != 0:
        return code
    shutil.rmtree(os.path.join(target, "bin"), ignore_errors=True)  # scripts: nothing runs them here
    for entry in os.scandir(target):  # not the folder itself: --out belongs to the host agent
        dest = os.path.join(out, entry.name)
        if entry.is_dir(follow_symlinks=False):
            shutil.copytree(entry.path, dest, symlinks=True)
        else:
            shutil.copy2(entry.path, dest, follow_symlinks=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m grainworker._deps", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder to copy the installed packages into")
    ap.add_argument("--target", required=True, help="pip --target (a size-limited tmpfs)")
    ap.add_argument("--proxy-socket", required=True, help="the host agent's proxy to the package index")
    ap.add_argument("--index-url", default="", help="the package index (empty: pip's default)")
    ap.add_argument("--cert", default="", help="CA bundle for the index's TLS")
    ap.add_argument("-r", "--requirement", action="append", default=[], help="a requirements file")
    args = ap.parse_args(argv)
    wheels = sorted(glob.glob(PIP_WHEELS))
    if not wheels:
        print(f"no pip wheel at {PIP_WHEELS}: the sandbox image was built without it", file=sys.stderr)
        return 2
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    threading.Thread(target=_serve, args=(listener, args.proxy_socket), daemon=True).start()
    proxy = f"http://127.0.0.1:{listener.getsockname()[1]}"
    pip = [sys.executable, os.path.join(wheels[-1], "pip")]
    return install(pip, args.target, args.out, args.requirement, args.index_url, args.cert, proxy)


if __name__ == "__main__":
    sys.exit(main())
