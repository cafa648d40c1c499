"""What several commands read from their arguments: a plan (with its codebook), a data file's dataset, stated
costs."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dpdesk.core.common.dataurl import is_database_url
from dpdesk.core.common.errors import UsageError
from dpdesk.core.common.home import dpdesk_home
from dpdesk.core.common.smallfile import MAX_PLAN_BYTES, read_small_file
from dpdesk.core.common.text import shown
from dpdesk.core.model.spec import Plan
from dpdesk.core.plan.reader import apply_codebook, parse_plan, parse_plan_text, read_codebook
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.carryover import StatedCost
    from dpdesk.services.common import Dataset


def read_plan(path: str, codebook: str | None) -> Plan:
    from dpdesk.core.common.jsonin import PLAN, JsonInputError, read_json
    from dpdesk.core.plan.reader import load_plan

    if codebook is None:
        return load_plan(path)
    try:
        raw = read_small_file(path, MAX_PLAN_BYTES)
        data = read_json(raw, PLAN)
    except OSError:
        return load_plan(path)  # its precise message ("cannot read PATH: why"), read through the same reader
    except JsonInputError:
        return parse_plan_text(raw, source=path)  # let the ordinary reader produce its precise message
    return parse_plan(apply_codebook(data, read_codebook(codebook)))


def dataset_of(data: str) -> Dataset:
    """The dataset of a data file, under the dpdesk home (its SHA-256 names its ledger)."""
    from dpdesk.services.common import Dataset

    return Dataset(dpdesk_home(), data)


def stated_costs(costs: Sequence[str], costs_file: str | None) -> tuple[StatedCost, ...]:
    """The stated costs of ``--cost`` options and a ``--costs`` file."""
    from dpdesk.core.ledger.carryover import parse_stated_cost, stated_costs_from_json

    stated = [parse_stated_cost(c) for c in costs]
    if costs_file is not None:
        try:
            stated += stated_costs_from_json(read_small_file(costs_file, MAX_PLAN_BYTES))
        except OSError as exc:
            raise UsageError(
                _("cannot read {path}: {err}").format(path=shown(costs_file), err=exc.strerror or exc)
            ) from None
    return tuple(stated)


def with_database_data(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """The command, with a ``--data`` that names a table in PostgreSQL (``postgresql://...?table=...``) read into
    a private CSV file for the command's run (removed after it; ``plan new`` reads the header alone): every command
    then reads it as a CSV file. ``simulate`` refuses ``--data`` whatever it names."""

    def run(args: argparse.Namespace) -> int:
        data = getattr(args, "data", None)
        if args.command == "simulate" or not isinstance(data, str) or not is_database_url(data):
            return handler(args)
        from pathlib import Path

        from dpdesk.services.database import data_file, declared_types, source_of

        source = source_of(data)
        assert source is not None
        args.data_label = (
            data  # what messages name (no password: refused); the private copy is gone after the command
        )
        header_only = args.command == "plan" and getattr(args, "plan_verb", None) == "new"
        if header_only:
            args.types = declared_types(source)
            if not getattr(args, "out", None):  # beside the private copy would be removed with it
                args.out = str(Path.cwd() / f"{Path(source.file_name).stem}_plan.json")
        with data_file(data, header_only=header_only) as path:
            args.data = str(path)
            return handler(args)

    return run
