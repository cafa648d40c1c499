"""Write a recorded release (a spend entry of the dataset's ledger) as a release package; costs nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.core.common.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.ledger.book import Ledger
    from dpdesk.core.ledger.entries import SpendEntry
    from dpdesk.services.common import Dataset


@dataclass(frozen=True)
class ExportRequest:
    """Write the release recorded in ``entry`` (a spend entry of ``dataset``'s ledger) into ``out``, a new or
    empty folder: release.csv, report.pdf, plan.json, ledger.json."""

    dataset: Dataset
    entry: SpendEntry
    out: Path
    #: the report's title (the plan's title when None); the plan and the values are unchanged
    title: str | None = None


@dataclass(frozen=True)
class Exported:
    """Where the package went."""

    out: Path


def export_release(request: ExportRequest, progress: Progress = NULL_PROGRESS) -> Exported:
    """Write the package of a release already charged and recorded (the values come from its ledger entry)."""
    ledger = request.dataset.open_ledger()
    write_recorded_release(
        request.out, request.entry, ledger, request.dataset.display_name, progress, title=request.title
    )
    return Exported(request.out)


def write_recorded_release(
    out: Path,
    entry: SpendEntry,
    ledger: Ledger,
    dataset_name: str,
    progress: Progress = NULL_PROGRESS,
    *,
    title: str | None = None,
) -> None:
    """Check and claim ``out`` (new or empty), then write the package of the spend ``entry`` beside it and rename
    it into place whole; a failure leaves nothing there (:class:`~dpdesk.core.common.errors.UsageError`, exit 2)."""
    from dpdesk.core.common.errors import UsageError
    from dpdesk.core.ledger.entries import rows_from_entry
    from dpdesk.core.plan.reader import parse_plan
    from dpdesk.core.publish.outputs import claim_out_dir
    from dpdesk.core.release.steps import write_release_dir
    from dpdesk.i18n import _

    claim = claim_out_dir(out)
    progress.update(0, 1, "writing")
    try:
        write_release_dir(
            claim, rows_from_entry(entry), parse_plan(entry.plan), entry, ledger, dataset_name, title=title
        )
    except OSError as exc:
        raise UsageError(
            _("could not write the release package to {path} ({err}); nothing was left there").format(
                path=out, err=exc.strerror or exc
            )
        ) from None
