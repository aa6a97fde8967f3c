"""A throwaway PostgreSQL cluster for tests: Debian's server binaries, a temp folder, a Unix socket, trust auth.

Used by the workspace tests (and meant for the annotation app's); skips with a reason when the binaries are absent.
PostgreSQL refuses to run as root, so under root the cluster runs as the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def find_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/*/bin`` with initdb and pg_ctl (or the ones on PATH)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True)
    for d in candidates:
        if (Path(d) / "initdb").is_file() and (Path(d) / "pg_ctl").is_file():
            return Path(d)
    found = shutil.which("pg_ctl")
    return Path(found).parent if found and shutil.which("initdb") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresCluster:
    """initdb + pg_ctl start in ``root``; :meth:`create_database` returns a SQLAlchemy URL."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir, self.root = bindir, root
        self.data, self.sockdir = root / "data", root / "sock"
        self.port = _free_port()
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                pytest.skip("running as root and there is no 'postgres' user to run the server as")
            self.user = "postgres"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(a) for a in args]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)

    def start(self) -> None:
        self.sockdir.mkdir(parents=True)
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for p in (self.root, self.sockdir):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        self._run(self.bindir / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-locale")
        self._run(self.bindir / "pg_ctl", "-D", self.data, "-l", self.root / "server.log", "-w", "-t", "60", "-o",
                  f"-k {self.sockdir} -p {self.port} -c listen_addresses='' -c fsync=off", "start")

    def stop(self) -> None:
        try:
            self._run(self.bindir / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
        except subprocess.CalledProcessError:
            pass

    def create_database(self, name: str) -> str:
        self._run(self.bindir / "createdb", "-h", self.sockdir, "-p", str(self.port), "-U", "postgres", name)
        return f"postgresql+psycopg://postgres@/{name}?host={self.sockdir}&port={self.port}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """A running throwaway cluster for the whole session (stopped and removed after)."""
    pytest.importorskip("psycopg", reason="psycopg (the [web] extra) is needed for the PostgreSQL tests")
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not found (Debian: apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="zuhyo-pg-"))  # not under pytest's root-only tmp: the server must reach it
    cluster = PostgresCluster(bindir, root)
    try:
        cluster.start()
    except subprocess.CalledProcessError as e:
        shutil.rmtree(root, ignore_errors=True)
        log = root / "server.log"
        raise RuntimeError(f"could not start PostgreSQL: {e.stderr or e.stdout}"
                           f"{log.read_text() if log.exists() else ''}") from None
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
