"""The store boundary: where a home's ledger chains are kept, and the one protocol a second kind of storage implements.

A chain is a dataset's entries as JSON lines, in order (:mod:`dpdesk.core.ledger.entries` writes and checks them;
:mod:`dpdesk.core.ledger.book` decides what is appended, under which checks). A store only keeps bytes: it never
parses an entry, computes a total or decides anything about the budget, so the whole of the ledger's logic is the
same whatever keeps the chains. What a store promises (``tests/core/test_ledger_store.py`` checks every store
against the same contract, each in real processes):

* **An exclusive writer.** :meth:`ChainStore.locked` is held around every check-then-charge: while one process holds
  it for a chain, no other process can hold it for that chain (two releases can never overspend together). It is
  not re-entrant. It raises :class:`OSError` when it cannot be taken.
* **Durable appends.** :meth:`ChainStore.append` returns only when the line is durable (a crash or a power cut
  after it keeps the line); when it raises, nothing of the line is left. It is called only with the lock held.
* **What was written is read back.** :meth:`ChainStore.read` returns every byte appended, in order;
  :meth:`ChainStore.read_tail` the lines from the last checkpoint to the end (a store may answer None: the caller
  then reads and verifies the whole chain).
* **Evidence is never lost.** :meth:`ChainStore.keep_evidence` keeps a copy of a chain (a broken ledger an officer
  acknowledged, a chain rebuilt) that is never overwritten by other evidence; :meth:`ChainStore.replace` replaces a
  chain in one step (a crash leaves the old chain or the new one, never a mix).

Which dataset a data file belongs to (its local keys, which hold the file's SHA-256 and never leave the machine),
the content identities and the register of heads are kept in the curator's home today (:mod:`dpdesk.core.ledger.anchor`,
:mod:`dpdesk.core.ledger.contents`); the register records the heads this home saw, so a chain that went back behind
one of them is refused whoever keeps it. The team's ledger keeps the content identities and the register of datasets
in its database too (issue "A team's budget"), behind a protocol of the same kind here.

Two stores keep chains: :class:`dpdesk.core.ledger.filestore.FileStore` (``<home>/ledgers/<id>.jsonl``, the default)
and :class:`dpdesk.core.ledger.pgstore.PgStore` (a team's PostgreSQL database, issue "A team's budget"), each in the
contract test's list of stores. The team's store checks every line as it is appended (its link, hash, author, role
and the budget), so its chains are never broken: it refuses :meth:`ChainStore.keep_evidence` and
:meth:`ChainStore.replace`, which only the repair of a broken chain calls.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol


class ChainStore(Protocol):
    """Where the chains of a home's datasets are kept. ``name`` is a dataset's public id (an old-format ledger's,
    from before public ids, is its file's SHA-256: only the file store has those)."""

    def label(self, name: str) -> str:
        """How messages name a chain (a file's path; never anything derived from the data)."""

    def has(self, name: str) -> bool:
        """Whether the chain has a place in the store, even an empty one."""

    def exists(self, name: str) -> bool:
        """Whether anything was ever appended to the chain (and is still there)."""

    def read(self, name: str) -> bytes:
        """The whole chain as stored (b"" for none); :class:`OSError` when it cannot be read."""

    def read_tail(self, name: str) -> tuple[list[bytes], int] | None:
        """The lines from the chain's last checkpoint line to its end, and the offset of the first; None when the
        store cannot tell (the caller then reads the whole chain)."""

    def locked(self, name: str) -> AbstractContextManager[None]:
        """Hold the chain's exclusive writer lock (not re-entrant); :class:`OSError` when it cannot be taken."""

    def append(self, name: str, line: bytes) -> None:
        """Append one line durably (returns once it is durable; nothing of it is left when it raises
        :class:`OSError`). Called with :meth:`locked` held."""

    def keep_evidence(self, name: str, raw: bytes, kind: str, stamp: str) -> str:
        """Keep ``raw`` (a chain's bytes) as evidence of ``kind`` (``broken``, ``pre-migration``) made at ``stamp``,
        never overwriting other evidence; return the name it is kept under (recorded in the ledger)."""

    def replace(self, name: str, data: bytes) -> None:
        """Replace the chain by ``data`` in one step, durably (a crash leaves the old chain or the new one)."""

    def datasets(self) -> list[str]:
        """The public ids of the datasets whose chains are kept here, sorted."""
