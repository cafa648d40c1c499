"""Where Spark runs and what it reads: the session (local or Spark Connect) and the data source.

* ``local[N]`` runs Spark inside this process (the full ``pyspark`` package with its jars, and a Java runtime 17+).
* ``sc://HOST:PORT`` talks to a cluster's Spark Connect server (only the client package: ``pyspark-client``). The
  exact aggregates are as sensitive as the table: the address must ask for TLS (``;use_ssl=true``) and carry a
  token (``;token=...``) unless the host is this machine (loopback). The token is never shown: messages name the
  host and port only (:func:`shown_address`).

A process keeps its local session between releases (the app's); one asked with another ``local[N]`` than the
session runs is started afresh as asked. Every session is set up the same way before it reads anything: ANSI mode
off (bigint arithmetic wraps modulo 2^64, which the hashes rely on; sums are decimals, checked), UTC, and
:func:`~.hashing.canary` must pass.

A Spark Connect server that cannot be reached is said in seconds, not after the client's ten minutes of retries:
the handshake (the settings and the canary) runs with a short retry policy (:data:`HANDSHAKE_RETRIES`, about 4 s
of waits), each try to connect bounded (:data:`CONNECT_TIMEOUT_MS`); once the server answered, the client's own
policy rides out a passing fault during the aggregation. pyspark takes the parameters after a ``/``
(``sc://HOST:PORT/;token=...``): :func:`connect_url` writes the address so whether or not the user wrote one.

A source is a path the cluster reads (Parquet: a file or a folder of files; CSV: ``.csv``, ``.tsv``, ``.txt``, read
with every column as text and the loaders' quoting) or a catalog table (``table:NAME``).
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit

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


#: The handshake's retry policy (pyspark's ``DefaultPolicy`` arguments): 3 retries after 0.5, 1 and 2 s.
HANDSHAKE_RETRIES: dict[str, Any] = {
    "max_retries": 3,
    "initial_backoff": 500,
    "backoff_multiplier": 2.0,
    "max_backoff": 2000,
}
#: How long one try to connect may take (gRPC's minimum connect timeout, 20 s by default).
CONNECT_TIMEOUT_MS = 4000


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:  # not a number, or out of range
        return None


def shown_address(remote: str) -> str:
    """``sc://HOST:PORT`` of a Spark Connect address, without its parameters (a token among them)."""
    parts = urlsplit(remote.split(";", 1)[0])
    return f"sc://{parts.hostname or '?'}:{_port(parts) or 15002}"


def connect_url(remote: str) -> str:
    """The address as pyspark reads it: ``sc://HOST:PORT/`` and the parameters after the ``/``."""
    head, sep, params = remote.partition(";")
    return head.rstrip("/") + "/" + sep + params


def _params(remote: str) -> dict[str, str]:
    out = {}
    for part in remote.split(";")[1:]:
        key, _sep, value = part.partition("=")
        out[key.strip().lower()] = value.strip()
    return out


def without_token(remote: str) -> str:
    """The address with its ``token=`` parameter left out (what may be kept on disk), the others kept."""
    head, *params = remote.split(";")
    return ";".join([head, *(p for p in params if p.partition("=")[0].strip().lower() != "token")])


