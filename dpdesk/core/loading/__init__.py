"""Loading a table (CSV in common encodings, Excel .xlsx, Parquet) into compact numpy columns, and the quick
look (peek) and type suggestion the curator sees before declaring the columns.

Only the columns the plan declares are kept, already in the form the statistics need:

* category columns as ``int16`` codes into the declared category list, ``-1`` for missing,
  unparsable or undeclared values (values outside the declared categories are treated as missing);
* int columns clamped to their declared bounds in the smallest integer type, with a missing mask;
* float columns as ``float64`` with ``NaN`` for missing (infinities are clamped at query time).

CSV is read in byte blocks split at record boundaries outside quotes; each piece is parsed by
polars and converted to numpy before the next is read, so memory stays near the size of the
final columns, progress is reported per block and a cancel is honoured between blocks. The file's
SHA-256 (the ledger's dataset key) is computed in the same pass.

Nothing here reads a public parameter off the data: bounds and categories come from the plan.
The :class:`LoadReport` (counts of missing and undeclared values, with a first example location)
is for the local curator's eyes only and never enters a release, a report or the ledger.

The package, by job: :mod:`~.table` (the types a load produces), :mod:`~.load` (:func:`load_table`, the one
entry point, dispatching on the format), one module per format (:mod:`~.csvfile`: encoding detection,
delimiter sniffing, the streaming and block readers; :mod:`~.excel`; :mod:`~.parquet`), :mod:`~.columns` (the
column building all readers share), :mod:`~.guards` (read limits and the .xlsx bomb guard), :mod:`~.peek` (the
first rows as text), :mod:`~.header` (the column names from the header alone, for a plan template) and
:mod:`~.suggest` (the one type suggestion, for the app and the command line).
"""

from dpdesk.core.loading.guards import MAX_ROWS
from dpdesk.core.loading.load import load_table
from dpdesk.core.loading.peek import SAMPLE_ROWS, Peek, peek
from dpdesk.core.loading.suggest import suggest_from_peek, suggest_types
from dpdesk.core.loading.table import Column, ColumnIssues, LoadReport, Table, file_sha256

__all__ = [
    "MAX_ROWS",
    "SAMPLE_ROWS",
    "Column",
    "ColumnIssues",
    "LoadReport",
    "Peek",
    "Table",
    "file_sha256",
    "load_table",
    "peek",
    "suggest_from_peek",
    "suggest_types",
]
