"""The content identities a dpdesk home keeps (LOCAL, never published): the home's secret, the cache of files seen
(their content key, sketch and column sketches, or the limit that refused them) and, per dataset, the contents of
its tables. :mod:`dpdesk.core.identity.recognition` reads them to say which dataset a file belongs to; the ledger records a
file's content for its dataset when the file's SHA-256 is linked to it (:func:`remember_key`). Files under
``<home>/identity/``: see :mod:`dpdesk.core.identity.recognition`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpdesk.core.common.errors import LedgerError
from dpdesk.core.common.fsio import locked as _locked
from dpdesk.core.common.fsio import write_atomic
from dpdesk.core.common.jsonin import HOME_FILE, read_json
from dpdesk.core.ledger import anchor
from dpdesk.core.ledger.entries import is_dataset_id
from dpdesk.core.loading.identity import (
    ColumnSketches,
    ContentIdentity,
    Sketch,
)
from dpdesk.i18n import _

if TYPE_CHECKING:
    pass

_SECRET_RE = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class CopyRules:
    """How a dpdesk home treats another file of a known dataset's rows: the one source that the resolution
    (:func:`dpdesk.core.identity.recognition.resolve`, :func:`dpdesk.services.common.refuse_near_copy`) follows and that the
    release report's methods section states (:func:`dpdesk.core.publish.report.guarantee_paragraphs`)."""

    #: a file of the same rows however saved (line ends, a byte-order mark, another format, another row order) is
    #: charged to the known dataset's ledger: it gets no budget of its own
    same_rows_share_ledger: bool = True
    #: a new table holding most of a known dataset's rows is refused until linked to it or declared new
    near_copies_refused: bool = True


COPY_RULES = CopyRules()


def _folder(home: Path) -> Path:
    return home / "identity"


def _restore_fix() -> str:
    return _(
        "Restore the folder {folder} from the backup of this dpdesk home (it must be backed up with the home). If "
        'it is lost for good, a privacy officer runs dpdesk ledger forget-identity --reason "...": re-saved '
        "copies of the known tables are then no longer recognised until each table's own file is opened again"
    )


def _identity_broken(home: Path, what: str) -> LedgerError:
    return LedgerError(
        _(
            "the content identities of this dpdesk home cannot be trusted: {what}. A re-saved copy of a known "
            "table would get a fresh budget, so nothing is read or released. {fix}"
        ).format(what=what, fix=_restore_fix().format(folder=_folder(home)))
    )


def _read_secret(home: Path) -> bytes | None:
    """The home's secret as stored; None when there is none; a named :class:`LedgerError` when it is damaged."""
    path = _folder(home) / "secret"
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        text = ""
    if _SECRET_RE.fullmatch(text) is None:
        raise _identity_broken(
            home, _("the identity secret {path} is damaged (not 64 hexadecimal digits)").format(path=path)
        )
    return bytes.fromhex(text)


def read_home_secret(home: Path) -> bytes | None:
    """The home's identity secret when it has one (never made here; a damaged one is refused, named)."""
    return _read_secret(home)


def secret_fingerprint(secret: bytes) -> str:
    """A keyed fingerprint of the home's secret (a hash of a constant under it; it does not reveal the secret),
    recorded in the register so that a deleted or replaced secret is seen."""
    return hashlib.blake2b(b"identity secret fingerprint", key=secret, person=b"dpdesk-idfp-v1").hexdigest()[
        :64
    ]


def check_identity(home: Path) -> bytes | None:
    """Check the home's identity store against what the register recorded; return the secret (None if none yet).

    Refused (:class:`LedgerError`, exit 3, named) when a dataset's register file records a content identity and
    the secret is missing, damaged or another one, or the dataset's ``identity/datasets/<id>.json`` is missing or
    holds fewer content keys than were recorded: each would let a re-saved copy of a known table start afresh.
    """
    secret = _read_secret(home)
    recorded = anchor.recorded_identities(home)
    if not recorded:
        return secret
    if secret is None:
        raise _identity_broken(
            home, _("the identity secret {path} was deleted").format(path=_folder(home) / "secret")
        )
    fingerprint = secret_fingerprint(secret)
    records = dataset_records(home)
    for dataset, (expected, count) in sorted(recorded.items()):
        if expected != fingerprint:
            raise _identity_broken(
                home,
                _("the identity secret {path} is not the one the register recorded (it was replaced)").format(
                    path=_folder(home) / "secret"
                ),
            )
        if len(records.get(dataset, {})) < count:
            raise _identity_broken(
                home,
                _("the recorded contents of dataset {dataset} ({path}) are missing or were cut").format(
                    dataset=dataset, path=_folder(home) / "datasets" / f"{dataset}.json"
                ),
            )
    return secret