def has_token(remote: str) -> bool:
    """Whether the address carries a ``token=`` parameter."""
    return bool(_params(remote).get("token"))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: Characters Spark (Hadoop's glob) reads as wildcards in a path.
GLOB = "*?[]{}"


def on_this_machine(target: SparkTarget) -> bool:
    """Whether Spark reads this machine's files: ``local[N]``, or a Spark Connect server on loopback."""
    if target.remote is None:
        return True
    host = urlsplit(target.remote.split(";", 1)[0]).hostname
    return host is not None and _loopback(host)


def check_remote(remote: str) -> None:
    """A Spark Connect address that may carry the exact aggregates: TLS and a token, unless on this machine."""
    parts = urlsplit(remote.split(";", 1)[0])
    bad_port = parts.netloc.rpartition("]")[2].count(":") == 1 and _port(parts) is None
    if parts.scheme != "sc" or not parts.hostname or parts.path.strip("/") or bad_port:
        head = remote.split(";", 1)[0]
        if "@" in parts.netloc:  # user:password@host: the password is not shown
            head = head.replace(parts.netloc, parts.netloc.rpartition("@")[2], 1)
        raise SparkUnavailable(
            _(
                "{address} is not a Spark Connect address; write it as sc://HOST:PORT;use_ssl=true;token=TOKEN"
            ).format(address=repr(head))
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


def pyspark_missing() -> str:
    """What to install to aggregate with Spark: said when a release asks for Spark without it, and by the app's
    choice of engine (which looks for pyspark without importing it)."""
    if getattr(sys, "frozen", False):  # an installed bundle: Spark was left out (about 490 MB)
        return _(
            "this installed copy of dpdesk leaves Spark out (it would add about 490 MB); to aggregate "
            "with Spark, install dpdesk with pip (pip install 'dpdesk[spark]') and run its dpdesk "
            "command; nothing was charged"
        )
    return _(
        "the Spark engine needs the pyspark package: pip install 'dpdesk[spark]' (or pyspark-client for "
        "a remote cluster only), then run again; nothing was charged"
    )


def pyspark_installed() -> bool:
    """Whether pyspark (or Spark Connect's client, pyspark-client) can be imported, without importing it (heavy)."""
    import importlib.util

    return importlib.util.find_spec("pyspark") is not None


def start(target: SparkTarget) -> SparkSession:
    """A session set up for dpdesk (see the module), or :class:`SparkUnavailable` naming the address and the fix."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable(pyspark_missing()) from None
    from pyspark.errors import PySparkException

    try:
        if target.master is not None:
            builder = (
                SparkSession.builder.appName("dpdesk")
                .master(target.master)
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "8")
                .config("spark.driver.bindAddress", "127.0.0.1")  # in-process: loopback only
                .config("spark.driver.host", "127.0.0.1")
            )
            spark: SparkSession = builder.getOrCreate()
            if spark.sparkContext.master != target.master:
                # the process's session runs another master (the app's choice changed since its last release):
                # getOrCreate would keep it, so it is stopped and Spark started as asked
                spark.stop()
                spark = builder.getOrCreate()
            _set_up(spark)
        else:
            spark = _connect(target.remote or "")
    except (PySparkException, ImportError, OSError, RuntimeError, ValueError) as exc:
        raise SparkUnavailable(_unavailable(target, exc)) from None
    return spark


def _set_up(spark: Any) -> None:
    from dpdesk.core.release.engines.spark.hashing import canary

    spark.conf.set("spark.sql.ansi.enabled", "false")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.conf.set("spark.sql.caseSensitive", "true")  # g and G are two columns, as for the loaders
    canary(spark)


def _connect(remote: str) -> Any:
    """A Spark Connect session, its handshake bounded in time (see the module); the process's pyspark is put in
    Spark Connect mode (as pyspark's own builder does), and back when the server cannot be reached."""
    was = os.environ.get("SPARK_CONNECT_MODE_ENABLED")
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"  # pyspark.sql.functions build Spark Connect columns
    try:
        with warnings.catch_warnings():
            # pyspark's import warns of pandas 3; its retries warn when exhausted: the refusal says it all
            warnings.simplefilter("ignore")
            from pyspark.sql.connect.client import DefaultChannelBuilder
            from pyspark.sql.connect.client.retries import DefaultPolicy
            from pyspark.sql.connect.session import SparkSession as ConnectSession

            channel = DefaultChannelBuilder(
                connect_url(remote), [("grpc.min_reconnect_backoff_ms", CONNECT_TIMEOUT_MS)]
            )
            spark = ConnectSession.builder.channelBuilder(channel).create()
            client = spark.client
            usual = client.get_retry_policies()
            client.set_retry_policies([DefaultPolicy(**HANDSHAKE_RETRIES)])
            try:
                _set_up(spark)
            except BaseException:
                spark.release_session_on_close = False  # no more calls to a server that did not answer
                spark.stop()
                raise
            client.set_retry_policies(usual)
    except BaseException:
        if was is None:
            os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)
        raise
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


def hidden_password(location: str) -> str | None:
    """``location`` with its password shown as ``***`` when it is a URI that carries one in its user part
    (``scheme://user:password@host/...``); None when it carries none (a user name alone, as in ``abfss://container@
    account...``, is no secret; nor is a port, ``hdfs://nn:8020/...``, or an IPv6 host, ``hdfs://[::1]:8020/...``).

    The user part is the authority's text before its last ``@``: a user name may hold a raw ``@`` (an e-mail
    address), so a ``:`` after it still starts a password. A password written raw, without percent-encoding, may
    hold ``/`` (AWS secret keys often do) or ``@``: the authority then seems to end inside it, in a host that is no
    host (a ``:`` followed by anything but a port's digits). Either way the password is taken to run up to the
    address's last ``@``, hidden whole (what follows it is shown)."""
    if "://" not in location:
        return None
    scheme, rest = location.split("://", 1)
    if "@" not in rest:
        return None
    head = rest.split("/", 1)[0]
    user_part, _at, host = head.rpartition("@")
    if ":" not in user_part and _HOST.fullmatch(host) is not None:
        return None  # no password: a user name alone, or an "@" further in the path
    user = head.split(":", 1)[0]
    return f"{scheme}://{user}:***@{rest.rsplit('@', 1)[1]}"


#: An authority's host and port (``nn``, ``nn:8020``, ``[::1]:8020``, none for ``file:///``): a ``:`` elsewhere in
#: it is a password's, whose raw ``/`` ended the authority early.
_HOST = re.compile(r"(\[[^\]/@]*\]|[^:\[\]/@]*)(:[0-9]+)?")


def refuse_password(source: SparkSource) -> None:
    """Refuse a source whose address carries a password, before anything is read or charged: dpdesk names a
    source in the ledger, the report, the package and the recent tables, so the password would be kept there. The
    message shows the address with the password hidden."""
    shown = hidden_password(source.location) if source.kind != "table" else None
    if shown is not None:
        from dpdesk.core.common.errors import InputError

        raise InputError(
            shown,
            _(
                "the address holds a password, which dpdesk would keep in the ledger, the report and the recent "
                "tables; give the cluster's credentials to Spark in its own configuration (for example "
                "spark.hadoop.fs.s3a.secret.key in spark-defaults.conf) and write the address without them. "
                "Nothing was charged"
            ),
        )


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
            # every file's header checked against the first's: a folder whose files order their columns differently
            # is refused, never read by position (a second file's g values counted as x)
            enforceSchema=False,
        )
    return spark.read.parquet(source.location)
