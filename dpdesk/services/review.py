"""Review a release package or an exported ledger, read-only, on any machine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.progress import NULL_PROGRESS, Progress

if TYPE_CHECKING:
    from dpdesk.core.publish.review import Review


@dataclass(frozen=True)
class ReviewRequest:
    """A release package folder, or a ledger file exported for an officer; ``against``: a later export of the same
    dataset's ledger, which must still reach the head the package or export was made at."""

    path: str | Path
    against: str | Path | None = None


@dataclass(frozen=True)
class Reviewed:
    """What the review found (:class:`dpdesk.core.publish.review.Review`)."""

    review: Review

    @property
    def intact(self) -> bool:
        """True when nothing was found wrong."""
        return self.review.intact

    def summary(self) -> dict[str, Any]:
        """The review as JSON-ready data (the command line's ``--json``)."""
        from dpdesk.core.publish.review import review_summary

        return review_summary(self.review)


def review_path(request: ReviewRequest, progress: Progress = NULL_PROGRESS) -> Reviewed:
    """Check the package's files against its ledger entries, or the exported ledger's hash chain (and, with
    ``against``, that the later ledger was not rolled back behind it)."""
    from dpdesk.core.publish.review import review

    progress.check_cancelled()
    return Reviewed(review(request.path, request.against, progress))
