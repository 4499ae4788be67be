"""A throwaway PostgreSQL server on this machine, for tests, benchmarks and trying the engine out.

It runs the Debian ``postgresql`` package's binaries (``make test`` installs the package) in a
fresh temporary data directory, listening on a unix socket only (nothing on the network). PostgreSQL
refuses to run as root, so as root it runs as the ``postgres`` user the package creates (via
``runuser``); as any other user it runs as that user. ``python -m store.pg_local`` starts one and
prints its URL until interrupted.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from store.base import StoreError

_SERVER_USER = "postgres"


def find_pg_bin() -> Path:
    """The directory holding initdb and pg_ctl (newest installed major version first)."""
    found = shutil.which("pg_ctl")
    if found and Path(found).resolve().with_name("initdb").exists():
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                      key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if versions:
        return Path(versions[-1]).parent
    raise StoreError("PostgreSQL's server programs (initdb, pg_ctl) are not installed; "
                     "`apt-get install postgresql` (make test does this) or set ENGINE_TEST_POSTGRES_URL")


class LocalPostgres:
    """``with LocalPostgres() as pg: pg.url`` — started on enter, stopped and deleted on exit."""

    def __init__(self, *, port: int = 5432, fsync: bool = True) -> None:
        self.port = port
        self.fsync = fsync
        self.root: Path | None = None
        self._bin = find_pg_bin()
        self._as_other_user = os.geteuid() == 0

    @property
    def socket_dir(self) -> Path:
        assert self.root is not None, "the server is not started"
        return self.root / "socket"

    @property
    def socket_path(self) -> Path:
        """The server's unix socket (what a client or a proxy connects to)."""
        return self.socket_dir / f".s.PGSQL.{self.port}"

    @property
    def url(self) -> str:
        return f"postgresql://{_SERVER_USER}@/postgres?host={self.socket_dir}&port={self.port}"

    def _run(self, *args: str) -> None:
        cmd = [str(self._bin / args[0]), *args[1:]]
        if self._as_other_user:
            cmd = ["runuser", "-u", _SERVER_USER, "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.root / "server.log" if self.root else None
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise StoreError(f"{args[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n{tail}")

    def start(self) -> LocalPostgres:
        self.root = Path(tempfile.mkdtemp(prefix="engine-pg-"))
        self.socket_dir.mkdir()
        if self._as_other_user:
            try:
                user = pwd.getpwnam(_SERVER_USER)
            except KeyError:
                raise StoreError(f"running as root needs the {_SERVER_USER!r} user that the postgresql "
                                 "package creates; `apt-get install postgresql`") from None
            for path in (self.root, self.socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        data = self.root / "data"
        self._run("initdb", "-D", str(data), "-U", _SERVER_USER, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        self.start_server()
        return self

    def start_server(self) -> None:
        """Start the server on the existing data directory (after :meth:`stop_server`)."""
        assert self.root is not None, "the server is not set up"
        options = (f"-k {self.socket_dir} -p {self.port} -c listen_addresses='' -c max_connections=200 "
                   f"-c fsync={'on' if self.fsync else 'off'} -c shared_buffers=32MB")
        self._run("pg_ctl", "-D", str(self.root / "data"), "-o", options, "-l", str(self.root / "server.log"),
                  "-w", "-t", "60", "start")

    def stop_server(self, mode: str = "fast") -> None:
        """Stop the server and keep its data: ``fast`` is what a managed database's routine restart
        does (every session is terminated: "terminating connection due to administrator command")."""
        assert self.root is not None, "the server is not set up"
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", mode, "-w", "-t", "60", "stop")

    def stop(self) -> None:
        if self.root is None:
            return
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        except StoreError:
            pass  # already gone; the directory goes regardless
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    with LocalPostgres() as pg:
        print(pg.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
