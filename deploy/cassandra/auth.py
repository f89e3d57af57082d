"""Cassandra's logins for a SAND cluster (deploy/cassandra.sh, with SAND_CASSANDRA_SECRETS): PasswordAuthenticator and
CassandraAuthorizer are on, and this makes the roles once the node answers, idempotently:

- `admin`, a superuser, with the generated admin password;
- one role per kind of SAND process (`hostagent`, `frontend`), able to log in, with its generated password and every
  permission on data keyspaces (they create SAND's keyspaces and tables) and reading `system_views.settings`, none on
  roles;
- the built-in `cassandra` superuser (password `cassandra`, known to everyone) loses its login and its superuser
  status, and gets a random password.

    python auth.py ready ADDR PORT SECRETS   exit 0 when a CQL query answers (as admin, or as the built-in superuser
                                              before `roles` ran)
    python auth.py roles ADDR PORT SECRETS   make the roles above
    python auth.py replicate ADDR PORT SECRETS|- N   Cassandra's replicated system keyspaces (system_auth among them)
                                              to replication factor N (SECRETS "-": a ring without logins)

The passwords are read from SECRETS/<role>.password (mode 600), never taken on a command line.
"""

from __future__ import annotations

import secrets as random
import sys
from pathlib import Path

from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, Session

ROLES = ("hostagent", "frontend")


def password(folder: Path, role: str) -> str:
    return (folder / f"{role}.password").read_text().strip()


def session(addr: str, port: int, user: str, pw: str) -> tuple[Cluster, Session]:
    cluster = Cluster(
        [addr],
        port=port,
        auth_provider=PlainTextAuthProvider(user, pw),
        connect_timeout=5,
        control_connection_timeout=5,
    )
    try:
        return cluster, cluster.connect()
    except Exception:
        cluster.shutdown()
        raise


def admin_or_builtin(addr: str, port: int, folder: Path) -> tuple[Cluster, Session, bool]:
    """A session as admin, or as the built-in superuser while admin does not exist yet (the bool says which)."""
    try:
        return (*session(addr, port, "admin", password(folder, "admin")), True)
    except Exception:
        return (*session(addr, port, "cassandra", "cassandra"), False)


def ready(addr: str, port: int, folder: Path) -> int:
    cluster, s, _ = admin_or_builtin(addr, port, folder)
    try:
        row = s.execute("SELECT release_version FROM system.local", timeout=5).one()
        return 0 if row and row.release_version else 1
    finally:
        cluster.shutdown()


def roles(addr: str, port: int, folder: Path) -> int:
    cluster, s, as_admin = admin_or_builtin(addr, port, folder)
    try:
        if not as_admin:
            s.execute(
                "CREATE ROLE IF NOT EXISTS admin WITH SUPERUSER = true AND LOGIN = true AND PASSWORD = %s",
                (password(folder, "admin"),),
                timeout=30,
            )
    finally:
        cluster.shutdown()
    cluster, s = session(addr, port, "admin", password(folder, "admin"))
    try:
        for role in ROLES:
            s.execute(
                f"CREATE ROLE IF NOT EXISTS {role} WITH LOGIN = true AND PASSWORD = %s",
                (password(folder, role),),
                timeout=30,
            )
            if not can_log_in(addr, port, role, password(folder, role)):  # an older password (Cassandra throttles
                s.execute(
                    f"ALTER ROLE {role} WITH PASSWORD = %s AND LOGIN = true",  # changes: only when needed)
                    (password(folder, role),),
                    timeout=30,
                )
            s.execute(f"GRANT ALL PERMISSIONS ON ALL KEYSPACES TO {role}", timeout=30)
            # the data layer reads Cassandra's write size limits there (virtual tables are not in ALL KEYSPACES)
            s.execute(f"GRANT SELECT ON TABLE system_views.settings TO {role}", timeout=30)
        if can_log_in(addr, port, "cassandra", "cassandra"):
            s.execute(
                "ALTER ROLE cassandra WITH SUPERUSER = false AND LOGIN = false AND PASSWORD = %s",
                (random.token_hex(32),),
                timeout=30,
            )
        return 0
    finally:
        cluster.shutdown()


# Cassandra's own keyspaces that are replicated like a user's (the rest are local to each node). system_auth last:
# once it is at the new factor, a node reads the admin's role from replicas that have no copy of it until the repair
# that follows, and refused the next ALTER ("User admin has no ALTER permission on <keyspace system_distributed>",
# a cluster bring-up in this project's tests).
SYSTEM_REPLICATED = ("system_distributed", "system_traces", "system_auth")


def replicate(addr: str, port: int, folder: Path | None, factor: int) -> int:
    if folder is None:
        cluster = Cluster([addr], port=port, connect_timeout=5, control_connection_timeout=5)
        s = cluster.connect()
    else:
        cluster, s = session(addr, port, "admin", password(folder, "admin"))
    try:
        for ks in SYSTEM_REPLICATED:
            s.execute(
                f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {factor}}}",
                timeout=60,
            )
            print(f"{ks}: replication_factor {factor}")
        return 0
    finally:
        cluster.shutdown()


def can_log_in(addr: str, port: int, user: str, pw: str) -> bool:
    try:
        cluster, _ = session(addr, port, user, pw)
    except Exception:
        return False
    cluster.shutdown()
    return True


def main(argv: list[str]) -> int:
    if len(argv) == 5 and argv[0] == "replicate":
        return replicate(argv[1], int(argv[2]), None if argv[3] == "-" else Path(argv[3]), int(argv[4]))
    if len(argv) != 4 or argv[0] not in ("ready", "roles"):
        print(__doc__, file=sys.stderr)
        return 2
    what, addr, port, folder = argv[0], argv[1], int(argv[2]), Path(argv[3])
    return (ready if what == "ready" else roles)(addr, port, folder)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
