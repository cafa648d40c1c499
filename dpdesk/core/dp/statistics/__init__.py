"""The registry of statistics: one module per statistic, found in this package.

Every module here other than ``base`` and ``kit`` (what a statistic may import) defines ``STATISTIC``, an instance of a
:class:`~dpdesk.core.dp.statistics.base.Statistic` subclass; :data:`REGISTRY` holds them in a stable order
(their ``order``, then their name). Adding a statistic is adding a module (and its tests and
translations): plan validation, the designs, the exact aggregates, the released rows, the previews and
the query form all read it from here.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator
from enum import StrEnum
from types import ModuleType

from dpdesk.core.dp.statistics.base import Statistic
from dpdesk.core.model.spec import install_registry


def _discover() -> dict[str, Statistic]:
    found: list[Statistic] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name in ("base", "kit") or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        stat = getattr(module, "STATISTIC", None)
        if not isinstance(stat, Statistic):
            raise TypeError(f"{module.__name__} defines no STATISTIC")
        found.append(stat)
    found.sort(key=lambda s: (s.order, s.name))
    names = [s.name for s in found]
    if len(set(names)) != len(names):
        raise TypeError(f"two statistics share a name: {names}")
    return {s.name: s for s in found}


#: Every statistic by its plan word, in a stable order.
REGISTRY: dict[str, Statistic] = _discover()

#: The plan's statistic words (a str enum: compares and serialises as the plain word).
StatisticName = StrEnum(  # type: ignore[misc]  # built from the registry, so mypy cannot see its members
    "StatisticName", [(name.upper(), name) for name in REGISTRY], module=__name__
)


def get(name: str) -> Statistic:
    """The statistic of this plan word (KeyError if there is none)."""
    return REGISTRY[name]


def names() -> tuple[str, ...]:
    """The plan's statistic words, in the registry's order."""
    return tuple(REGISTRY)


def statistics() -> Iterator[Statistic]:
    """Every statistic, in the registry's order."""
    return iter(REGISTRY.values())


def _this_registry() -> ModuleType:
    return sys.modules[__name__]


#: The query types (:mod:`dpdesk.core.model.spec`, below this package) validate a query against its statistic here.
install_registry(_this_registry)

__all__ = ["REGISTRY", "Statistic", "StatisticName", "get", "names", "statistics"]
