"""A SAND cluster on this machine (deploy/cluster.sh) and the workload its fault tests and benchmarks/recovery.py
run on it: a 3-grain application that writes to the data layer, a stream of numbered requests, and the check that
every request ended with exactly one correct result."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandclient.client import ApiError, Client

ROOT = Path(__file__).resolve().parents[2]

# The ledger: `deposit` writes the order to the data layer, `audit` leaves a key of its own there on every run (a
# re-run shows as two keys for one request), `receipt` answers. Every request is numbered; its result names its number.
LEDGER = {
    "deposit.py": "import json\n\ndef handle(event, context):\n"
    "    context.put('order-%d' % event['n'], json.dumps(event))\n    return event\n",
    "audit.py": "import os\n\ndef handle(event, context):\n"
    "    context.put('audit-%d-%s' % (event['n'], os.urandom(4).hex()), '1')\n    return event\n",
    "receipt.py": "import time\n\ndef handle(event, context):\n    time.sleep(event.get('sleep_s', 0))\n"
    "    return {'n': event['n'], 'receipt': 2 * event['n'],\n"
    "            'execution_id': context.get_execution_id()}\n",
}
LEDGER_WORKFLOW = {
    "entry": "deposit",
    "functions": [
        {"name": "deposit", "next": ["audit"]},
        {"name": "audit", "next": ["receipt"]},
        {"name": "receipt", "next": ["end"]},
    ],
}


# subnet -> state dir of the clusters made here: their generated passwords are under it (cassandra_keys logs in).
_HOMES: dict[str, Path] = {}


class Cluster:
    """deploy/cluster.sh with its own state dir, namespaces, bridge, subnet and nginx port (never a running one's)."""

    def __init__(self, home: Path, *, prefix: str = "sandf-", subnet: str = "10.80.0", nginx_port: int = 8090) -> None:
        self.home = home
        self.subnet = subnet
        _HOMES[subnet] = home
        self.url = f"http://127.0.0.1:{nginx_port}"
        self.env = {
            **os.environ,
            "SAND_HOME": str(home),
            "SAND_DIST": str(ROOT / ".sand" / "dist"),
            "SAND_NETNS_PREFIX": prefix,
            "SAND_NETNS_BRIDGE": prefix.rstrip("-") + "br0",
            "SAND_NETNS_SUBNET": subnet,
            "SAND_NGINX_PORT": str(nginx_port),
        }

    def run(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(
            ["bash", str(ROOT / "deploy" / "cluster.sh"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and r.returncode != 0:
            raise AssertionError(f"cluster.sh {' '.join(args)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
        return r

    def addr(self, host: str) -> str:
        return f"{self.subnet}.{10 + int(host[1:])}"

    def status(self) -> dict[str, list[str]]:
        """Host id -> its status line's words (id, address, state, 'hostagent', pid, components...)."""
        return {line.split()[0]: line.split() for line in self.run("status").stdout.splitlines()}


def deploy_ledger(
    client: Client, name: str, tmp: Path, timeout_s: float = 180, settings: dict[str, Any] | None = None
) -> None:
    folder = tmp / name
    folder.mkdir(parents=True, exist_ok=True)
    for fname, code in LEDGER.items():
        (folder / fname).write_text(code)
    (folder / "workflow.json").write_text(json.dumps({"name": name, **LEDGER_WORKFLOW}))
    client.deploy(folder, name=name, timeout_s=timeout_s, settings=settings)


def signup(url: str) -> Client:
    c = Client(url)
    key = c.signup("ops" + uuid.uuid4().hex[:8])["api_key"]
    return Client(url, key, timeout_s=60)


@dataclass
class Outcome:
    """What the caller saw for request n: the HTTP status, the execution id, the output (None if none)."""

    n: int
    status: int
    execution_id: str
    output: Any = None
    error: str = ""
    sent: float = 0.0
    answered: float = 0.0


@dataclass
class Stream:
    """Numbered requests from `threads` callers; `on_progress(done)` is called after each answer (e.g. to kill a
    host once some are done)."""

    client: Client
    app: str
    count: int
    threads: int = 8
    sleep_s: float = 0.0
    timeout_s: float = 60.0
    on_progress: Callable[[int], None] | None = None
    outcomes: list[Outcome] = field(default_factory=list)

    def run(self) -> list[Outcome]:
        lock = threading.Lock()
        todo = iter(range(self.count))

        def worker() -> None:
            while True:
                with lock:
                    n = next(todo, None)
                if n is None:
                    return
                t0 = time.monotonic()
                try:
                    inv = self.client.invoke(self.app, {"n": n, "sleep_s": self.sleep_s}, timeout_s=self.timeout_s)
                    o = Outcome(n, inv.status, inv.execution_id, inv.output)
                except ApiError as e:
                    o = Outcome(n, e.status, e.execution_id or "", None, f"{e.code}: {e}")
                except Exception as e:  # noqa: BLE001 - a connection error is an outcome too (no execution id)
                    o = Outcome(n, 0, "", None, repr(e))
                o.sent, o.answered = t0, time.monotonic()
                with lock:
                    self.outcomes.append(o)
                    done = len(self.outcomes)
                if self.on_progress:
                    self.on_progress(done)

        ts = [threading.Thread(target=worker, daemon=True) for _ in range(self.threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return sorted(self.outcomes, key=lambda o: o.n)


def settle(client: Client, outcomes: list[Outcome], deadline_s: float) -> dict[int, Any]:
    """Each request's stored result, read back by its execution id (waiting for those still running): n -> result.
    A request with no execution id, or whose execution is not done by the deadline, maps to an error string."""
    results: dict[int, Any] = {}
    end = time.monotonic() + deadline_s
    pending = {o.n: o for o in outcomes}
    while pending:
        for n, o in list(pending.items()):
            if not o.execution_id:
                results[n] = f"no execution id ({o.status} {o.error})"
                del pending[n]
                continue
            try:
                ex = client.execution(o.execution_id)
            except ApiError as e:
                ex = {"status": f"unreadable: {e}"}
            # 'timeout' is not an end: the synchronous caller stopped waiting, the result may still come
            if ex.get("status") not in ("running", "queued", "timeout") and not str(ex.get("status")).startswith(
                "unreadable"
            ):
                results[n] = ex.get("result") if ex.get("status") == "succeeded" else ex
                del pending[n]
        if not pending or time.monotonic() > end:
            break
        time.sleep(1)
    for n, o in pending.items():
        results[n] = f"execution {o.execution_id} not done after {deadline_s}s"
    return results


def wrong_results(outcomes: list[Outcome], results: dict[int, Any]) -> list[str]:
    """Every request whose result is not exactly its own, and every execution id given to two requests."""
    bad = []
    for o in outcomes:
        r = results.get(o.n)
        if not (
            isinstance(r, dict)
            and r.get("n") == o.n
            and r.get("receipt") == 2 * o.n
            and r.get("execution_id") == o.execution_id
        ):
            bad.append(f"request {o.n} (HTTP {o.status}, execution {o.execution_id}): {str(r)[:300]}")
        if o.status == 200 and o.output != r:
            bad.append(f"request {o.n}: answered {o.output} but stored {r}")
    ids = [o.execution_id for o in outcomes if o.execution_id]
    if len(ids) != len(set(ids)):
        bad.append(f"{len(ids) - len(set(ids))} execution ids shared by two requests")
    return bad


@contextmanager
def cassandra_session(addr: str) -> Iterator[Any]:
    """A session on the cluster's Cassandra at `addr`, logged in as admin (the operator) when the cluster has logins
    (deploy/ansible: sand_auth)."""
    from cassandra import ConsistencyLevel
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
    from cassandra.cluster import Cluster as CassandraCluster
    from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

    home = _HOMES.get(addr.rpartition(".")[0])
    admin = home / "cluster" / "secrets" / "admin.password" if home else None
    auth = (
        {"auth_provider": PlainTextAuthProvider("admin", admin.read_text().strip())} if admin and admin.exists() else {}
    )
    # Reads at QUORUM, as SAND's own are (LOCAL_QUORUM): what an application sees, not one replica's view.
    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy()), consistency_level=ConsistencyLevel.QUORUM
    )
    cluster = CassandraCluster(
        [addr],
        protocol_version=5,
        connect_timeout=10,
        control_connection_timeout=10,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        **auth,
    )
    try:
        yield cluster.connect()
    finally:
        cluster.shutdown()


def cassandra_keys(addr: str, app_id: str) -> set[str]:
    """An application's keys in Cassandra (the global data layer), by its id (GET /api/v1/apps/{name}'s `id`)."""
    with cassandra_session(addr) as s:
        return {r.key for r in s.execute("SELECT key FROM sand.kv WHERE app = %s", (app_id,), timeout=20)}


def wipe_keyspace(addr: str, keyspace: str = "sand") -> int:
    """Every table of `keyspace` truncated (as losing the data would leave it): how many tables."""
    with cassandra_session(addr) as s:
        tables = [
            r.table_name
            for r in s.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,))
        ]
        for t in tables:
            s.execute(f"TRUNCATE {keyspace}.{t}", timeout=60)
        return len(tables)


def ledger_in_cassandra(
    addr: str, app_id: str, count: int, deadline_s: float = 120
) -> tuple[set[int], dict[int, int], float]:
    """The ledger's orders and audit runs in Cassandra once every one of `count` orders is there, or at the deadline.
    The local data layers write to Cassandra behind the executions (write-behind: an answer does not wait for it), so
    an order reaches Cassandra some time after its answer; the seconds this took are returned too."""
    start = time.monotonic()
    while True:
        orders, audits = ledger_runs(cassandra_keys(addr, app_id))
        waited = time.monotonic() - start
        if len(orders) >= count or waited > deadline_s:
            return orders, audits, waited
        time.sleep(2)


def ledger_runs(keys: set[str]) -> tuple[set[int], dict[int, int]]:
    """From the ledger's keys: the requests whose order was written, and how many times `audit` ran for each."""
    orders = {int(k.split("-")[1]) for k in keys if k.startswith("order-")}
    audits: dict[int, int] = {}
    for k in keys:
        if k.startswith("audit-"):
            n = int(k.split("-")[1])
            audits[n] = audits.get(n, 0) + 1
    return orders, audits


def _cgroup2_root() -> Path:
    """Where the unified (v2) cgroup hierarchy is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified (hybrid)."""
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if parts[2] == "cgroup2":
            return Path(parts[1])
    raise AssertionError("no cgroup2 hierarchy is mounted: iptables cannot tell one process' packets apart")


def listening_pid(cluster: Cluster, host: str, port: int) -> int:
    """The pid of the process listening on `port` in `host`'s namespace."""
    ns = cluster.env["SAND_NETNS_PREFIX"] + host
    out = subprocess.run(
        ["ip", "netns", "exec", ns, "ss", "-Hltnp", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    pids = {int(p.split("=")[1]) for p in out.replace(",", " ").split() if p.startswith("pid=")}
    assert len(pids) == 1, out
    return pids.pop()


@contextmanager
def cut_off(cluster: Cluster, host: str, pid: int, ports: list[int]) -> Iterator[None]:
    """Drop what process `pid` on `host` sends to `ports` (anywhere, its own host too), and nothing else's: the process
    is moved into a cgroup of its own (v2, no controller) that an iptables rule in the host's namespace matches.
    Put back as it was on leaving."""
    root = _cgroup2_root()
    own = root / f"sand-test-cut-{pid}"
    before = next(
        line.split("::", 1)[1]
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        if line.startswith("0::")
    )
    ns = cluster.env["SAND_NETNS_PREFIX"] + host
    rule = ["OUTPUT", "-p", "tcp", "-m", "multiport", "--dports", ",".join(map(str, ports))]
    rule += ["-m", "cgroup", "--path", own.name, "-j", "DROP"]
    own.mkdir(exist_ok=True)
    (own / "cgroup.procs").write_text(str(pid))
    subprocess.run(["ip", "netns", "exec", ns, "iptables", "-I", *rule], check=True)
    # A socket keeps the cgroup it was made in: the process' open connections to those ports are closed too (ss -K),
    # and the ones it opens again are dropped.
    wanted = " or ".join(f"dport = :{p}" for p in ports)
    listed = subprocess.run(
        ["ip", "netns", "exec", ns, "ss", "-Htnp", "state", "established", f"( {wanted} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in listed.splitlines():
        if f"pid={pid}," in line:
            sport = line.split()[2].rsplit(":", 1)[1]  # recv-q, send-q, local address:port, peer (state filtered)
            subprocess.run(["ip", "netns", "exec", ns, "ss", "-K", "-tn", f"sport = :{sport}"], capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["ip", "netns", "exec", ns, "iptables", "-D", *rule], check=False)
        if Path(f"/proc/{pid}").exists():
            (root / before.lstrip("/") / "cgroup.procs").write_text(str(pid))
        own.rmdir()
