"""What several commands read from their arguments: a plan (with its codebook), a data file's dataset, stated
costs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

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
