"""The Spark engine (:class:`SparkEngine`): a table read and aggregated by Spark, for one release.

It implements :class:`~dpdesk.core.release.engines.base.AggregationEngine`: the data check's counts, every query's
state (a few passes, :mod:`.states`), rows bounded per person (:mod:`.bounding`) and the dataset's key. Its
:attr:`table` is a :class:`~dpdesk.core.loading.Table` without values (as a streamed table's): the row count,
the declarations and the key, what the rest of the release reads.

**The dataset's key.** A source the desktop can also read as a file (a Parquet or CSV file on a local or mounted
path, with Spark on this machine) is named by the SHA-256 of its bytes, read here, so it is the dataset the other
engines name and its ledger is the same: a table's budget is not had again by changing engines.

A source only the cluster reads (a catalog table ``table:NAME``, a folder of files, a path on another filesystem
such as ``hdfs://`` or ``s3a://``, or any path with a cluster not on this machine) is named by its **content**:
Spark reads it once into a local checkpoint (a snapshot kept by the executors, :meth:`SparkEngine._snapshot`), and
from that one snapshot computes the scheme-2 content identity
(:func:`~dpdesk.core.release.engines.spark.identity.spark_identity`, keyed by keys derived from the home's secret,
or, for a home that uses a team ledger, the team's identity secret: the same rows are the same key on every
curator's machine)
and then every aggregate, so the statistics are of the rows the identity names even if the table changes
meanwhile. Its key is :func:`cluster_key` of the content key; the release's resolution then finds the dataset as
for a file: the same rows as a known dataset (a file released before, or the table unchanged) are that dataset and
its ledger, and a table that only resembles one (rows added or edited since) is refused as a near-copy until an
officer links it or declares it new.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.dp import statistics
from dpdesk.core.loading.table import Column, ColumnIssues, LoadReport, Table, file_sha256
from dpdesk.core.release.datacheck import ColumnCheck, DataCheck
from dpdesk.core.release.engines.base import Aggregates
from dpdesk.core.release.engines.spark import columns, states
from dpdesk.core.release.engines.spark.session import (
    SparkSource,
    SparkTarget,
    SparkUnavailable,
    read,
    refuse_password,
    start,
)
from dpdesk.i18n import _

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from pyspark.sql import DataFrame, SparkSession

    from dpdesk.core.dp.bounding import BoundKey
    from dpdesk.core.dp.queries_base import QueryDesign
    from dpdesk.core.loading.identity import ContentIdentity
    from dpdesk.core.model.spec import Plan


class SparkEngine:
    """A table aggregated by Spark (see the module)."""

    name = "spark"

    def __init__(
        self,
        source: str,
        plan: Plan,
        designs: Sequence[QueryDesign],
        target: SparkTarget,
        *,
        encoding: str | None = None,
        delimiter: str | None = None,
        id_key: bytes | None = None,
        identity_secret: bytes | None = None,
        progress: Progress = NULL_PROGRESS,
        spark: SparkSession | None = None,
    ) -> None:
        self.plan = plan
        self.designs = tuple(designs)
        self.source = SparkSource.parse(source)
        refuse_password(self.source)  # before anything is read, named or charged
        self.id_key = id_key
        for d in self.designs:
            if d.spec.statistic not in states.STATISTICS:
                raise SparkUnavailable(
                    _(
                        "query {name}: the Spark engine does not compute a {statistic} (it needs the whole table "
                        "on one machine); run this plan without --engine spark, or leave this query out"
                    ).format(name=repr(d.spec.name), statistic=d.spec.statistic)
                )
        self._local: Path | None = None
        self._encoding, self._delimiter = encoding, delimiter
        self._read_as = self.source
        #: the content identity of a source only the cluster reads (None for a file named by its bytes)
        self.identity: ContentIdentity | None = None
        self.identity_secret: bytes | None = None
        file_key = self._file_key(target, progress)
        if file_key is None and identity_secret is None:
            raise SparkUnavailable(
                _(
                    "{source}: a table only the cluster reads is named by its content, which dpdesk keys with this "
                    "home's identity secret or its team's, and neither could be read (the home's identity store, or "
                    "the team ledger, is unreadable or unreachable). Release again once it is, or release a file "
                    "this computer reads too. Nothing was charged"
                ).format(source=self.source.label)
            )
        progress.update(0, 1, "starting Spark")
        self.spark = spark if spark is not None else start(target)
        self.target = target
        try:  # a Spark Connect frame is read lazily: its header is the first question to the server
            frame = read(self.spark, self._read_as, self._charset(), self._delimiter)
            header = list(frame.columns)
        except Exception as exc:  # noqa: BLE001 - Spark raises many kinds for a path or table it cannot read
            raise InputError(
                self.source.label, _("Spark cannot read it ({reason})").format(reason=_reason(exc))
            ) from None
        names = self._match(header)
        if file_key is None:
            assert identity_secret is not None
            frame = self._snapshot(frame, progress)
            if self.source.kind == "csv":
                self._check_decoded(frame)
            self.identity = self._identify(frame, identity_secret, progress)
            self.identity_secret = identity_secret
            file_key = self.identity.sha256
        self._sha = file_key
        self.loaded, self._counts = columns.loaded_frame(frame, plan, names)
        self._check: DataCheck | None = None
        self._states: list[list[list[int]]] | None = None

    def _file_key(self, target: SparkTarget, progress: Progress) -> str | None:
        """The SHA-256 of the file Spark will read, which names the dataset: the path is made absolute and read by
        Spark as exactly that file (``file:`` and no wildcards: Spark would expand ``[t].csv`` or ``*.csv`` to
        other files than the one hashed here), on this machine or a cluster on it (loopback: the same files).
        None for a source only the cluster reads (named by its content, see the module)."""
        from dpdesk.core.release.engines.spark.session import GLOB, on_this_machine

        path = Path(self.source.location)
        if self.source.kind != "table" and any(c in self.source.location for c in GLOB):
            raise SparkUnavailable(
                _(
                    "{source}: Spark reads * ? [ ] and curly brackets in a path as wildcards, so it might read other "
                    "files than the one dpdesk names the dataset by; rename the file without them. Nothing was charged"
                ).format(source=self.source.label)
            )
        if self.source.kind != "table" and path.is_file() and on_this_machine(target):
            resolved = path.resolve()
            self._read_as = SparkSource(self.source.kind, "file:" + str(resolved))
            self._local = resolved
            if self.source.kind == "csv":
                return self._utf8_key(resolved, progress)
            return file_sha256(resolved, progress)
        if (
            self.source.kind != "table"
            and "://" not in self.source.location
            and on_this_machine(target)
            and not path.exists()
        ):
            raise InputError(self.source.label, _("no such file"))  # a typo, as the other engines say it
        if self.source.kind != "table" and path.is_dir() and on_this_machine(target):
            self._read_as = SparkSource(self.source.kind, "file:" + str(path.resolve()))
        return None

    def _utf8_key(self, path: Path, progress: Progress) -> str:
        """A CSV file's SHA-256, and in the same read the check that it is UTF-8 (Spark reads it so: the loaders
        would read another encoding's text as other categories than Spark's); its delimiter as the loaders sniff
        it, unless given."""
        import codecs
        import hashlib

        from dpdesk.core.loading.header import read_header
        from dpdesk.core.loading.table import HASH_BLOCK_BYTES

        if self._encoding is not None and codecs.lookup(self._encoding).name not in ("utf-8", "utf-8-sig"):
            raise SparkUnavailable(_not_utf8(self.source.label, self._encoding))
        h = hashlib.sha256()
        decoder = codecs.getincrementaldecoder("utf-8")()
        total, done = path.stat().st_size, 0
        try:
            with path.open("rb") as f:
                while block := f.read(HASH_BLOCK_BYTES):
                    h.update(block)
                    decoder.decode(block)
                    done += len(block)
                    progress.update(done, total, "hashing")
                decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            header = read_header(path)
            raise SparkUnavailable(_not_utf8(self.source.label, header.encoding or "?")) from None
        except OSError as exc:
            raise InputError(str(path), f"cannot read the file: {exc.strerror or exc}") from None
        if self._delimiter is None:
            self._delimiter = read_header(path).delimiter or None
        return h.hexdigest()

    def _snapshot(self, frame: DataFrame, progress: Progress) -> DataFrame:
        """The source read once and kept by the executors (a local checkpoint, memory and disk): the identity and
        every aggregate are computed from these rows, never from the source again, so a table written to in
        between cannot have its statistics charged to another content's ledger. A snapshot an executor lost is an
        error of the job (Spark does not read the source again for it), never other rows."""
        from pyspark import StorageLevel

        progress.update(0, 1, "reading the table into Spark")
        with self._failing():
            return frame.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)

    def _charset(self) -> str | None:
        """The --encoding as Spark names it (:func:`spark_charset`)."""
        return spark_charset(self.source.label, self._encoding)

    def _check_decoded(self, frame: DataFrame) -> None:
        """A CSV Spark decoded with replacement characters (U+FFFD: bytes not in the encoding it was told, UTF-8
        unless --encoding says otherwise) is refused: its text would be other values than the file holds, under
        another content identity than the same file read here (a fresh budget for a known table)."""
        from pyspark.sql import functions as F

        cells = [F.coalesce(F.instr(F.col(columns.quoted(c)), "\ufffd"), F.lit(0)) for c in frame.columns]
        if not cells:
            return
        with self._failing():
            found = frame.filter(F.greatest(*cells, F.lit(0)) > 0).limit(1).count()
        if found:
            raise SparkUnavailable(
                _(
                    "{source}: Spark found bytes it could not decode as {encoding}; give the files' encoding with "
                    "--encoding, or save them as UTF-8. Nothing was charged"
                ).format(source=self.source.label, encoding=self._encoding or "UTF-8")
            )

    def _identify(self, frame: DataFrame, secret: bytes, progress: Progress) -> ContentIdentity:
        """The snapshot's scheme-2 content identity, named by :func:`cluster_key`."""
        from dataclasses import replace

        from dpdesk.core.release.engines.spark.identity import NotIdentifiable, spark_identity

        progress.update(0, 1, "identifying the table")
        try:
            with self._failing():
                ident = spark_identity(frame, secret, csv=self.source.kind == "csv")
        except NotIdentifiable as exc:
            raise SparkUnavailable(
                _(
                    "{source}: {reason}, so the table's content cannot name its dataset; release a view of the "
                    "table with that column left out, renamed or cast to text. Nothing was charged"
                ).format(source=self.source.label, reason=str(exc))
            ) from None
        return replace(ident, sha256=cluster_key(ident.key))

    def _match(self, header: list[str]) -> dict[str, str]:
        """Each declared column's (and the id column's) name in the source: header names trimmed, as the loaders
        match them; a missing or repeated name is refused with the header."""
        wanted = list(self.plan.columns) + (
            [self.plan.privacy_unit.id_column] if self.plan.privacy_unit.id_column else []
        )
        out: dict[str, str] = {}
        missing = []
        for name in wanted:
            found = [h for h in header if h.strip() == name]
            if not found:
                missing.append(name)
            elif len(found) > 1:
                raise InputError(
                    self.source.label, f"the header names column {name!r} {len(found)} times", line=1
                )
            else:
                out[name] = found[0]
        if missing:
            shown = ", ".join(repr(h) for h in header[:30]) + (" …" if len(header) > 30 else "")
            raise InputError(
                self.source.label,
                _("declared column(s) {missing} not found in the header; the file has: {header}").format(
                    missing=", ".join(repr(m) for m in missing), header=shown
                ),
                line=1,
            )
        return out

    @property
    def sha256(self) -> str:
        """The dataset's key: the SHA-256 of the file's bytes (see the module)."""
        return self._sha

    def check(self) -> DataCheck:
        """The data check's counts, from one aggregation (no record numbers: no first problem named)."""
        if self._check is None:
            if self.plan.privacy_unit.id_column is None:  # every row counts: the states in the same pass
                self._states, counted = self._aggregate(self.loaded, self._counts)
            else:  # the states are of the rows kept per person: a pass of their own
                _none, counted = self._aggregate(self.loaded, self._counts, designs=())
            totals = dict(zip([*self._counts, "rows"], counted, strict=True))
            cols, bounds = [], {}
            for i, (name, spec) in enumerate(self.plan.columns.items()):
                missing, undeclared, unparsable, clamped = columns.column_issue(spec, i, totals)
                cols.append(ColumnCheck(name, spec.type, missing, undeclared, unparsable, clamped))
                if spec.bounds is not None and spec.type != "category":
                    bounds[name] = spec.bounds
            self._check = DataCheck(totals["rows"], tuple(cols), bounds)
        return self._check

    @property
    def table(self) -> Table:
        """The table as the release reads it: its declarations, row count and key, no values."""
        check = self.check()
        report = LoadReport(encoding="", delimiter="")
        for c in check.columns:
            report.issues[c.name] = ColumnIssues(c.missing, c.unparsable, c.undeclared, None, 0)
        cols = {name: Column(spec, np.empty(0)) for name, spec in self.plan.columns.items()}
        return Table(
            self.source.label,
            self._sha,
            check.rows,
            cols,
            report=report,
            identity=self.identity,
            identity_secret=self.identity_secret,
        )

    @property
    def cluster_only(self) -> bool:
        """Whether the source is one only the cluster reads (named by its content, see the module)."""
        return self.identity is not None

    def aggregate(self, key: BoundKey | None, progress: Progress) -> Aggregates:
        """Every query's state (rows bounded per person first, with an id column)."""
        frame = self.loaded
        unit = self.plan.privacy_unit
        if unit.id_column is not None:
            if key is None:
                raise ValueError("bounding rows per person needs the release's bounding key")
            from dpdesk.core.release.engines.spark import bounding

            frame = bounding.keep_smallest(
                frame, self.plan.columns, unit.max_rows_per_person, key, self.id_key
            )
        progress.update(0, 1, "computing")
        got = self._states if frame is self.loaded and self._states is not None else self._aggregate(frame)[0]
        # the bytes named before Spark read them are still the file's: a file swapped while Spark read it would
        # have its statistics charged to another table's ledger (the race a one-read engine does not have)
        if self.identity is not None:
            pass  # a snapshot's rows: the aggregates are of the rows the identity names
        elif self._local is None or file_sha256(self._local, progress) != self._sha:
            raise InputError(
                self.source.label,
                _(
                    "the file changed while Spark read it; nothing was charged. Release it again once it is not being written"
                ),
            )
        progress.update(1, 1, "computing")
        exacts = tuple(
            statistics.get(d.spec.statistic).from_partial(d, s)
            for d, s in zip(self.designs, got, strict=True)
        )
        return Aggregates(tuple(got), exacts)

    def _aggregate(
        self, frame: DataFrame, flags: Sequence[str] = (), designs: Sequence[QueryDesign] | None = None
    ) -> tuple[list[list[list[int]]], list[int]]:
        try:
            with self._failing():
                return states.aggregate(frame, self.designs if designs is None else designs, self.plan, flags)
        except OverflowError:
            raise InputError(
                self.source.label, _("a sum does not fit in 38 digits; narrow the bounds or split the table")
            ) from None

    @contextlib.contextmanager
    def _failing(self) -> Iterator[None]:
        """A job Spark could not finish (the server went away, an executor failed) as one line naming the Spark
        and the error's kind: its text may quote the table's values, which are not shown."""
        from pyspark.errors import PySparkException

        failures: tuple[type[BaseException], ...] = (PySparkException,)
        try:  # a Java exception Spark did not convert (a Parquet folder whose files disagree on a type)
            from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]

            failures += (Py4JJavaError,)
        except ImportError:  # Spark Connect's client has no py4j
            pass
        try:
            yield
        except failures as exc:
            kind = _condition(exc)
            raise SparkUnavailable(
                _(
                    "Spark ({spark}) stopped before the aggregates were computed ({kind}); nothing was charged"
                ).format(spark=self.target.shown, kind=kind)
            ) from None

    def close(self) -> None:
        """Nothing held between releases but the session, which the process keeps (a local one stops with it)."""


