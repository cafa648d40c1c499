"""Review: a release package (folder) or an exported ledger, read-only, in its own window."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.publish.review import Review as Found
    from dpdesk.gui.workers import Worker


class Review(Action):
    """File > Review release, the welcome page's review button, and a package opened or dropped."""

    def review(self, path: str | None = None) -> Worker | None:
        """Open a release package (folder) or an exported ledger file read-only, and show whether it is intact.

        The review service runs in the worker (a large package's files are hashed there, with progress and
        cancel); the window opens, as the main window's ``review_window``, when it is done."""
        window = self.window
        path = path or window.ask_folder(_("Choose a release package folder"), "package")
        if not path:
            return None
        from dpdesk.services.review import ReviewRequest, review_path

        def job(progress: Progress) -> Found:
            return review_path(ReviewRequest(path), progress).review

        def done(result: Found) -> None:
            from dpdesk.gui.views.review_window import ReviewWindow

            shown = ReviewWindow(result, path, window)
            shown.setModal(False)
            shown.show()
            window.review_window = shown

        return self.run(job, done, _("Reviewing {name}…").format(name=Path(path).name))
