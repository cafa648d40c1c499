"""What a child process capped by RLIMIT_AS needs so the cap measures dpdesk, not the machine.

Polars and glibc start a thread or an arena per core, each reserving address space of its own: on a
many-core CI machine the threads alone hit a 1 GiB cap ("jemalloc: background thread creation failed").
Two of each, as on the laptops dpdesk is measured on, keep a cap's meaning the same everywhere.
"""

from __future__ import annotations

import os

CAPPED_CHILD_ENV = {"POLARS_MAX_THREADS": "2", "RAYON_NUM_THREADS": "2", "MALLOC_ARENA_MAX": "2"}


def capped_env(**extra: str) -> dict[str, str]:
    """The environment for a capped child: this one's, with the thread counts pinned."""
    return {**os.environ, **CAPPED_CHILD_ENV, **extra}
