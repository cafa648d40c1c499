"""A plan without writing JSON: a template from a table's header (:func:`new_plan`), and a plan file's problems
in plain words (:func:`check_plan_file`). Neither reads a value of the table: only its header's names."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpdesk.core.common.errors import InputError, PlanError, UsageError
from dpdesk.core.loading.header import Header, read_header
from dpdesk.i18n import _

#: Encodings the loader may guess differently from the header alone (it looks at the first rows too).
_AMBIGUOUS = ("cp1252", "gb18030")


@dataclass(frozen=True)
class NewPlanRequest:
    """A template for the table ``data``, written to ``out`` (default: beside the table, ``<stem>_plan.json``);
    an existing file is replaced only with ``force``, and never a file under ``home`` or the table itself."""

    data: Path
    home: Path
    out: Path | None = None
    force: bool = False
    #: the budget's epsilon, when the user states it (otherwise left to fill)
    epsilon: float | None = None
    encoding: str | None = None
    delimiter: str | None = None
    #: the columns' types where a database declares them (``int``, ``float``): public schema, no value read
    types: dict[str, str] | None = None


@dataclass(frozen=True)
class NewPlan:
    """The template written: where, the columns it declares, the header's names it left out (empty or
    repeated), and the header's encoding when the user should give it to ``release`` (else empty)."""

    path: Path
    columns: tuple[str, ...]
    left_out: tuple[str, ...]
    epsilon_to_fill: bool
    encoding_to_give: str = ""


def default_plan_path(data: Path) -> Path:
    """Where ``plan new`` writes by default: beside the table, named after it (``survey.csv`` → ``survey_plan.json``)."""
    return data.with_name(f"{data.stem}_plan.json")


def new_plan(request: NewPlanRequest) -> NewPlan:
    """Write a plan template declaring the table's columns, each with its type, bounds and categories to fill."""
    from dpdesk.core.model.spec import Budget
    from dpdesk.core.plan.template import plan_template, template_columns, template_text
    from dpdesk.core.publish.outputs import check_out_file

    if request.epsilon is not None:
        Budget(request.epsilon)  # refused here (budget.epsilon: ...) rather than written into the template
    out = request.out if request.out is not None else default_plan_path(request.data)
    force = request.force  # an existing file is replaced only when the user said so
    check_out_file(out, force=force, home=request.home, reads=(request.data,))
    header = read_header(request.data, encoding=request.encoding, delimiter=request.delimiter)
    kept, left = template_columns(header.names)
    if not kept:
        raise InputError(str(request.data), _("the header names no column"), line=1)
    template = plan_template(kept, title=request.data.stem, epsilon=request.epsilon, types=request.types)
    _write(out, template_text(template) + "\n", force=force)
    ambiguous = request.encoding is None and header.encoding in _AMBIGUOUS
    return NewPlan(out, kept, left, request.epsilon is None, header.encoding if ambiguous else "")


def _write(out: Path, text: str, *, force: bool) -> None:
    """Write the template; without ``force`` only as a new file (never over one made meanwhile)."""
    from dpdesk.core.common.fsio import write_atomic

    data = text.encode("utf-8")
    try:
        if force:
            write_atomic(out, data)
            return
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except FileExistsError:
        raise UsageError(
            _("{path} already exists; choose another name, or replace it with --force").format(path=out)
        ) from None
    except OSError as exc:
        raise UsageError(_("cannot write {path}: {why}").format(path=out, why=exc.strerror or exc)) from None


@dataclass(frozen=True)
class PlanCheckRequest:
    """Check the plan file ``plan`` (its category lists filled from ``codebook`` first, as a release would); with
    ``data``, also that the table's header has the columns it declares."""

    plan: Path
    data: Path | None = None
    #: a codebook filling category lists, as ``release --codebook`` reads it
    codebook: Path | None = None
    encoding: str | None = None
    delimiter: str | None = None


@dataclass(frozen=True)
class PlanFindings:
    """Every problem of the plan, each a whole line in the user's language (where, what, and the fix), in plan
    order, then the header's; the plan's numbers of columns and queries (0 when unreadable)."""

    problems: tuple[str, ...]
    columns: int = 0
    queries: int = 0


def check_plan_file(request: PlanCheckRequest) -> PlanFindings:
    """The plan's problems as the app lists them (the plan reader's), and with ``data`` the columns its header
    lacks; no value of the table is read."""
    from dpdesk.core.common import jsonin
    from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, read_small_file
    from dpdesk.core.plan.reader import apply_codebook, check_plan, parse_plan_text, read_codebook

    source = str(request.plan)
    try:
        raw = read_small_file(request.plan, MAX_PLAN_BYTES)
    except OSError as exc:
        raise UsageError(
            _("cannot read {path}: {why}").format(path=source, why=exc.strerror or exc)
        ) from None
    try:
        data = jsonin.read_json(raw, jsonin.PLAN)
    except jsonin.JsonInputError:
        try:
            parse_plan_text(raw, source=source)  # the reader's own words for JSON it cannot read
        except PlanError as exc:
            return PlanFindings((str(exc),))
        raise  # pragma: no cover - the reader refuses what read_json refused
    if request.codebook is not None and isinstance(data, dict):
        data = apply_codebook(data, read_codebook(request.codebook))
    problems = [str(p) for p in check_plan(data).problems]
    if request.data is not None:
        header = read_header(request.data, encoding=request.encoding, delimiter=request.delimiter)
        problems += [str(p) for p in _header_problems(data, header)]
    columns = data.get("columns") if isinstance(data, dict) else None
    queries = data.get("queries") if isinstance(data, dict) else None
    return PlanFindings(
        tuple(problems),
        len(columns) if isinstance(columns, dict) else 0,
        len(queries) if isinstance(queries, list) else 0,
    )


def _header_problems(data: Any, header: Header) -> list[PlanError]:
    """Each declared column (and the id column) the header lacks or repeats, with the closest header name."""
    from dpdesk.core.model.spec import did_you_mean, quoted

    if not isinstance(data, dict):
        return []
    wanted: list[tuple[str, str]] = []
    columns = data.get("columns")
    if isinstance(columns, dict):
        wanted += [(f"columns.{n}", n) for n in columns if isinstance(n, str) and n.strip()]
    unit = data.get("privacy_unit")
    id_column = unit.get("id_column") if isinstance(unit, dict) else None
    if isinstance(id_column, str) and id_column.strip():
        wanted.append(("privacy_unit.id_column", id_column))
    file = Path(header.path).name
    out: list[PlanError] = []
    for key, name in wanted:
        n = header.names.count(name)
        if n == 0:
            message = (
                _("id_column {name} is not in the header of {file}").format(name=quoted(name), file=file)
                if key == "privacy_unit.id_column"
                else _("not in the header of {file}").format(file=file)
            )
            out.append(PlanError(key, message, hint=did_you_mean(name, header.names)))
        elif n > 1:
            out.append(
                PlanError(
                    key,
                    _(
                        "{file}'s header names {name} {n} times: rename the columns so that each name is once"
                    ).format(file=file, name=quoted(name), n=n),
                )
            )
    return out
