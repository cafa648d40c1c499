"""A real Spark Connect server for the Spark Connect tests: started from the pyspark package's own jars, on
127.0.0.1 and a free port only, and stopped at the end (its whole process group: no JVM is left behind).

pyspark's wheel bundles Spark, the Spark Connect server's jar among its jars, and ``bin/spark-submit``: the package's
folder is the ``SPARK_HOME``. ``spark-submit`` runs ``SparkConnectServer`` in the foreground (its launcher execs the
JVM), in a new process group, its log in a temporary folder; :meth:`ConnectServer.start` waits until the port takes
connections (or the process ends, and the log's end is raised).

``python -m tests.spark.connect_server states PLAN DATA ADDRESS`` (:func:`states_main`) is the Spark Connect
client's side: pyspark cannot hold a local session and a Spark Connect session in one process, so the tests ask a
child process for the states, which prints them as JSON.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.pgserver import free_port

CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
#: How long the server may take to take connections (it starts in about 15 s on two busy cores).
START_TIMEOUT = 180.0


def spark_home() -> Path:
    """The pyspark package's folder: Spark's jars and scripts."""
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


class ConnectServer:
    """One Spark Connect server, ``local[2]`` on 127.0.0.1."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="dpdesk-sconn-"))
        self.port = free_port()
        self.log = self.root / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def start(self) -> ConnectServer:
        home = spark_home()
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "4",
            "spark.local.dir": str(self.root / "local"),
        }
        cmd = [str(home / "bin" / "spark-submit"), "--class", CLASS, "--master", "local[2]"]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
        env.pop("SPARK_REMOTE", None)
        env.pop("SPARK_CONNECT_MODE_ENABLED", None)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"the Spark Connect server ended at start:\n{self.tail()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(
            f"the Spark Connect server did not listen within {START_TIMEOUT:.0f} s:\n{self.tail()}"
        )

    def tail(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-30:])

    def stop(self) -> None:
        """Stop the server's process group (SIGTERM, then SIGKILL after 30 s) and remove its folder."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


def remote_states(plan_path: Path, data: Path, address: str) -> dict[str, object]:
    """The Spark engine's states and data check for the plan over the data, computed through the Spark Connect
    server at ``address`` by a child process (see the module)."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    got = subprocess.run(
        [sys.executable, "-m", "tests.spark.connect_server", "states", str(plan_path), str(data), address],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
        cwd=root,
    )
    assert got.returncode == 0, got.stderr[-3000:]
    out: dict[str, object] = json.loads(got.stdout)
    return out


def states_main(plan_path: str, data: str, address: str) -> None:
    from dpdesk.core.common.progress import NULL_PROGRESS
    from dpdesk.core.dp.queries import design_plan
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.release.engines.spark.engine import SparkEngine
    from dpdesk.core.release.engines.spark.session import SparkTarget

    plan = parse_plan(json.loads(Path(plan_path).read_text(encoding="utf-8")))
    engine = SparkEngine(data, plan, design_plan(plan), SparkTarget(remote=address))
    check = engine.check()
    states = engine.aggregate(None, NULL_PROGRESS).states
    counts = [[c.name, c.missing, c.undeclared, c.unparsable, c.clamped] for c in check.columns]
    print(json.dumps({"rows": check.rows, "columns": counts, "states": states, "sha256": engine.sha256}))
    engine.spark.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["states"] and len(sys.argv) == 5:
        states_main(*sys.argv[2:5])
    else:
        raise SystemExit("usage: python -m tests.spark.connect_server states PLAN DATA ADDRESS")