def forget_identities(home: Path, reason: str) -> list[str]:
    """The officer's way out when the identity secret is lost for good: the register no longer expects it, the
    old secret, sketches and cache are moved aside (kept as evidence), and content identities start over.

    Returns the datasets whose content identity was forgotten. ``reason`` is written beside the evidence.
    """
    import time

    folder = _folder(home)
    done = anchor.forget_identities(home)
    if folder.exists():
        aside = home / f"identity.forgotten.{time.strftime('%Y%m%dT%H%M%S')}.{secrets.token_hex(4)}"
        folder.rename(aside)
        with contextlib.suppress(OSError):
            note = {
                "reason": reason,
                "datasets": done,
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            (aside / "forgotten.json").write_text(json.dumps(note, sort_keys=True) + "\n", encoding="utf-8")
    return done


def home_secret(home: Path) -> bytes:
    """The home's secret (made once, readable by its owner only); every process of a home shares it.

    Checked first (:func:`check_identity`): a secret the register expects is never made afresh."""
    folder = _folder(home)
    path = folder / "secret"
    found = check_identity(home)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".secret.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_hex(32).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if another process made it first: then its secret is the one
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    made = _read_secret(home)
    assert made is not None
    return made


def _read_json(path: Path) -> Any:
    try:
        return read_json(path.read_bytes(), HOME_FILE)
    except (OSError, ValueError):  # unreadable, not JSON, or past a limit of the JSON reader: as if missing
        return None


def columns_of(raw: Any) -> ColumnSketches | None:
    """Column sketches as recorded; None when absent, not computed (a repeated name) or unreadable."""
    try:
        return None if raw is None else ColumnSketches.from_json(raw)
    except (TypeError, KeyError, ValueError, AttributeError):
        return None


def _file_record(home: Path, sha256: str, scheme: int) -> Path:
    """Where a file's identity of a scheme is remembered (scheme 1's name is the one it always had)."""
    return _folder(home) / "files" / (f"{sha256}.json" if scheme == 1 else f"{sha256}.v{scheme}.json")


def cached_identity(home: Path, sha256: str, scheme: int = 1) -> ContentIdentity | None:
    """A file's identity of a scheme (:attr:`~dpdesk.core.loading.identity.Sketch.scheme`) as remembered by its
    bytes' SHA-256; None when unknown, unreadable, of another scheme, or written before column sketches or their
    marginals existed (computed once more, so that known tables get them)."""
    raw = _read_json(_file_record(home, sha256, scheme))
    try:
        if "columns" not in raw or (isinstance(raw["columns"], dict) and "marginals" not in raw["columns"]):
            return None  # written before column sketches or their marginals: computed once more
        ident = ContentIdentity(
            sha256, str(raw["content"]), Sketch.from_json(raw["sketch"]), columns_of(raw["columns"])
        )
    except (TypeError, KeyError, ValueError):
        return None
    return ident if ident.sketch.scheme == scheme else None


def cached_identities(home: Path, sha256: str) -> list[ContentIdentity]:
    """A file's remembered identities, scheme 2's first."""
    return [i for i in (cached_identity(home, sha256, 2), cached_identity(home, sha256, 1)) if i is not None]


def _seen_record(home: Path, path: Path) -> Path:
    name = hashlib.blake2b(str(path.resolve()).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    return _folder(home) / "seen" / f"{name}.json"


def _file_stat(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def remember_seen(home: Path, path: str | Path, sha256: str) -> None:
    """Remember that the file at ``path``, as it is now (inode, size, modification and change times), has these
    bytes: a later release skips computing an identity the home already has (:func:`seen_identified`). A hint,
    never a key: the release still hashes the bytes it loads and looks their identity up by that hash."""
    p = Path(path)
    try:
        record = _seen_record(home, p)
        record.parent.mkdir(parents=True, exist_ok=True)
        body = {"stat": _file_stat(p), "sha256": sha256}
        write_atomic(record, json.dumps(body).encode("utf-8"))
    except OSError:
        pass  # only a hint


def cluster_source_name(source: str | Path) -> str:
    """How a source only a cluster reads is named in the home's hints: a catalog table or a URL as written, a
    local path made absolute."""
    text = str(source)
    if text.startswith("table:") or "://" in text:
        return text
    return str(Path(text).resolve())


def _cluster_record(home: Path, source: str | Path, team: bool = False) -> Path:
    """Where the hint of ``source`` is kept: a team's (its identity keyed with a team's secret) apart from the home's
    own, so that a release in a team never overwrites the hint the home's own ledger needs once it leaves the team."""
    name = hashlib.blake2b(
        cluster_source_name(source).encode("utf-8", "surrogateescape"), digest_size=16
    ).hexdigest()
    return _folder(home) / ("cluster-team" if team else "cluster") / f"{name}.json"


def secret_tag(secret: bytes) -> str:
    """A tag naming an identity secret without giving it (a keyed hash of a fixed text): which secret a table's
    remembered identity was keyed with, so that an identity keyed with another is never taken for this one's."""
    return hashlib.blake2b(b"dpdesk identity secret tag", key=secret[:64], digest_size=16).hexdigest()


def remember_cluster_table(home: Path, source: str | Path, key: str, secret: bytes | None = None) -> None:
    """Remember the local key (:func:`~dpdesk.core.release.engines.spark.engine.cluster_key`) of the table a cluster
    last read at ``source``, whose identity the home now has: ``dpdesk budget``, ``dpdesk ledger``, ``ledger link``
    or ``declare-new --data SOURCE`` then find it without Spark. A hint of what was read last, never a key: a
    release reads the table again and names it by what it reads. ``secret``: the identity secret the table's
    identity was keyed with (a team's), kept as its :func:`secret_tag`."""
    try:
        record = _cluster_record(home, source, team=secret is not None)
        record.parent.mkdir(parents=True, exist_ok=True)
        body = {"source": cluster_source_name(source), "sha256": key}
        if secret is not None:
            body["secret"] = secret_tag(secret)
        write_atomic(record, json.dumps(body).encode("utf-8"))
    except OSError:
        pass  # only a hint


def _cluster_hint(home: Path, source: str | Path, team: bool = False) -> dict[str, Any] | None:
    try:
        raw = _read_json(_cluster_record(home, source, team))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("source") != cluster_source_name(source):
        return None
    key = raw.get("sha256")
    return raw if isinstance(key, str) and re.fullmatch(r"[0-9a-f]{64}", key) else None


def cluster_table_key(home: Path, source: str | Path, team: bool = False) -> str | None:
    """The local key of the table a cluster last read at ``source`` (:func:`remember_cluster_table`), if any: as a
    release in a team home left it (``team``), or as one on the home's own ledger left it."""
    hint = _cluster_hint(home, source, team)
    return None if hint is None else str(hint["sha256"])


def cluster_table_identity(home: Path, source: str | Path, secret: bytes) -> ContentIdentity | None:
    """The identity of the table a cluster last read at ``source``, as its release attempt in this home remembered
    it, when it was keyed with ``secret`` (:func:`remember_cluster_table`); None otherwise."""
    hint = _cluster_hint(home, source, team=True)
    if hint is None or hint.get("secret") != secret_tag(secret):
        return None
    return cached_identity(home, str(hint["sha256"]), 2)


def seen_identified(home: Path, path: str | Path) -> bool:
    """Whether the file at ``path`` is unchanged since it was remembered (:func:`remember_seen`) and its bytes'
    identities are cached as the home needs them (scheme 2's, and scheme 1's while some dataset needs it)."""
    p = Path(path)
    try:
        raw = _read_json(_seen_record(home, p))
        if not isinstance(raw, dict) or raw.get("stat") != _file_stat(p):
            return False
        sha = str(raw["sha256"])
    except (OSError, KeyError, TypeError):
        return False
    if cached_identity(home, sha, 2) is None:
        return False
    return cached_identity(home, sha, 1) is not None or not needs_scheme1(home)


def needs_scheme1(home: Path) -> bool:
    """Whether some dataset of the home has a table known by its scheme-1 content key only (recorded before scheme
    2): a new file's scheme-1 identity is then computed too, so that a re-saved copy of that table is still found.
    A dataset may own several tables (a linked one, say), and each gets its scheme-2 key only when that table is
    next released or opened: so this holds while a dataset has fewer scheme-2 keys than scheme-1 keys (while it
    does, every table recorded gets both; two scheme-1 keys that scheme 2 takes as one keep it True: only slower)."""
    for contents in dataset_records(home).values():
        schemes = [s.get("scheme", 1) if isinstance(s, dict) else 1 for s in contents.values()]
        if schemes.count(2) < schemes.count(1):
            return True
    return False


def refusal_of(home: Path, sha256: str) -> str | None:
    """The message a limit refused this file's content identity with, when one did (the cache)."""
    raw = _read_json(_folder(home) / "files" / f"{sha256}.refused.json")
    message = raw.get("refused") if isinstance(raw, dict) else None
    return message if isinstance(message, str) else None


def remember_refusal(home: Path, sha256: str, message: str) -> None:
    folder = _folder(home) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / f"{sha256}.refused.json", json.dumps({"refused": message}).encode("utf-8"))


def remember_file(home: Path, ident: ContentIdentity) -> None:
    folder = _folder(home) / "files"
    folder.mkdir(parents=True, exist_ok=True)
    body = {
        "content": ident.key,
        "sketch": ident.sketch.to_json(),
        "columns": None if ident.columns is None else ident.columns.to_json(),
    }
    write_atomic(_file_record(home, ident.sha256, ident.sketch.scheme), json.dumps(body).encode("utf-8"))


def content_records(home: Path) -> dict[str, dict[str, Any]]:
    """Each dataset's record as written by :func:`record_content` (``contents``, and ``columns`` when present)."""
    out: dict[str, dict[str, Any]] = {}
    folder = _folder(home) / "datasets"
    if not folder.is_dir():
        return out
    for p in sorted(folder.glob("ds-*.json")):
        raw = _read_json(p)
        if is_dataset_id(p.stem) and isinstance(raw, dict) and isinstance(raw.get("contents"), dict):
            out[p.stem] = raw
    return out


def dataset_records(home: Path) -> dict[str, dict[str, Any]]:
    """Each dataset's recorded contents: public id -> {content key: sketch as JSON}."""
    return {d: raw["contents"] for d, raw in content_records(home).items()}


def record_content(
    home: Path, dataset: str, content: str, sketch: Sketch, columns: ColumnSketches | None = None
) -> None:
    """Record a content key (and its sketch, and its column sketches when given) as one of a dataset's tables."""
    folder = _folder(home) / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(_folder(home) / "identity.lock"):
        path = folder / f"{dataset}.json"
        raw = _read_json(path)
        contents = raw["contents"] if isinstance(raw, dict) and isinstance(raw.get("contents"), dict) else {}
        by_content = raw.get("columns") if isinstance(raw, dict) else None
        by_content = by_content if isinstance(by_content, dict) else {}
        stale = columns is not None and (
            not isinstance(by_content.get(content), dict) or "marginals" not in by_content[content]
        )  # none recorded yet, or recorded before their marginals existed
        changed = content not in contents or stale
        if content not in contents:
            contents[content] = sketch.to_json()
        if columns is not None and stale:
            by_content[content] = columns.to_json()
        if changed:
            body = {"contents": contents, "columns": by_content}
            write_atomic(path, json.dumps(body).encode("utf-8"))
        secret = _read_secret(home)
        if secret is not None:  # then the register: a deleted file or another secret is seen from now on
            anchor.record_identity(home, dataset, secret_fingerprint(secret), len(contents))


def remember_key(home: Path, sha256: str, dataset: str) -> None:
    """The ledger's hook: a file's SHA-256 was just linked to a dataset; if the file's content is known (the
    cache), record it for that dataset, so that its re-saved copies find the same ledger from now on."""
    for cached in cached_identities(home, sha256):
        record_content(home, dataset, cached.key, cached.sketch, cached.columns)


def datasets_of_content(home: Path, content: str) -> list[str]:
    """Every dataset whose recorded tables include this content key, by public id (more than one only in a home
    where saves of one table were first released at once by a version before issue 24's fix, or after a merge,
    whose retired dataset keeps its record: :func:`dpdesk.core.identity.recognition.live_owners` tells them apart)."""
    return sorted(d for d, contents in dataset_records(home).items() if content in contents)


def dataset_of_content(home: Path, content: str) -> str | None:
    """The dataset whose tables include this content key (the earliest recorded if several), or None."""
    owners = [d for d, contents in dataset_records(home).items() if content in contents]
    if not owners:
        return None
    folder = _folder(home) / "datasets"
    return min(owners, key=lambda d: ((folder / f"{d}.json").stat().st_mtime_ns, d))
