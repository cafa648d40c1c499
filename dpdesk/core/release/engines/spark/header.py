"""The header of a table only the cluster reads, and nothing else: its columns' names and Spark types, for the app
to show the table before its first release (File > Open Spark table).

:func:`spark_header` starts the chosen Spark (:func:`~.session.start`: the same session, setup and canary as a
release), asks it for the source's schema (:func:`~.session.read`, the release's own reader) and returns the names
with the kind each Spark type maps to, as the engine's content identity reads them
(:mod:`~dpdesk.core.release.engines.spark.identity`): integer types as ``int``, ``double``/``float``/``decimal``
as ``float``, text, booleans and dates as ``category``; any other type (timestamps, binary, arrays...) gets no
kind here, and the release refuses it with the engine's own message. A schema is the table's declaration, not
its rows: **no row is read** (Spark reads a Parquet file's footer, a CSV file's first line, a catalog table's
metadata), no count is made, nothing comes back to the desktop but the names and types. A CSV's columns are all
text for Spark (no schema inference, as the release reads them): each is shown as ``category``, the user
declares what it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dpdesk.core.common.errors import InputError
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.release.engines.spark.session import (
    GLOB,
    SparkSource,
    SparkTarget,
    SparkUnavailable,
    read,
    start,
)
from dpdesk.i18n import _

_INTEGER_TYPES = ("bigint", "int", "smallint", "tinyint")
_FLOAT_TYPES = ("double", "float")
_TEXT_TYPES = ("string", "boolean", "date")


@dataclass(frozen=True)
class SparkHeader:
    """A source's name as the release records it (``label``), its columns and each one's kind (None: a type the
    release refuses) and Spark type."""

    label: str
    names: tuple[str, ...]
    kinds: tuple[str | None, ...]
    types: tuple[str, ...]


def kind_of(spark_type: str) -> str | None:
    """dpdesk's column kind for a Spark type's simple name (see the module)."""
    if spark_type in _INTEGER_TYPES:
        return "int"
    if spark_type in _FLOAT_TYPES or spark_type.startswith("decimal"):
        return "float"
    if spark_type in _TEXT_TYPES:
        return "category"
    return None


def spark_location(source: SparkSource) -> SparkSource:
    """The source as Spark is told to read it: a path on this computer made absolute with ``file:`` (as the engine
    reads it), a catalog table or a URI as written; a path Spark would read as wildcards, or one that does not
    exist here, or an address that carries a password, is refused in words."""
    from dpdesk.core.release.engines.spark.session import refuse_password

    refuse_password(source)
    if source.kind == "table":
        if not source.location.strip():
            raise InputError(source.label, _("name the catalog table"))
        return source
    if any(c in source.location for c in GLOB):
        raise SparkUnavailable(
            _(
                "{source}: Spark reads * ? [ ] and curly brackets in a path as wildcards, so it might read other "
                "files than the one dpdesk names the dataset by; rename the file without them. Nothing was charged"
            ).format(source=source.label)
        )
    if "://" in source.location:
        return source
    path = Path(source.location)
    if not path.exists():
        raise InputError(source.label, _("no such file or folder"))
    return SparkSource(source.kind, "file:" + str(path.resolve()))


def spark_header(
    source: str,
    target: SparkTarget,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
) -> SparkHeader:
    """The header of ``source`` (``table:NAME``, a folder, a path or a URI) as the Spark at ``target`` reads it;
    :class:`SparkUnavailable` when Spark cannot be had, :class:`InputError` when it cannot read the source."""
    from dpdesk.core.release.engines.spark.engine import _reason, spark_charset

    parsed = SparkSource.parse(source)
    where = spark_location(parsed)
    charset = spark_charset(parsed.label, encoding)
    progress.update(0, 2, "starting Spark")
    spark = start(target)
    progress.check_cancelled()
    progress.update(1, 2, "reading the header")
    try:
        fields = list(read(spark, where, charset, delimiter).schema.fields)  # the schema: no row is read
    except Exception as exc:  # noqa: BLE001 - Spark raises many kinds for a path or table it cannot read
        raise InputError(
            parsed.label, _("Spark cannot read it ({reason})").format(reason=_reason(exc))
        ) from None
    progress.update(2, 2, "reading the header")
    types = tuple(f.dataType.simpleString() for f in fields)
    return SparkHeader(parsed.label, tuple(f.name for f in fields), tuple(kind_of(t) for t in types), types)
