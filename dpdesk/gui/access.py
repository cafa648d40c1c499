"""Accessible names (issue 28 item 3): a screen reader reads an input by its accessible name, which Qt leaves empty
for a line edit, a list or a table. Every input is given the words of the label it stands beside (a form's label,
a label whose buddy it is, else its tooltip or placeholder) when its view is built, and again when a tab is shown
or a query is selected, so that forms built later (a query's fields change with its statistic) are named too. A
name set in the code is kept."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QTextEdit,
    QWidget,
)

#: The widgets a person types into, chooses in or reads item by item
INPUTS = (QLineEdit, QComboBox, QAbstractSpinBox, QAbstractItemView, QPlainTextEdit, QTextEdit, QSlider)


def _plain(text: str) -> str:
    """A label's words: no mnemonic ampersand, no markup, no trailing colon."""
    import re

    text = re.sub(r"<[^>]+>", "", text).replace("&&", "\0").replace("&", "").replace("\0", "&")
    return " ".join(text.split()).rstrip(":：").strip()


def _form_label(widget: QWidget) -> str:
    """The label a form layout sets beside ``widget``, looking through the layouts of its parent."""
    parent = widget.parentWidget()
    if parent is None:
        return ""
    layouts: list[QLayout] = []
    top = parent.layout()
    if top is not None:
        layouts.append(top)
    layouts += parent.findChildren(QFormLayout)
    while layouts:
        lay = layouts.pop()
        if isinstance(lay, QFormLayout):
            label = lay.labelForField(widget)
            if isinstance(label, QLabel) and label.text():
                return _plain(label.text())
        for i in range(lay.count()):
            item = lay.itemAt(i)
            child = item.layout() if item is not None else None
            if child is not None:
                layouts.append(child)
    return ""


def label_of(widget: QWidget) -> str:
    """The words a person reads beside ``widget``: a form's label, a label whose buddy it is, its tooltip, its
    placeholder (empty when there are none)."""
    found = _form_label(widget)
    if found:
        return found
    parent = widget.parentWidget()
    if parent is not None:
        for label in parent.findChildren(QLabel):
            if label.buddy() is widget and label.text():
                return _plain(label.text())
    if widget.toolTip():
        return _plain(widget.toolTip())
    if isinstance(widget, QLineEdit) and widget.placeholderText():
        return _plain(widget.placeholderText())
    return ""


def name(widget: QWidget) -> None:
    """Give ``widget`` the accessible name of its label, unless it has one."""
    if isinstance(widget, INPUTS) and not widget.accessibleName():
        found = label_of(widget)
        if found:
            widget.setAccessibleName(found)
    elif isinstance(widget, QAbstractButton) and not widget.accessibleName() and not widget.text():
        found = _plain(widget.toolTip())  # an icon-only button is read by its tooltip
        if found:
            widget.setAccessibleName(found)


def unnamed(root: QWidget) -> list[QWidget]:
    """The visible inputs and buttons under ``root`` a screen reader could not name."""
    out: list[QWidget] = []
    for w in root.findChildren(QWidget):
        if not w.isVisible():
            continue
        if (isinstance(w, INPUTS) and not isinstance(w, QHeaderView) and not w.accessibleName()) or (
            isinstance(w, QAbstractButton) and not (w.accessibleName() or w.text())
        ):
            out.append(w)
    return out


def name_all(root: QWidget) -> None:
    """Name every input and icon-only button under ``root`` (run when a view is built or its form changes)."""
    for w in root.findChildren(QWidget):
        name(w)
