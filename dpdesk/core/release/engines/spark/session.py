"""Where Spark runs and what it reads: the session (local or Spark Connect) and the data source.

* ``local[N]`` runs Spark inside this process (the full ``pyspark`` package with its jars, and a Java runtime 17+).
* ``sc://HOST:PORT`` talks to a cluster's Spark Connect server (only the client package: ``pyspark-client``). The
  exact aggregates are as sensitive as the table: the address must ask for TLS (``;use_ssl=true``) and carry a
  token (``;token=...``) unless the host is this machine (loopback). The token is never shown: messages name the
  host and port only (:func:`shown_address`).

Every session is set up the same way before it reads anything: ANSI mode off (bigint arithmetic wraps modulo
2^64, which the hashes rely on; sums are decimals, checked), UTC, and :func:`~.hashing.canary` must pass.

A source is a path the cluster reads (Parquet: a file or a folder of files; CSV: ``.csv``, ``.tsv``, ``.txt``, read
with every column as text and the loaders' quoting) or a catalog table (``table:NAME``).
"""

from __future__ import annotations

import ipaddress
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from dpdesk.core.common.errors import DpdeskError
from dpdesk.i18n import _

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class SparkUnavailable(DpdeskError):
    """Spark could not be started or reached: one line naming the address and the fix; nothing was charged
    (exit 2, as for data that cannot be read)."""

    exit_code = 2


@dataclass(frozen=True)
class SparkTarget:
    """Where the aggregation runs: a ``master`` (``local[N]``) or a Spark Connect ``remote`` (``sc://...``)."""

    master: str | None = None
    remote: str | None = None

    def __post_init__(self) -> None:
        if (self.master is None) == (self.remote is None):
            raise SparkUnavailable(_("name one of --spark-master local[N] or --spark-remote sc://HOST:PORT"))
        if self.master is not None and not self.master.startswith("local"):
            raise SparkUnavailable(
                _(
                    "--spark-master takes local[N] (Spark inside dpdesk, for one machine); for a cluster, name its "
                    "Spark Connect server with --spark-remote sc://HOST:PORT"
                )
            )
        if self.remote is not None:
            check_remote(self.remote)

    @property
    def shown(self) -> str:
        """What messages name: the master, or the remote's host and port (never its token)."""
        return self.master if self.master is not None else shown_address(self.remote or "")


def shown_address(remote: str) -> str:
    """``sc://HOST:PORT`` of a Spark Connect address, without its parameters (a token among them)."""
    parts = urlsplit(remote.split(";", 1)[0])
    return f"sc://{parts.hostname or '?'}:{parts.port or 15002}"


def _params(remote: str) -> dict[str, str]:
    out = {}
    for part in remote.split(";")[1:]:
        key, _sep, value = part.partition("=")
        out[key.strip().lower()] = value.strip()
    return out


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_remote(remote: str) -> None:
    """A Spark Connect address that may carry the exact aggregates: TLS and a token, unless on this machine."""
    parts = urlsplit(remote.split(";", 1)[0])
    if parts.scheme != "sc" or not parts.hostname:
        raise SparkUnavailable(
            _(
                "{address} is not a Spark Connect address; write it as sc://HOST:PORT;use_ssl=true;token=TOKEN"
            ).format(address=shown_address(remote) if parts.hostname else repr(remote.split(";", 1)[0]))
        )
    params = _params(remote)
    if _loopback(parts.hostname):
        return
    if params.get("use_ssl", "").lower() != "true" or not params.get("token"):
        raise SparkUnavailable(
            _(
                "{address}: the exact aggregates Spark returns are as sensitive as the table, so a remote cluster "
                "is reached with TLS and a token only; add ;use_ssl=true;token=TOKEN to the address"
            ).format(address=shown_address(remote))
        )


