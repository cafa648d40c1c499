"""A census-like table generator: the sample dpdesk ships, the benchmark's tables and test data.

Deterministic for a seed (numpy's generator: this is synthetic data, not a release).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

REGIONS = ("northeast", "midwest", "south", "west")
SEXES = ("female", "male")
OCCUPATIONS = (
    "manager",
    "professional",
    "technician",
    "sales",
    "clerical",
    "service",
    "farming",
    "construction",
    "production",
    "transport",
    "military",
    "health",
    "education",
    "arts",
    "other",
)
STATES = tuple(f"state_{i:02d}" for i in range(50))
COLUMNS = ("age", "sex", "education", "occupation", "hours", "wage", "region", "state", "weight")


def _zipf(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    p = 1.0 / np.arange(1, k + 1)
    return rng.choice(k, size=n, p=p / p.sum())


def census_columns(n: int, seed: int) -> dict[str, np.ndarray]:
    """Columns of an n-row census-like table (values as numpy arrays; categories as labels)."""
    rng = np.random.default_rng(seed)
    age = np.clip(rng.normal(42, 18, n), 16, 99).astype(np.int64)
    education = np.clip(rng.normal(13, 3, n), 0, 18).astype(np.int64)
    hours = np.clip(rng.normal(38, 12, n), 1, 99).astype(np.int64)
    wage = np.round(np.exp(rng.normal(7.2, 0.7, n)), 2)
    weight = np.round(rng.gamma(2.0, 150.0, n), 4)
    return {
        "age": age,
        "sex": np.array(SEXES)[rng.integers(0, 2, n)],
        "education": education,
        "occupation": np.array(OCCUPATIONS)[_zipf(rng, n, len(OCCUPATIONS))],
        "hours": hours,
        "wage": wage,
        "region": np.array(REGIONS)[_zipf(rng, n, len(REGIONS))],
        "state": np.array(STATES)[_zipf(rng, n, len(STATES))],
        "weight": weight,
    }


def write_census_csv(path: str | Path, n: int, seed: int = 20261122, block: int = 1_000_000) -> None:
    """Write an n-row census-like CSV in UTF-8, in blocks (each block seeded by [seed, block number])."""
    with Path(path).open("w", encoding="utf-8", newline="") as f:
        f.write(",".join(COLUMNS) + "\n")
        for b, start in enumerate(range(0, n, block)):
            m = min(block, n - start)
            cols = census_columns(m, seed * 1000 + b)
            lines = zip(*(cols[c].astype(str) for c in COLUMNS), strict=True)
            f.write("".join(",".join(row) + "\n" for row in lines))
