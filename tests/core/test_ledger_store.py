"""The store boundary's contract (:mod:`dpdesk.core.ledger.store`), checked against every store in real processes.

``STORES`` lists how to open each kind of store on a fresh place; a second store (the team's ledger in a database)
adds its line there and must pass the same tests. Each test names the promise it checks: an exclusive writer across
processes, durable appends (a process killed right after an append keeps it), nothing left of a failed append,
evidence never overwritten, a chain replaced in one step, the tail from the last checkpoint, the datasets listed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dpdesk.core.ledger.entries import GENESIS, entry_hash, new_dataset_id
from dpdesk.core.ledger.filestore import FileStore
from dpdesk.core.ledger.pgstore import PgStore
from dpdesk.core.ledger.store import ChainStore
from dpdesk.core.model.spec import canonical_json
from tests.team.conftest import team  # noqa: F401  (the team store's real server: pg_server is tests/conftest.py's)

ROOT = Path(__file__).resolve().parents[2]

#: (name, how to open the store on a fresh place, the code a child process runs to open the same store); the
#: team's store opens on a fresh team database of a real PostgreSQL server (``place`` holds its URL)
STORES: list[tuple[str, Callable[[Path], ChainStore], str]] = [
    (
        "files",
        lambda place: FileStore(place / "ledgers"),
        "from dpdesk.core.ledger.filestore import FileStore; store = FileStore(place / 'ledgers')",
    ),
    (
        "team",
        lambda place: PgStore((place / "url").read_text()),
        "from dpdesk.core.ledger.pgstore import PgStore; store = PgStore((place / 'url').read_text())",
    ),
]


class Opened:
    """A store on a fresh place, how to run code in a child process with the same store, and entries to append."""

    def __init__(
        self, store: ChainStore, child: Callable[[str], list[str]], place: Path, author: str
    ) -> None:
        self.store, self.child, self.place, self.author = store, child, place, author
        self._heads: dict[str, tuple[int, str]] = {}
        self._kinds: dict[str, list[str]] = {}

    def line(self, ds: str, kind: str = "spend") -> bytes:
        """The next entry of ``ds``'s chain, linked to the last one made (a database store checks the links)."""
        seq, prev = self._heads.get(ds, (0, GENESIS))
        settings = {
            "budget": {"epsilon": 1.0, "delta": 0.0},
            "accounting": {"method": "sequential"},
            "privacy_unit": {"max_rows_per_person": 1},
        }
        payload: dict[str, object] = {"files": []}
        if kind == "spend":  # a release that costs nothing, under the settings made first
            payload = {
                "release_id": f"r{seq + 1}",
                "costs": [],
                "delta_prime": None,
                "charged": {"epsilon": 0.0, "delta": 0.0},
                "method": "sequential",
            }
        elif kind == "settings":
            payload = {"settings": settings}
        elif kind == "checkpoint":  # what the entries before it add up to (a team's database checks it)
            payload = {
                "state": {
                    "seq": seq,
                    "hash": prev,
                    "settings": settings,
                    "governance_entry": None,
                    "spent": {
                        "releases": sum(1 for k in self._kinds.get(ds, []) if k == "spend"),
                        "sequential": {"epsilon": "0", "delta": "0"},
                        "advanced": {"epsilon": "0", "delta": 0.0},
                        "zcdp": {"rho_partials": []},
                        "budget_delta": 0.0,
                    },
                }
            }
        self._kinds.setdefault(ds, []).append(kind)
        stored = {
            "seq": seq + 1,
            "type": kind,
            "time": "2026-11-28T12:00:00+00:00",
            "dataset": ds,
            "prev": prev,
            "author": self.author,
            **payload,
        }
        stored["hash"] = entry_hash(stored)
        self._heads[ds] = (seq + 1, str(stored["hash"]))
        return (canonical_json(stored) + "\n").encode()


@pytest.fixture(params=STORES, ids=[s[0] for s in STORES])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    """A store on a fresh place, and how to run code in a child process with the same store as ``store``."""
    name, make, child_open = request.param
    (tmp_path / "ledgers").mkdir()
    author = "test"
    if name == "team":
        team = request.getfixturevalue("team")
        author = team.users["alice"]
        (tmp_path / "url").write_text(team.url(author))

    def child(code: str) -> list[str]:
        return [
            sys.executable,
            "-c",
            f"from pathlib import Path; place = Path({str(tmp_path)!r}); {child_open}\n{code}",
        ]

    store = make(tmp_path)
    yield Opened(store, child, tmp_path, author)
    if isinstance(store, PgStore):
        store.close()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _line(seq: int, kind: str = "spend") -> bytes:
    """A line for the file store's own tests (which keeps any bytes)."""
    return (json.dumps({"seq": seq, "type": kind}, separators=(",", ":")) + "\n").encode()


