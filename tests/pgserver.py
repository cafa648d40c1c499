"""A real PostgreSQL server for the team ledger's tests: started in a temporary folder, stopped after.

Debian's ``postgresql`` package (``.ci/run`` installs it) keeps ``initdb`` and ``pg_ctl`` in its versioned folder.
PostgreSQL refuses to run as root, and CI runs as root: the server then runs as the ``postgres`` system user (the
package makes it), in a folder that user owns. It listens on a Unix socket in that folder only, unless a test asks
for TCP on 127.0.0.1 (the TLS tests), and trusts local connections as any role: each test connects as the role it
checks (a curator, an officer, the auditor, the administrator). ``hba`` replaces the rules for other connections
(``host all all 127.0.0.1/32 scram-sha-256``: passwords over TCP); the socket stays trusted.
``DPDESK_TEST_PG_BIN`` names another server's folder of programs (an older PostgreSQL, to test the oldest version
supported).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ADMIN = "admin"


def bin_dir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are (the newest installed), or None."""
    given = os.environ.get("DPDESK_TEST_PG_BIN")
    if given:
        return Path(given)
    for tool in ("pg_config",):
        path = shutil.which(tool)
        if path:
            with contextlib.suppress(OSError, subprocess.CalledProcessError):
                out = subprocess.run(
                    [path, "--bindir"], capture_output=True, text=True, check=True
                ).stdout.strip()
                if (Path(out) / "initdb").exists():
                    return Path(out)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One throwaway PostgreSQL cluster."""

    def __init__(
        self, *, tcp: bool = False, ssl: dict[str, str] | None = None, hba: list[str] | None = None
    ) -> None:
        found = bin_dir()
        if found is None:
            pytest.skip("PostgreSQL's server programs are not installed (apt-get install postgresql)")
        self.bin = found
        self.root = Path(tempfile.mkdtemp(prefix="dpdesk-pg-"))
        self.root.chmod(0o755)
        self.data = self.root / "data"
        self.port = free_port()
        self.tcp = tcp
        self.ssl = ssl or {}
        self.hba = hba
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.root, "postgres")

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    def start(self) -> PgServer:
        got = self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            ADMIN,
            "-E",
            "UTF8",
            "--locale=C",
        )
        if got.returncode:
            raise RuntimeError(f"initdb failed: {got.stderr}")
        if self.hba is not None:  # the Unix socket stays trusted: the tests set things up through it
            rules = "\n".join(["local all all trust", *self.hba]) + "\n"
            self.install("data/pg_hba.conf", rules.encode("utf-8"))
        listen = "127.0.0.1" if self.tcp else "''"
        opts = f"-p {self.port} -k {self.root} -c listen_addresses={listen} -c fsync=on"
        for key, value in self.ssl.items():
            opts += f" -c {key}={value}"
        got = self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-w",
            "-t",
            "60",
            "-l",
            str(self.root / "log"),
            "-o",
            opts,
            "start",
        )
        if got.returncode:
            log = (self.root / "log").read_text(errors="replace") if (self.root / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {got.stderr}\n{log}")
        return self

    def install(self, name: str, data: bytes, mode: int = 0o600) -> Path:
        """Write a file the server reads (a TLS key, say: PostgreSQL wants it owned by its user, mode 0600) in the
        server's folder; its path."""
        path = self.root / name
        path.write_bytes(data)
        path.chmod(mode)
        if self.as_root:
            shutil.chown(path, "postgres", "postgres")
        return path

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start_again()

    def start_again(self) -> None:
        listen = "127.0.0.1" if self.tcp else "''"
        opts = f"-p {self.port} -k {self.root} -c listen_addresses={listen}"
        for key, value in self.ssl.items():
            opts += f" -c {key}={value}"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-w",
            "-l",
            str(self.root / "log"),
            "-o",
            opts,
            "start",
        )

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, user: str = ADMIN, database: str = "postgres") -> str:
        """A libpq URL for ``user`` over the Unix socket."""
        return f"postgresql://{user}@/{database}?host={self.root}&port={self.port}"

    def sql(self, statement: str, user: str = ADMIN, database: str = "postgres") -> list[tuple[object, ...]]:
        """Run SQL as ``user`` (autocommit) and return its rows."""
        import psycopg

        with psycopg.connect(self.url(user, database), autocommit=True) as conn:
            cur = conn.execute(statement)  # type: ignore[arg-type]
            return list(cur.fetchall()) if cur.description else []

    def new_database(self, name: str) -> str:
        self.sql(f'CREATE DATABASE "{name}"')
        return name


@contextlib.contextmanager
def running(**kwargs: object) -> Iterator[PgServer]:
    server = PgServer(**kwargs).start()  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.remove()
