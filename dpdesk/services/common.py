"""What the services share: how a request names a dataset, and how a service tells its caller a notice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.identity.recognition import Resolution
    from dpdesk.core.ledger.book import Ledger

#: Receives a notice for the user while a service runs (today: that a ledger was migrated from the old format).
Notify = Callable[[str], None]


@dataclass(frozen=True)
class Dataset:
    """A dataset as the services find its ledger: its data file under a dpdesk home folder.

    ``sha256`` is the data file's SHA-256 when the caller already has it (the app hashes the file on opening):
    the file is then not read again. ``name`` is how documents name the dataset (default: the file's name).
    ``dataset_id`` names a known dataset by its public id instead of a file (the officer's dashboard acts on a
    team's dataset it has no file of): its ledger is opened by that id, and nothing is resolved.
    """

    home: Path
    data: str | Path | None = None
    sha256: str | None = None
    name: str | None = None
    dataset_id: str | None = None

    def __post_init__(self) -> None:
        if self.data is None and self.sha256 is None and self.dataset_id is None:
            raise ValueError("a dataset needs its data file, the file's SHA-256 or its public id")

    @property
    def display_name(self) -> str:
        """The dataset's name in documents: ``name`` if given, else the data file's name."""
        if self.name is not None:
            return self.name
        return Path(self.data).name if self.data is not None else (self.dataset_id or "")

    def resolve(self, progress: Progress = NULL_PROGRESS) -> Resolution | None:
        """Which dataset the data file belongs to: by its bytes, else by its content (a re-saved copy of a known
        table is linked to its dataset here), else new, with the datasets it resembles; None without a file."""
        if self.data is None:
            return None
        from dpdesk.core.identity.recognition import resolve

        key = self.key()
        # a source only a cluster reads, found by the key its last release attempt here left (never read here)
        hinted = key is not None and self.sha256 is None
        return resolve(self.home, self.data, sha256=key, progress=progress, cluster_table=hinted)

    def key(self) -> str | None:
        """The given SHA-256; for a source only a cluster reads (not a file here), the key of the table Spark
        last read there (:func:`~dpdesk.core.ledger.contents.cluster_table_key`), whose identity the home kept."""
        if self.sha256 is not None or self.data is None or Path(self.data).is_file():
            return self.sha256
        from dpdesk.core.ledger.contents import cluster_table_key
        from dpdesk.core.ledger.team import team_url

        # in a team home, the hint its release in the team left (else the home's own, a key the team may know from an
        # import); a home on its own ledger never takes a team's (keyed with the team's secret: not its dataset)
        kept = cluster_table_key(self.home, self.data, team=True) if team_url(self.home) is not None else None
        return kept if kept is not None else cluster_table_key(self.home, self.data)

    def own_ledger(self) -> Ledger:
        """The ledger of the data file's own bytes, not settled against other datasets of its table (for a repair
        that charges nothing: an acknowledgement)."""
        from dpdesk.core.ledger.book import Ledger
        from dpdesk.core.loading import file_sha256

        if self.data is None and self.sha256 is None:
            return self.by_id()
        key = self.key()
        sha = key if key is not None else file_sha256(self.data or "")
        return Ledger.for_dataset(self.home, sha)

    def open_ledger(self, notify: Notify | None = None) -> Ledger:
        """The dataset's ledger (nothing is created); ``notify`` is told once if it was migrated just now.

        With a data file, the ledger is found by content when the file's bytes are new (see :meth:`resolve`);
        a new table that resembles a known dataset is refused (:class:`~dpdesk.core.identity.recognition.NearCopy`, exit
        3): it is linked to that dataset or declared new first (:mod:`dpdesk.services.ledger`).
        """
        from dpdesk.core.identity.recognition import ledger_for
        from dpdesk.core.ledger.book import migration_notice

        if self.data is None and self.sha256 is None:
            return self.by_id()
        resolution = self.resolve()
        if resolution is not None:
            ledger = resolution.ledger
        else:
            assert self.sha256 is not None
            ledger = ledger_for(self.home, self.sha256)
        if notify is not None and ledger.migrated is not None:
            notify(migration_notice(ledger.migrated))
        refuse_near_copy(resolution)
        return ledger

    def by_id(self) -> Ledger:
        """The ledger of the known dataset ``dataset_id`` (in the team's ledger when the home uses one); a
        :class:`~dpdesk.core.common.errors.UsageError` when the home knows no dataset of that id."""
        from dpdesk.core.common.errors import UsageError
        from dpdesk.core.ledger.book import Ledger
        from dpdesk.core.ledger.entries import is_dataset_id
        from dpdesk.i18n import _

        dataset = self.dataset_id or ""
        if not is_dataset_id(dataset) or not Ledger.of(self.home, dataset).store.has(dataset):
            raise UsageError(
                _("{dataset} is not a dataset with a ledger in this dpdesk home").format(dataset=dataset)
            )
        return Ledger.of(self.home, dataset)


def refuse_near_copy(resolution: Resolution | None) -> None:
    """Raise :class:`~dpdesk.core.identity.recognition.NearCopy` when a new table resembles a known dataset."""
    from dpdesk.core.identity import recognition

    recognition.refuse_near_copy(resolution)
