"""Opening: what a path is (a package, a ledger, a plan or a table), a table, and the bundled sample."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dpdesk.gui.actions.base import Action
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.common.progress import Progress
    from dpdesk.core.identity.recognition import Resemblance
    from dpdesk.core.loading.peek import Peek
    from dpdesk.core.release.engines.spark.header import SparkHeader
    from dpdesk.gui.state import ClusterSource
    from dpdesk.gui.workers import Worker

#: the settings' keys of File > Open Spark table: the sources opened (recent entries to open with Spark), the last
SPARK_SOURCES_KEY, SPARK_LAST_KEY = "spark/sources", "spark/last"


def data_filter() -> str:
    """The file dialog's filter for tables."""
    return _("Tables") + " (*.csv *.tsv *.txt *.xlsx *.parquet);;" + _("All files") + " (*)"


@dataclass(frozen=True)
class OpenedTable:
    """A table read in the worker: its first rows, the suggested types, its hash, and its dataset's standing."""

    peek: Peek
    suggested: dict[str, str]
    sha256: str
    near: tuple[Resemblance, ...]  # the known datasets a new table resembles
    identity_error: str | None  # why its dataset could not be found by content


class Opening(Action):
    """File > Open table, Open database table, Open recent, a dropped file, the welcome page's sample."""

    #: the private folder holding the database table opened last (its rows as CSV), while the app runs
    _copies: contextlib.ExitStack[bool | None] | None = None

    def open_path(self, path: str) -> Worker | bool | None:
        """Open what ``path`` is, told by its content (:func:`dpdesk.services.opening.identify`): a release package
        (its folder or its ledger.json) or an exported ledger in the review window, a plan as the plan, a table as
        the table; anything else is named in an error with what dpdesk opens."""
        from dpdesk.core.common.errors import DpdeskError
        from dpdesk.services.opening import identify

        window = self.window
        if path.startswith("table:") or path in self.spark_sources():  # a table only the cluster reads
            return window.open_spark(path)
        try:
            opened = identify(path)
        except DpdeskError as exc:
            window.show_error(str(exc))
            return None
        if opened.kind == "database":
            return window.open_database(path)
        if opened.kind in ("package", "ledger"):
            return window.review(str(opened.path))
        if opened.kind == "plan":
            return window.open_plan(str(opened.path))
        return window.open_data(str(opened.path))

    def open_database(self, url: str | None = None) -> Worker | None:
        """File > Open database table: its rows read once into a private CSV file (kept while the app runs, removed
        when it ends or another database table is opened; swept if the app is killed), then opened as a table.
        Remembered among the recent tables by its URL, which holds no password (a URL holding one is refused)."""
        from dpdesk.core.common.errors import DpdeskError
        from dpdesk.services.database import source_of

        window = self.window
        if not url:  # the menu's action passes False
            from dpdesk.gui.views.database_dialog import DatabaseDialog

            last = str(window.settings.value("database/server", "") or "")
            dialog = DatabaseDialog(last, window)
            if dialog.exec() != DatabaseDialog.DialogCode.Accepted:
                return None
            url = dialog.url()
        try:
            source = source_of(url)
        except DpdeskError as exc:
            window.show_error(str(exc))
            return None
        if source is None:
            return self.open_data(url)
        window.settings.setValue(
            "database/server", url.split("?table=")[0].split("&table=")[0].split("?query=")[0]
        )
        return self.open_data(url)

    def _database_copy(self, url: str, progress: Progress) -> Path:
        """The rows of the database table ``url`` names, in a CSV file in this app's private folder."""
        import atexit

        from dpdesk.core.loading.database import copy_to_file
        from dpdesk.core.release.streaming import private_folder
        from dpdesk.services.database import source_of

        source = source_of(url)
        assert source is not None
        copies = contextlib.ExitStack()
        try:
            folder = copies.enter_context(private_folder())
            dest = folder / source.file_name
            copy_to_file(source, dest, on_bytes=lambda n: progress.update(n, 0, "reading"))
        except BaseException:
            copies.close()  # the table open now keeps its rows
            raise
        previous, self._copies = self._copies, copies
        if previous is not None:  # the previous database table's rows go now
            previous.close()
        else:
            atexit.register(lambda: self._copies.close() if self._copies is not None else None)
        return dest

    def open_data(self, path: str | None = None) -> Worker | None:
        """Read the table in the worker (its first rows, its hash, its dataset), then show it."""
        from dpdesk.core.common.dataurl import is_database_url

        window = self.window
        path = path or window.ask_open_path(_("Open table"), data_filter(), "table")
        if not path:
            return None
        url = path if is_database_url(path) else None
        p = Path(path)
        home = self.state.home

        def job(progress: Progress) -> OpenedTable:
            nonlocal p
            from dpdesk.core.common.errors import LedgerError
            from dpdesk.core.loading import file_sha256, peek, suggest_from_peek
            from dpdesk.services.common import Dataset

            if url is not None:
                p = self._database_copy(url, progress)
            pk = peek(p)
            sha = file_sha256(p, progress)
            # which dataset the table belongs to, by its bytes or its content (here in the worker: the first time,
            # the content identity reads the whole file); a re-saved copy is linked to its dataset here
            near: tuple[Resemblance, ...] = ()
            error = None
            try:
                found = Dataset(home, p, sha256=sha).resolve(progress)
                if found is not None and found.dataset is None:
                    near = found.resembles
            except LedgerError as exc:
                error = str(exc)
            return OpenedTable(pk, suggest_from_peek(pk), sha, near, error)

        def done(table: OpenedTable) -> None:
            self.state.set_data(
                p, table.peek, table.suggested, table.sha256, table.near, table.identity_error
            )
            window.add_recent(url if url is not None else p)
            window.tabs.setCurrentWidget(window.schema_view)
            if self.state.plan_path is not None:  # a plan opened first: the plan of this table from now on
                window.files.remember_plan(p, self.state.plan_path)
            else:
                window.offer_last_plan()

        return self.run(job, done, _("Opening {name}…").format(name=p.name if url is None else url))

    # ------------------------------------------------------------------ a table only the cluster reads
    def spark_sources(self) -> list[str]:
        """The sources opened with File > Open Spark table (as the recent list names them)."""
        value = self.window.settings.value(SPARK_SOURCES_KEY, [])
        return [str(v) for v in value] if isinstance(value, list) else [str(value)] if value else []

    def last_spark(self) -> ClusterSource | None:
        """The source opened last with File > Open Spark table (its CSV options too), if any."""
        import json

        from dpdesk.gui.state import ClusterSource

        try:
            raw = json.loads(str(self.window.settings.value(SPARK_LAST_KEY, "") or ""))
            return ClusterSource(str(raw["source"]), raw.get("encoding"), raw.get("delimiter"))
        except (ValueError, KeyError, TypeError):
            return None

    def _remember_spark(self, opened: ClusterSource) -> str:
        """Keep the source (never the engine's address or token) among the recent tables; its name there."""
        import json
        import os

        settings = self.window.settings
        name = opened.source
        if not name.startswith("table:") and "://" not in name:
            name = os.path.abspath(name)
        settings.setValue(SPARK_SOURCES_KEY, [name] + [s for s in self.spark_sources() if s != name][:19])
        body = {"source": name, "encoding": opened.encoding, "delimiter": opened.delimiter}
        settings.setValue(SPARK_LAST_KEY, json.dumps(body))
        self.window.add_recent(name)
        return name

    def open_spark(self, source: str | None = None) -> Worker | None:
        """File > Open Spark table: the source asked (or ``source``, a recent one, with its last CSV options), then
        its header read by the Spark chosen in File > Aggregation engine, in the worker; no row is read here. The
        table is then shown as one whose rows are not on this computer (:attr:`AppState.cluster`)."""
        from dpdesk.core.common.errors import DpdeskError
        from dpdesk.gui.state import ClusterSource

        window = self.window
        last = self.last_spark()
        if source:
            opened: ClusterSource | None = (
                last if last is not None and last.source == source else ClusterSource(source)
            )
        else:
            opened = window.ask_spark_source(last, window.releasing.engine_choice())
        if opened is None:
            return None
        try:
            target = window.releasing.engine_choice().target()
        except DpdeskError as exc:
            window.show_error(str(exc))
            return None
        if target is None:
            window.show_error(
                _(
                    "{source} is read by Spark: choose Apache Spark in File > Aggregation engine, then open it "
                    "again."
                ).format(source=opened.source)
            )
            return None
        home = self.state.home

        def job(progress: Progress) -> tuple[SparkHeader, str | None]:
            from dpdesk.core.release.engines.spark.header import spark_header
            from dpdesk.services.common import Dataset

            header = spark_header(
                opened.source,
                target,
                encoding=opened.encoding,
                delimiter=opened.delimiter,
                progress=progress,
            )
            return header, Dataset(home, opened.source).key()  # the key Spark last named it with, if any

        def done(result: tuple[SparkHeader, str | None]) -> None:
            from dpdesk.core.loading.peek import Peek

            header, key = result
            name = self._remember_spark(opened)
            cluster = ClusterSource(name, opened.encoding, opened.delimiter)
            peek = Peek(header.label if name.startswith("table:") else name, header.names, ())
            suggested = {n: k for n, k in zip(header.names, header.kinds, strict=True) if k is not None}
            self.state.set_data(Path(peek.path), peek, suggested, key, cluster=cluster)
            window.tabs.setCurrentWidget(window.schema_view)

        return self.run(
            job, done, _("Reading the header of {source} with Spark…").format(source=opened.source)
        )

    def open_sample(self) -> Worker | None:
        """Open the bundled sample table and its plan (the README's quick start) in one go. The plan is opened
        unsaved, so that Save asks where to put it and never writes over the bundled file."""
        from dpdesk.resources import resource

        window = self.window
        if not window.maybe_save():
            return None
        plan = resource("samples", "cps_wages_plan.json")
        try:
            data = json.loads(plan.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # pragma: no cover - a damaged installation
            window.show_error(_("Cannot open the plan {path}: {err}").format(path=plan, err=exc))
            return None
        self.state.load_plan_data(data, None)
        window.show_main()
        if window.views_ready:
            window.query_form.select_row(0)
        return window.open_data(str(resource("samples", "census_sample.csv")))