def test_what_is_appended_is_read_back_in_order(opened: Opened) -> None:
    store = opened.store
    ds = new_dataset_id()
    assert store.read(ds) == b"" and not store.exists(ds) and not store.has(ds)
    lines = [opened.line(ds, "settings"), opened.line(ds), opened.line(ds)]
    with store.locked(ds):
        for line in lines:
            store.append(ds, line)
    assert store.read(ds) == b"".join(lines)
    assert store.exists(ds) and store.has(ds) and store.datasets() == [ds]


def test_a_process_killed_right_after_an_append_keeps_it(opened: Opened) -> None:
    """Durable appends: the child appends, then is killed by SIGKILL before it can close or flush anything."""
    store = opened.store
    ds = new_dataset_id()
    one, two = opened.line(ds, "settings"), opened.line(ds)
    code = (
        f"import os, signal\nwith store.locked({ds!r}):\n"
        f"    store.append({ds!r}, {one!r})\n    store.append({ds!r}, {two!r})\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    r = subprocess.run(opened.child(code), env=_env(), capture_output=True, timeout=120, check=False)
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert store.read(ds) == one + two


def test_one_writer_at_a_time_across_processes(opened: Opened) -> None:
    """While this process holds a chain's lock, another process that asked for it (and said so) appends nothing;
    it appends once the lock is released. Without the lock, its line would come first (and a database store,
    which links every line to the head, would refuse it)."""
    store = opened.store
    ds = new_dataset_id()
    one, two = opened.line(ds, "settings"), opened.line(ds)
    asked = opened.place / "asked"
    code = f"from pathlib import Path\nPath({str(asked)!r}).write_text('x')\nwith store.locked({ds!r}):\n    store.append({ds!r}, {two!r})\n"
    with store.locked(ds):
        proc = subprocess.Popen(opened.child(code), env=_env())
        try:
            deadline = time.monotonic() + 120
            while not asked.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.02)
            assert asked.exists()
            time.sleep(
                0.5
            )  # time for a child that ignored the lock to append (this only makes such a bug likelier seen)
            store.append(ds, one)
        except BaseException:
            proc.kill()
            raise
    assert proc.wait(timeout=120) == 0
    assert store.read(ds) == one + two


def test_evidence_is_never_overwritten_by_other_evidence(opened: Opened) -> None:
    """A store whose chains can break (the files) keeps evidence; the team's, whose chains are checked as they are
    written, refuses to (nothing calls it for a team's chain)."""
    store = opened.store
    ds = new_dataset_id()
    if isinstance(store, PgStore):
        from dpdesk.core.ledger.team import TeamLedgerError

        with pytest.raises(TeamLedgerError):
            store.keep_evidence(ds, b"one\n", "broken", "20261128T120000")
        return
    first = store.keep_evidence(ds, b"one\n", "broken", "20261128T120000")
    second = store.keep_evidence(ds, b"two\n", "broken", "20261128T120000")  # the same second, other bytes
    again = store.keep_evidence(
        ds, b"one\n", "broken", "20261128T120000"
    )  # the same bytes: the same evidence
    assert first != second and again == first
    folder = Path(store.label(ds)).parent
    assert (folder / first).read_bytes() == b"one\n" and (folder / second).read_bytes() == b"two\n"


def test_a_chain_is_replaced_in_one_step(opened: Opened) -> None:
    """The files' chain is replaced in one step; a team's chain is append-only and never replaced."""
    store = opened.store
    ds = new_dataset_id()
    one, two = opened.line(ds, "settings"), opened.line(ds)
    with store.locked(ds):
        store.append(ds, one)
        store.append(ds, two)
        if isinstance(store, PgStore):
            from dpdesk.core.ledger.team import TeamLedgerError

            with pytest.raises(TeamLedgerError):
                store.replace(ds, one)
            assert store.read(ds) == one + two
            return
        store.replace(ds, one)
    assert store.read(ds) == one


