"""File > Open Spark table: what the cluster reads, a catalog table or a folder, path or URI (Parquet, or CSV by its
name as ``--data`` tells them apart, with its encoding and delimiter), read by the Spark chosen in File > Aggregation
engine. The dialog names the source only: its rows stay where Spark reads them (the app reads the header)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from dpdesk.gui.state import ClusterSource
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.gui.views.engine_dialog import EngineChoice


def cluster_source(text: str, catalog: bool) -> str:
    """``--data`` for what the user typed: a catalog table's name as ``table:NAME`` (typed with or without the
    prefix), else the folder, path or URI as typed (trimmed)."""
    text = text.strip()
    if catalog or text.startswith("table:"):
        return "table:" + text.removeprefix("table:").strip()
    return text


class SparkDialog(QDialog):
    """The source and, for CSV, its encoding and delimiter; ``opened()`` is what the app opens. OK checks the source
    and the engine (Spark must be chosen) and says in the dialog what is wrong."""

    def __init__(
        self,
        last: ClusterSource | None,
        engine: EngineChoice,
        choose_engine: Callable[[], EngineChoice | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        from dpdesk.core.release.engines.spark.session import pyspark_installed, pyspark_missing

        self.setWindowTitle(_("Open Spark table"))
        self.installed = pyspark_installed()
        self.engine = engine
        self._choose_engine = choose_engine
        intro = QLabel(
            _(
                "A table only the cluster reads: Spark reads it where it lies, and only its header (the columns' "
                "names and types) comes to this computer. Each release has Spark compute the exact statistics "
                "there; the noise, the ledger and the report stay here."
            )
        )
        intro.setWordWrap(True)
        self.catalog = QRadioButton(_("Catalog table:"))
        self.catalog.setObjectName("spark_catalog")
        self.table = QLineEdit()
        self.table.setObjectName("spark_table")
        self.table.setPlaceholderText(_("NAME or DATABASE.NAME"))
        self.table.setAccessibleName(_("Catalog table"))
        self.files = QRadioButton(_("Folder or URI:"))
        self.files.setObjectName("spark_files")
        self.path = QLineEdit()
        self.path.setObjectName("spark_path")
        self.path.setPlaceholderText(_("a folder of Parquet or CSV files, hdfs://… or s3a://…"))
        self.path.setAccessibleName(_("Folder or URI"))
        self.browse = QPushButton(_("Folder…"))
        self.browse.clicked.connect(self._browse)
        self.group = QButtonGroup(self)
        self.group.addButton(self.catalog)
        self.group.addButton(self.files)
        self.encoding = QLineEdit()
        self.encoding.setObjectName("spark_encoding")
        self.encoding.setPlaceholderText("UTF-8")
        self.encoding.setAccessibleName(_("CSV encoding"))
        self.delimiter = QLineEdit()
        self.delimiter.setObjectName("spark_delimiter")
        self.delimiter.setPlaceholderText(",")
        self.delimiter.setMaxLength(1)
        self.delimiter.setAccessibleName(_("CSV delimiter"))
        self.format = QLabel("")
        self.format.setObjectName("spark_format")
        self.format.setWordWrap(True)
        self.format.setStyleSheet("QLabel { color: #555 }")
        if last is not None and last.source.startswith("table:"):
            self.table.setText(last.source.removeprefix("table:"))
            self.catalog.setChecked(True)
        else:
            self.path.setText(last.source if last is not None else "")
            (self.files if last is not None else self.catalog).setChecked(True)
        if last is not None:
            self.encoding.setText(last.encoding or "")
            self.delimiter.setText(last.delimiter or "")
        table_row = QHBoxLayout()
        table_row.addWidget(self.catalog)
        table_row.addWidget(self.table, 1)
        path_row = QHBoxLayout()
        path_row.addWidget(self.files)
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.browse)
        csv = QFormLayout()
        csv.addRow(_("CSV encoding:"), self.encoding)
        csv.addRow(_("CSV delimiter:"), self.delimiter)
        #: the engine that will read it, and a way to choose Spark when it is not chosen
        self.engine_label = QLabel("")
        self.engine_label.setObjectName("spark_engine")
        self.engine_label.setWordWrap(True)
        self.engine_button = QPushButton(_("Aggregation engine…"))
        self.engine_button.setObjectName("spark_engine_button")
        self.engine_button.clicked.connect(self._engine)
        engine_row = QHBoxLayout()
        engine_row.addWidget(self.engine_label, 1)
        engine_row.addWidget(self.engine_button)
        self.missing = QLabel(pyspark_missing())
        self.missing.setObjectName("spark_missing")
        self.missing.setWordWrap(True)
        self.missing.setVisible(not self.installed)
        self.error = QLabel("")
        self.error.setObjectName("spark_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("QLabel { color: #b00020 }")
        self.error.setVisible(False)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = self.column = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(table_row)
        layout.addLayout(path_row)
        layout.addLayout(csv)
        layout.addWidget(self.format)
        layout.addLayout(engine_row)
        layout.addWidget(self.missing)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        for button in (self.catalog, self.files):
            button.toggled.connect(self._update)
        for edit in (self.table, self.path, self.encoding, self.delimiter):
            edit.textChanged.connect(self._update)
        self._update()
        self.resize(max(600, self.sizeHint().width()), self.sizeHint().height())
        self._fit()

    def _fit(self) -> None:
        """Tall enough for its wrapped words at its width (as the engine dialog)."""
        from dpdesk.gui.fit import tall_enough

        tall_enough(self, self.column)

    def _is_csv(self) -> bool:
        from dpdesk.core.release.engines.spark.session import SparkSource

        return self.files.isChecked() and SparkSource.parse(self.path.text().strip()).kind == "csv"

    def _update(self) -> None:
        from dpdesk.core.release.engines.spark.session import SparkTarget
        from dpdesk.gui.views.engine_dialog import HERE

        self.table.setEnabled(self.catalog.isChecked())
        self.path.setEnabled(self.files.isChecked())
        self.browse.setEnabled(
            self.files.isChecked() and self._engine_here()
        )  # a server elsewhere: its own files
        csv = self._is_csv()
        self.encoding.setEnabled(csv)
        self.delimiter.setEnabled(csv)
        if self.files.isChecked() and self.path.text().strip():
            self.format.setText(
                _("Read as CSV (its name ends in .csv, .tsv or .txt), every column as text.")
                if csv
                else _("Read as Parquet (a name that does not end in .csv, .tsv or .txt).")
            )
        else:
            self.format.setText("")
        self.format.setVisible(bool(self.format.text()))
        if self.engine.kind == HERE:
            self.engine_label.setText(
                _(
                    "Spark must be chosen to read it: File > Aggregation engine is set to this computer, which "
                    "cannot read a table of the cluster."
                )
            )
            self.engine_label.setStyleSheet("QLabel { color: #b00020 }")
        else:
            try:
                shown = self.engine.target()
                address = shown.shown if isinstance(shown, SparkTarget) else ""
            except Exception:  # noqa: BLE001 - a kept address refused now: said when Open is pressed
                address = self.engine.remote
            self.engine_label.setText(_("Read by Spark at {address}.").format(address=address))
            self.engine_label.setStyleSheet("")
        self.engine_button.setVisible(self._choose_engine is not None)
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(self.installed)
        self.error.setVisible(False)
        self._fit()

    def _engine_here(self) -> bool:
        """Whether the chosen Spark reads this computer's files (``local[N]``, or a server on this computer); an
        address refused now counts as here (said when the source is checked)."""
        from dpdesk.core.common.errors import DpdeskError
        from dpdesk.core.release.engines.spark.session import on_this_machine

        try:
            target = self.engine.target()
        except DpdeskError:
            return True
        return target is None or on_this_machine(target)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, _("Folder the cluster reads"), self.path.text())
        if folder:
            self.path.setText(folder)

    def _engine(self) -> None:
        if self._choose_engine is None:
            return
        chosen = self._choose_engine()
        if chosen is not None:
            self.engine = chosen
        self._update()

    def opened(self) -> ClusterSource:
        """The source as the dialog shows it now (CSV options only for a CSV source)."""
        text = self.table.text() if self.catalog.isChecked() else self.path.text()
        source = cluster_source(text, self.catalog.isChecked())
        csv = self._is_csv()
        return ClusterSource(
            source,
            (self.encoding.text().strip() or None) if csv else None,
            (self.delimiter.text() or None) if csv else None,
        )

    def problem(self) -> str | None:
        """What keeps the source from being opened, in words (None: it can be)."""
        from dpdesk.core.common.errors import DpdeskError
        from dpdesk.core.release.engines.spark.engine import spark_charset
        from dpdesk.gui.views.engine_dialog import HERE

        opened = self.opened()
        if opened.source in ("", "table:"):
            return _("Name the catalog table, or the folder or URI Spark reads.")
        if self.engine.kind == HERE:
            return _(
                "Choose Spark first (Aggregation engine…): this computer cannot read a table of the cluster."
            )
        if not opened.source.startswith("table:") and "://" not in opened.source:
            path = Path(opened.source)
            if not self._engine_here():
                return _(
                    "{path} is a path on this computer, which a Spark Connect server elsewhere does not read: name "
                    "the cluster's folder by its address (hdfs://…, s3a://…), or its catalog table."
                ).format(path=opened.source)
            if path.is_file():
                return _(
                    "{path} is a file on this computer: open it with File > Open table (choose Spark in File > "
                    "Aggregation engine to have Spark aggregate it)."
                ).format(path=opened.source)
            if not path.exists():
                return _("{path}: no such folder on this computer.").format(path=opened.source)
        from dpdesk.core.release.engines.spark.header import spark_location
        from dpdesk.core.release.engines.spark.session import SparkSource

        try:
            self.engine.target()
            spark_location(SparkSource.parse(opened.source))  # a path Spark would read as wildcards
            spark_charset(opened.source, opened.encoding)
        except DpdeskError as exc:
            return str(exc)
        return None

    def accept(self) -> None:
        """Close only on a source the app can ask Spark for: what is wrong is said here."""
        problem = self.problem()
        if problem is not None:
            self.error.setText(problem)
            self.error.setVisible(True)
            self._fit()
            return
        super().accept()