def start(target: SparkTarget) -> SparkSession:
    """A session set up for dpdesk (see the module), or :class:`SparkUnavailable` naming the address and the fix."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        if getattr(sys, "frozen", False):  # an installed bundle: Spark was left out (about 490 MB)
            raise SparkUnavailable(
                _(
                    "this installed copy of dpdesk leaves Spark out (it would add about 490 MB); to aggregate "
                    "with Spark, install dpdesk with pip (pip install 'dpdesk[spark]') and run its dpdesk "
                    "command; nothing was charged"
                )
            ) from None
        raise SparkUnavailable(
            _(
                "the Spark engine needs the pyspark package: pip install 'dpdesk[spark]' (or pyspark-client for "
                "a remote cluster only), then run again; nothing was charged"
            )
        ) from None
    from pyspark.errors import PySparkException

    from dpdesk.core.release.engines.spark.hashing import canary

    builder: Any = SparkSession.builder.appName("dpdesk")
    try:
        if target.master is not None:
            builder = (
                builder.master(target.master)
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "8")
                .config("spark.driver.bindAddress", "127.0.0.1")  # in-process: loopback only
                .config("spark.driver.host", "127.0.0.1")
            )
        else:
            builder = builder.remote(target.remote)
        spark: SparkSession = builder.getOrCreate()
        spark.conf.set("spark.sql.ansi.enabled", "false")
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        canary(spark)
    except (PySparkException, ImportError, OSError, RuntimeError) as exc:
        raise SparkUnavailable(_unavailable(target, exc)) from None
    return spark


def _unavailable(target: SparkTarget, exc: BaseException) -> str:
    text = str(exc)
    if isinstance(
        exc, ImportError
    ):  # Spark Connect's client needs grpcio, pandas and pyarrow besides pyspark
        return _(
            "talking to a Spark Connect server ({address}) needs the Spark Connect client's packages: pip "
            "install 'pyspark[connect]' (or pyspark-client), then run again; nothing was charged"
        ).format(address=target.shown)
    if "JAVA_GATEWAY_EXITED" in text or "JAVA_HOME" in text or ("java" in text.lower() and target.master):
        return _(
            "Spark could not start here ({master}): it needs a Java runtime 17 or newer (on Debian or Ubuntu: "
            "apt-get install openjdk-17-jre-headless); nothing was charged"
        ).format(master=target.shown)
    if target.remote is not None:
        return _(
            "the Spark Connect server at {address} could not be reached or refused the session; check the "
            "address, that its server runs and that the token is valid; nothing was charged"
        ).format(address=target.shown)
    return _("Spark could not start here ({master}): {reason}; nothing was charged").format(
        master=target.shown, reason=text.splitlines()[0][:200] if text else type(exc).__name__
    )


@dataclass(frozen=True)
class SparkSource:
    """What Spark reads: ``kind`` is "parquet", "csv" or "table"; ``location`` its path or name."""

    kind: str
    location: str

    @staticmethod
    def parse(text: str) -> SparkSource:
        if text.startswith("table:"):
            return SparkSource("table", text[len("table:") :])
        low = text.lower().rstrip("/")
        if low.endswith((".csv", ".tsv", ".txt")):
            return SparkSource("csv", text)
        return SparkSource("parquet", text)

    @property
    def label(self) -> str:
        """The data's name in messages and records."""
        return f"table:{self.location}" if self.kind == "table" else self.location


def read(spark: SparkSession, source: SparkSource, encoding: str | None, delimiter: str | None) -> DataFrame:
    """The source as Spark reads it (CSV: every column as text, quoted as the loaders quote)."""
    if source.kind == "table":
        return spark.read.table(source.location)
    if source.kind == "csv":
        sep = delimiter or ("\t" if source.location.lower().endswith(".tsv") else ",")
        return spark.read.csv(
            source.location,
            header=True,
            inferSchema=False,
            multiLine=True,
            quote='"',
            escape='"',
            sep=sep,
            encoding=encoding or "UTF-8",
            mode="PERMISSIVE",
        )
    return spark.read.parquet(source.location)
