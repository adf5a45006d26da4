"""A throw-away PostgreSQL server for the store tests: Debian's `postgresql`
binaries (initdb, pg_ctl) on a data directory in a temp dir, listening on a
Unix socket there only (no TCP port), trust authentication, fsync off. One
server per test session; each test gets a database of its own
(`server.database()`), dropped with the server at the end.

initdb and postgres refuse to run as root: as root the server runs as the
`postgres` user the Debian package creates (the temp dir is given to it).
Missing binaries skip the tests with the install hint (a failure where
OSMETER_REQUIRE_POSTGRESQL or OSMETER_TEST_REQUIRE_OPTIONAL is 1).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

INSTALL_HINT = "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql"
SUPERUSER = "osmeter"


def binaries() -> Path | None:
    """The directory holding initdb and pg_ctl, or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(Path(d) / "initdb", os.X_OK) and os.access(Path(d) / "pg_ctl", os.X_OK):
            return Path(d)
    return None


class Server:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="osmeter-pg."))
        self.data, self.sock = self.root / "data", self.root / "sock"
        self.sock.mkdir()
        self._as: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            for p in (self.root, self.sock):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            self._as = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups", "--"]
        self._names = itertools.count(1)
        self.started = False

    def _run(self, *argv: str, timeout: float = 120) -> None:
        # A clean environment: the server outlives the test that starts it, and
        # must not carry that test's markers (fake_probe kills what carries its own).
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
        r = subprocess.run([*self._as, *argv], capture_output=True, text=True, timeout=timeout, cwd=self.root, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")

    def start(self) -> None:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8",
                  "--locale=C", "--no-sync")
        opts = (f"-k {self.sock} -c listen_addresses='' -p 5432 -c fsync=off -c full_page_writes=off "
                "-c synchronous_commit=off -c max_connections=60")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")
        self.started = True

    def url(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.sock}&port=5432"

    def database(self) -> str:
        """A new, empty database; its URL."""
        import sqlalchemy as sa

        name = f"t{next(self._names)}"
        engine = sa.create_engine(self.url("postgres").replace("postgresql://", "postgresql+psycopg://"),
                                  isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(f"CREATE DATABASE {name}")
        finally:
            engine.dispose()
        return self.url(name)

    def stop(self) -> None:
        try:
            if self.started:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
