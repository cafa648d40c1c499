"""What a malformed file can make a reader raise: any exception, and polars' panics.

A corrupted Parquet file can make polars (Rust) panic; the panic reaches Python as
``pyo3_runtime.PanicException``, a :class:`BaseException` that ``except Exception`` lets through (a traceback
and exit 1, the over-budget code). Readers catch :data:`reader_errors` instead: exactly those two, never
``KeyboardInterrupt`` or ``SystemExit``.
"""

from __future__ import annotations


def reader_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a reader of a malformed file may raise (evaluated only when one was raised)."""
    from polars.exceptions import PanicException

    return (Exception, PanicException)