def test_the_tail_is_read_from_the_last_checkpoint(opened: Opened) -> None:
    store = opened.store
    ds = new_dataset_id()
    kinds = ["settings", "checkpoint", "spend", "checkpoint", "spend", "spend"]
    lines = [opened.line(ds, kind) for kind in kinds]
    with store.locked(ds):
        for line in lines:
            store.append(ds, line)
    got = store.read_tail(ds)
    assert got is not None
    tail, offset = got
    assert tail == [line.rstrip(b"\n") for line in lines[3:]]
    assert store.read(ds)[offset:].split(b"\n")[0] == tail[0]


def test_only_datasets_are_listed(opened: Opened) -> None:
    store = opened.store
    a, b = sorted(new_dataset_id() for _ in range(2))
    for ds in (b, a):
        with store.locked(ds):
            store.append(ds, opened.line(ds, "settings"))
    if not isinstance(store, PgStore):
        store.keep_evidence(a, b"old\n", "broken", "20261128T120000")
    assert store.datasets() == [a, b]


@pytest.mark.skipif(sys.platform == "win32", reason="file size limits are POSIX")
def test_a_failed_append_leaves_nothing_of_its_line(tmp_path: Path) -> None:
    """The file store: a write cut short (the file size limit, as a full disk would) is cut off again, so the
    chain still ends with a whole line, and the error reaches the caller."""
    store = FileStore(tmp_path)
    ds = new_dataset_id()
    with store.locked(ds):
        store.append(ds, _line(1))
    size = len(store.read(ds))
    code = (
        "import resource, signal\nfrom pathlib import Path\nfrom dpdesk.core.ledger.filestore import FileStore\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 10}, {size + 10}))\n"
        f"store = FileStore(Path({str(tmp_path)!r}))\n"
        "try:\n"
        f'    store.append({ds!r}, b\'{{"seq":2,"type":"spend","padding":"\' + b\'x\' * 200 + b\'"}}\\n\')\n'
        "except OSError as exc:\n    print('refused', exc.errno)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0 and r.stdout.startswith("refused"), r.stdout + r.stderr
    assert store.read(ds) == _line(1)


def test_the_file_store_syncs_each_append_and_a_new_chain_s_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Durability of the file store, which a killed process cannot show (the page cache outlives it): every append
    fsyncs the chain's file after writing it, and the first one the folder too (its new name)."""
    store = FileStore(tmp_path)
    ds = new_dataset_id()
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with store.locked(ds):
        store.append(ds, _line(1))
        assert synced == [str(store.path(ds)), str(tmp_path)]
        synced.clear()
        store.append(ds, _line(2))
    assert synced == [str(store.path(ds))]


def test_the_file_store_replaces_a_chain_by_a_new_file_never_in_place(tmp_path: Path) -> None:
    """A chain is replaced by renaming a complete new file over it: the old file's bytes are never truncated or
    rewritten (a crash in the middle of an in-place rewrite would leave neither chain)."""
    store = FileStore(tmp_path)
    ds = new_dataset_id()
    with store.locked(ds):
        store.append(ds, _line(1))
        store.append(ds, _line(2))
        os.link(store.path(ds), tmp_path / "old-inode")
        store.replace(ds, _line(1, "acknowledge"))
    assert (tmp_path / "old-inode").read_bytes() == _line(1) + _line(2)
    assert store.read(ds) == _line(1, "acknowledge")


def test_a_failed_sync_leaves_nothing_of_the_line_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contract says nothing of a failed append is left: also when the whole line was written and only its
    fsync failed (the caller is told the release was not recorded, so the chain must not hold it)."""
    store = FileStore(tmp_path)
    ds = new_dataset_id()
    with store.locked(ds):
        store.append(ds, _line(1))
    real_fsync = os.fsync
    calls = {"n": 0}

    def fsync(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with store.locked(ds), pytest.raises(OSError):
        store.append(ds, _line(2))
    assert store.read(ds) == _line(1)


@pytest.mark.parametrize("hostile", ["../../outside/evil", "", "ds-zz", "ds-" + "0" * 31 + "/x"])
def test_a_ledger_is_opened_by_a_public_id_only(tmp_path: Path, hostile: str) -> None:
    from dpdesk.core.common.errors import LedgerError
    from dpdesk.core.ledger.book import Ledger

    with pytest.raises(LedgerError, match="not a dataset id"):
        Ledger.of(tmp_path, hostile)
    assert list(tmp_path.iterdir()) == []