def cluster_key(content_key: str) -> str:
    """The local key (64 hex digits, where a file has its bytes' SHA-256) of a table only a cluster reads: a hash
    of its content key under a label of its own, so it is never a file's key, and the same rows read again are the
    same key."""
    import hashlib

    return hashlib.sha256(b"dpdesk cluster table, content key v2\0" + content_key.encode("ascii")).hexdigest()


def _condition(exc: BaseException) -> str:
    """A Spark failure's error condition (``FAILED_READ_FILE...``), or its Java class's name, never its text."""
    get = getattr(exc, "getCondition", None)
    if callable(get) and get():
        return str(get())
    java = getattr(exc, "java_exception", None)
    if java is not None:
        with contextlib.suppress(Exception):  # a SparkThrowable names its condition; any other, its class
            return str(java.getCondition() or java.getClass().getName())
        with contextlib.suppress(Exception):
            return str(java.getClass().getName())
    return type(exc).__name__


def spark_charset(label: str, encoding: str | None) -> str | None:
    """The --encoding as Spark names it (Spark's CSV reader decodes only a few charsets; any other is refused
    here, nothing charged, rather than read as other text)."""
    import codecs

    if encoding is None:
        return None
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        name = ""
    known = {
        "utf-8": "UTF-8",
        "utf-8-sig": "UTF-8",
        "iso8859-1": "ISO-8859-1",
        "ascii": "US-ASCII",
        "utf-16": "UTF-16",
        "utf-16-be": "UTF-16BE",
        "utf-16-le": "UTF-16LE",
        "utf-32": "UTF-32",
    }
    if name not in known:
        raise SparkUnavailable(
            _(
                "{source}: Spark reads CSV files in UTF-8, ISO-8859-1, US-ASCII, UTF-16 or UTF-32, not {encoding}; "
                "save them as UTF-8 (or as Parquet), or release the file without --engine spark. Nothing was "
                "charged"
            ).format(source=label, encoding=encoding)
        )
    return known[name]


def _not_utf8(source: str, encoding: str) -> str:
    return _(
        "{source}: the Spark engine reads CSV files in UTF-8, and this one is {encoding}; save it as UTF-8 (or "
        "as Parquet), or release it without --engine spark. Nothing was charged"
    ).format(source=source, encoding=encoding)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0][:300] if text else type(exc).__name__).replace("\n", " ")
