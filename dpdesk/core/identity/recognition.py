"""Which dataset a data file belongs to: by its bytes' SHA-256, by its content, or by resemblance.

The ledger finds a dataset by the SHA-256 of its file (``ledgers/keys/<sha256>``). This module adds the content
identity (:mod:`dpdesk.core.loading.identity`), so that the same rows re-saved in another form keep their
ledger, and a resemblance check, so that a table holding most of a known dataset's rows (or most of whose rows
one holds) is recognised. Everything here is LOCAL to the dpdesk home and never published: the secret, content
keys, sketches and overlap estimates are all functions of private rows.

Files under ``<home>/identity/``:

* ``secret``: 32 random bytes (hex) keying every row hash and content key of this home, made once. Back it up
  with the home: without it a re-saved copy is no longer recognised by content (the bytes' keys still work);
* ``files/<sha256>.json``: a file seen before, its content key, sketch and column sketches, so that its content
  identity is computed once per distinct file (the cache; a record written before column sketches existed is
  computed once more, so that known tables get them); ``files/<sha256>.refused.json``: the message of a stated
  limit that refused a file's content identity (the same bytes are refused at once);
* ``datasets/<public id>.json``: the content keys and sketches of a dataset's tables (``contents``), and their
  column sketches (``columns``, by content key; older records without them keep working).

**One column changed.** A table that differs from a known one in exactly one column (dropped, added, renamed,
or its values edited) is recognised by its column sketches (:class:`~dpdesk.core.loading.identity.ColumnSketches`):
the rows of both without that column are compared, exactly by their multiset key (whatever the columns), and
by their sketches where those rows still nearly identify the table's rows
(:func:`~dpdesk.core.loading.identity.identifying`; a coarse projection would match any table of the same
schema). Two or more columns changed, or the one identifying column left out of a table with many equal rows
otherwise, are not recognised (docs/ledger.md, SECURITY.md).

:func:`resolve` is what the services call: (a) a file whose SHA-256 has a ledger opens it as before (its content
is recorded for its dataset the first time); (b) an unknown file whose content key is a known dataset's gets that
dataset (its SHA-256 becomes another local key of it); (c) otherwise the file is new, and the datasets it
resembles are listed for the caller to show.

A new table that resembles a known dataset never starts a fresh budget on its own (:class:`NearCopy`, exit 3):
the curator links it to that dataset's ledger (a ``link`` entry there; its key and content become that
dataset's), or declares it a new dataset (a ``declare_new`` entry in the known ledger, with the officer's
approval when governed, and a ``declared_new`` entry opening the new one). The new dataset's public name is
fixed before the approval is asked for (:func:`pending_dataset`), so that the officer can sign it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dpdesk.core.common.errors import InputError, LedgerError, LimitError, UsageError
from dpdesk.core.common.fsio import locked as _locked
from dpdesk.core.common.fsio import write_atomic
from dpdesk.core.common.progress import NULL_PROGRESS, Progress
from dpdesk.core.ledger.book import Ledger, link_key, relink_key
from dpdesk.core.ledger.contents import (
    COPY_RULES,
    cached_identities,
    cached_identity,
    check_identity,
    cluster_table_identity,
    columns_of,
    content_records,
    dataset_of_content,
    dataset_records,
    datasets_of_content,
    home_secret,
    needs_scheme1,
    read_home_secret,
    record_content,
    refusal_of,
    remember_file,
    remember_refusal,
    remember_seen,
    seen_identified,
)
from dpdesk.core.ledger.entries import is_dataset_id
from dpdesk.core.ledger.pgschema import MAX_SKETCH_BYTES
from dpdesk.core.loading.identity import (
    COLUMN_SKETCH_K,
    ColumnSketches,
    ContentIdentity,
    Projection,
    Sketch,
    content_identity,
    identifying,
    overlap,
)
from dpdesk.core.loading.typed_identity import content_identity2
from dpdesk.i18n import _

if TYPE_CHECKING:
    from dpdesk.core.ledger.budget import HistorySpend
    from dpdesk.core.ledger.pgstore import PgStore

#: A known dataset is listed as resembling a table when either estimated share is above this.
RESEMBLANCE_THRESHOLD = 0.5


@dataclass(frozen=True)
class Resemblance:
    """A known dataset that a table resembles (local estimates, never published).

    ``contained``: the estimated share of the known dataset's distinct rows that the table holds; ``found``:
    the estimated share of the table's distinct rows found in the known dataset.
    """

    dataset: str
    contained: float
    found: float
    #: what the known dataset's ledger says it spent (the curator's own ledger, read here; shown on the screen
    #: only, like the shares); None when it holds no settings yet or ``ledger_broken``
    spent: HistorySpend | None = None
    #: the known dataset's ledger does not verify (so what it spent cannot be read)
    ledger_broken: bool = False
    #: the column(s) the rows were compared without (one column dropped, added, renamed or edited); () for
    #: whole rows
    changed: tuple[str, ...] = ()
    #: recognised by its columns' values (:func:`same_columns`: columns kept, or headers and labels renamed);
    #: ``changed`` then names the columns only one of the tables has
    marginal: bool = False


@dataclass(frozen=True)
class Resolution:
    """Which dataset a file belongs to: ``how`` is ``file`` (its bytes are known), ``content`` (its content is
    a known dataset's) or ``new``; ``dataset`` is the public id (None when new); ``resembles`` lists the known
    datasets a new table resembles, most similar first; ``ledger`` is the dataset's ledger as opened (it holds
    the migration notice when opening it migrated an old-format ledger just now)."""

    sha256: str
    dataset: str | None
    how: Literal["file", "content", "new"]
    ledger: Ledger
    resembles: tuple[Resemblance, ...] = field(default=())


class NearCopy(LedgerError):
    """A new table resembles a known dataset: no fresh budget until it is linked or declared new (exit 3).

    The message (for the curator's screen only: it holds local estimates) names the dataset, the estimated
    shares and the two ways on; ``resolution`` is what :func:`resolve` found."""

    def __init__(self, resolution: Resolution) -> None:
        super().__init__(near_copy_message(resolution))
        self.resolution = resolution


def near_copy_message(resolution: Resolution) -> str:
    """Why a near-copy is refused and the two ways on (screen only: the shares are local estimates)."""
    near = resolution.resembles[0]
    return _(
        "this table is new to dpdesk but resembles dataset {dataset}: it holds about {contained} of that "
        "dataset's rows, and about {found} of its own rows are in it (local estimates, shown here only). {spent} "
        "It does not get a fresh budget on its own. Either charge it to that dataset's ledger: dpdesk ledger link "
        "--data FILE --to {dataset}; or, as the privacy officer, declare it a new dataset: dpdesk ledger declare-new "
        '--data FILE --resembles {dataset} --reason "..." (with --approval FILE when the dataset is governed)'
    ).format(
        dataset=near.dataset,
        contained=f"{near.contained:.0%}",
        found=f"{near.found:.0%}",
        spent=" ".join(filter(None, (compared_sentence(near), spent_sentence(near)))),
    )


def compared_sentence(near: Resemblance) -> str:
    """Which column the shares leave out when the tables differ in one column (empty for whole rows)."""
    if near.marginal:
        sentence = _(
            "Each column of the smaller of the two tables holds exactly the values of one of the other's columns, "
            "in as many rows (columns left out, or headers and category labels renamed), so its statistics "
            "would be that dataset's."
        )
        if not near.changed:
            return sentence
        return (
            sentence
            + " "
            + _("Only one of the two tables has the column(s) {columns}.").format(
                columns=_(" and ").join(f'"{c}"' for c in near.changed)
            )
        )
    if not near.changed:
        return ""
    return _(
        "These shares compare the rows without the column {columns}, where the two tables differ (a column "
        "dropped, added, renamed or edited)."
    ).format(columns=_(" and ").join(f'"{c}"' for c in near.changed))


def spent_sentence(near: Resemblance) -> str:
    """How much of the resembled dataset was spent, in one sentence (from the curator's own ledger)."""
    if near.ledger_broken:
        return _("That dataset's ledger does not verify, so what it spent cannot be read.")
    h = near.spent
    if h is None or h.releases == 0:
        return _("Nothing has been released from that dataset yet.")
    return _(
        "That dataset has spent epsilon {spent} of its budget of {budget} in {n} release(s) ({method} accounting)."
    ).format(spent=f"{h.spent_epsilon:.6g}", budget=f"{h.budget.epsilon:.6g}", n=h.releases, method=h.method)


def spent_by(home: Path, dataset: str) -> tuple[HistorySpend | None, bool]:
    """What a known dataset's ledger says it spent, and whether that ledger is broken (read as every command reads
    it; nothing is written)."""
    from dpdesk.core.ledger.budget import spent_of

    if not is_dataset_id(dataset):
        return None, True
    try:
        state = Ledger.of(home, dataset).read()
    except LedgerError:
        return None, True
    return spent_of(state), False


def pending_dataset(home: Path, sha256: str) -> str:
    """The public name a near-copy will get if it is declared new: made once per file and kept
    (``<home>/ledgers/pending/<sha256>``, local), so that an officer's approval can name it before it exists."""
    from dpdesk.core.ledger.entries import new_dataset_id

    folder = home / "ledgers" / "pending"
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(home / "ledgers" / "keys.lock"):
        path = folder / sha256
        with contextlib.suppress(OSError, UnicodeDecodeError):
            known = path.read_text(encoding="ascii").strip()
            if is_dataset_id(known):
                return known
        made = new_dataset_id()
        write_atomic(path, made.encode("ascii"))
        return made


@dataclass(frozen=True)
class Match:
    """How a table compares with one of a known dataset's tables: the estimated shares (as in
    :class:`Resemblance`), the column(s) left out, and whether the rows compared are the same multiset exactly."""

    contained: float
    found: float
    changed: tuple[str, ...] = ()
    exact: bool = False
    marginal: bool = False


def _one_column_pairs(
    known: ColumnSketches, new: ColumnSketches
) -> list[tuple[Projection, Projection, tuple[str, ...]]]:
    """The projections to compare when the two headers differ in at most one column: (known's, new's, the
    column(s) left out). Dropped: the new table's whole rows against the known's without that column; added:
    the new table's without it against the known's whole rows; renamed: each without its own name; the same
    header: each column left out of both (its values edited)."""
    k, t = set(known.columns), set(new.columns)
    gone, added = sorted(k - t), sorted(t - k)
    if not gone and not added:
        return [(known.left_out[c], new.left_out[c], (c,)) for c in known.columns]
    if len(gone) == 1 and not added:
        return [(known.left_out[gone[0]], new.whole, (gone[0],))]
    if len(added) == 1 and not gone:
        return [(known.whole, new.left_out[added[0]], (added[0],))]
    if len(gone) == 1 and len(added) == 1:
        return [(known.left_out[gone[0]], new.left_out[added[0]], (gone[0], added[0]))]
    return []


def _matched(small: ColumnSketches, large: ColumnSketches) -> dict[str, str]:
    """As many of ``small``'s columns as can be, each paired with a distinct column of ``large`` whose values are
    the same multiset, or whose distinct values have the same counts (labels renamed): a maximum bipartite
    matching, by augmenting paths (the tables have few columns)."""

    def same(a: str, b: str) -> bool:
        x, y = small.marginals[a], large.marginals[b]
        return x.values == y.values or (x.profile is not None and x.profile == y.profile)

    edges = {a: [b for b in large.columns if same(a, b)] for a in small.columns}
    owner: dict[str, str] = {}  # large's column -> small's

    def augment(a: str, seen: set[str]) -> bool:
        for b in edges[a]:
            if b not in seen:
                seen.add(b)
                if b not in owner or augment(owner[b], seen):
                    owner[b] = a
                    return True
        return False

    for a in small.columns:
        augment(a, set())
    return {a: b for b, a in owner.items()}


def same_columns(
    known: Sketch, known_columns: ColumnSketches, sketch: Sketch, columns: ColumnSketches
) -> tuple[str, ...] | None:
    """Whether one table's columns are the other's, row-aligned in count: the same number of rows, and each
    column of the table with fewer columns holds exactly the values of a distinct column of the other (the same
    multiset of values, or, its labels renamed, the same counts of its distinct values), where that table's rows
    still nearly identify them (:func:`identifying`: a coarse table of a few categories would match any table
    of its schema). One column of its own (added, or its values edited) is allowed when the others still nearly
    identify its rows. A projection of a known table onto some of its columns, and a table whose headers and
    category labels were renamed consistently (translated), are such tables; so is any table whose every
    one-column statistic would be the known table's. Returns the columns not paired, of either table (None when
    they are not such tables)."""
    if (
        not known_columns.marginals
        or not columns.marginals
        or known.rows is None
        or known.rows != sketch.rows
        or known.rows == 0
    ):
        return None
    small, large, small_rows = (
        (columns, known_columns, sketch)
        if len(columns.columns) <= len(known_columns.columns)
        else (known_columns, columns, known)
    )
    pairs = _matched(small, large)
    unmatched = [c for c in small.columns if c not in pairs]
    if not pairs or len(unmatched) > 1:
        return None
    if unmatched:  # a column of its own too (added or edited): the others must still identify its rows
        if len(pairs) < 2:  # one shared column beside it is a shared key (days, countries), not a copy
            return None
        if small.left_out[unmatched[0]].sketch is None:
            return None
    elif not identifying(small_rows):
        return None
    return tuple(sorted({*unmatched, *(c for c in large.columns if c not in set(pairs.values()))}))


def compare(
    known: Sketch,
    known_columns: ColumnSketches | None,
    sketch: Sketch,
    columns: ColumnSketches | None,
    *,
    public: bool = False,
) -> Match | None:
    """The closest comparison of a table with a known table: whole rows by their sketches, then with one column
    left out (:func:`_one_column_pairs`): exactly by the projections' keys, and by their sketches where both are
    kept (both nearly identify their rows); when none of these resembles it, column by column
    (:func:`same_columns`: columns kept, or headers and labels renamed). ``public``: the check of a file offered as public, where whole rows
    are compared by their sketches only when the file's rows nearly identify it (an honest sample of a coarse
    schema shares most of its few distinct rows with any other). None when nothing is comparable."""
    if known.scheme != sketch.scheme:
        return None  # row hashes of two schemes are not comparable
    best: Match | None = None
    if not public or identifying(sketch):
        best = Match(*overlap(known, sketch))
    if known_columns is None or columns is None:
        return best
    for kp, tp, changed in _one_column_pairs(known_columns, columns):
        if kp.key == tp.key:
            found = Match(1.0, 1.0, changed, exact=True)
        elif kp.sketch is not None and tp.sketch is not None:
            found = Match(*overlap(kp.sketch, tp.sketch), changed)
        else:
            continue
        if best is None or max(found.contained, found.found) > max(best.contained, best.found):
            best = found
    if best is None or max(best.contained, best.found) <= RESEMBLANCE_THRESHOLD:
        dropped = same_columns(known, known_columns, sketch, columns)
        if dropped is not None:
            best = Match(1.0, 1.0, dropped, marginal=True)
    return best


def resembles(
    home: Path,
    sketch: Sketch,
    threshold: float = RESEMBLANCE_THRESHOLD,
    *,
    columns: ColumnSketches | None = None,
    public: bool = False,
) -> list[tuple[str, Match]]:
    """The known datasets this table resembles: (public id, :class:`Match`: the estimated share of the dataset's
    rows the table contains, the estimated share of the table's rows found in the dataset, the column left out
    when they differ in one), for datasets where either share is above ``threshold``, most similar first. Local
    estimates (see :func:`~dpdesk.core.loading.identity.overlap` for their error): shown to the curator, never
    published. ``columns``: the table's column sketches (one column changed); ``public``: see :func:`compare`."""
    return resembles_among(content_records(home).items(), sketch, threshold, columns=columns, public=public)


def resembles_among(
    records: Iterable[tuple[str, Mapping[str, Any]]],
    sketch: Sketch,
    threshold: float = RESEMBLANCE_THRESHOLD,
    *,
    columns: ColumnSketches | None = None,
    public: bool = False,
) -> list[tuple[str, Match]]:
    """:func:`resembles` over datasets' records as a home keeps them (``contents``: content key -> sketch as JSON,
    ``columns``: content key -> column sketches as JSON), wherever they come from (a home, a team's database)."""
    found: list[tuple[str, Match]] = []
    for dataset, raw in records:
        recorded = raw.get("columns")
        by_content: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        best: Match | None = None
        for content, sketch_json in raw["contents"].items():
            try:
                known = Sketch.from_json(sketch_json)
            except (TypeError, KeyError, ValueError):
                continue
            est = compare(known, columns_of(by_content.get(content)), sketch, columns, public=public)
            if est is not None and (
                best is None or max(est.contained, est.found) > max(best.contained, best.found)
            ):
                best = est
        if best is not None and max(best.contained, best.found) > threshold:
            found.append((dataset, best))
    return sorted(found, key=lambda r: (-max(r[1].contained, r[1].found), r[0]))


def identity_of(
    home: Path,
    path: str | Path,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    sha256: str | None = None,
    scheme: int = 1,
    computed: ContentIdentity | None = None,
) -> ContentIdentity:
    """A file's content identity (key, sketch, column sketches) of a ``scheme``: from the cache when its bytes
    were seen before (``sha256`` when the caller has it), else ``computed`` (scheme 2's, by the loader in the
    same read, for these bytes), else computed once; then remembered by the bytes' SHA-256. A file a stated
    limit refused (:class:`~dpdesk.core.common.errors.LimitError`) is remembered too, with the refusal's message.

    Computed, the identity is of the bytes the content reader read: when they are not the bytes the caller hashed
    (``sha256``: the file was replaced or written to in between), it is refused (:class:`UsageError`), so that a
    check never judges other bytes than the ones loaded."""
    if sha256 is not None:
        cached = cached_identity(home, sha256, scheme)
        if cached is not None:
            return cached
        refused = refusal_of(home, sha256)
        if refused is not None:
            raise LimitError(str(path), refused)
        if computed is not None and computed.sha256 == sha256 and computed.sketch.scheme == scheme:
            with contextlib.suppress(OSError):
                remember_file(home, computed)
            remember_seen(home, path, sha256)
            return computed
    try:
        compute = content_identity2 if scheme == 2 else content_identity
        ident = compute(path, home_secret(home), encoding=encoding, delimiter=delimiter, progress=progress)
    except LimitError as exc:
        # a stated limit refused it (a function of its bytes alone): the same bytes are refused at once next time
        if sha256 is not None:
            with contextlib.suppress(OSError):
                remember_refusal(home, sha256, exc.message)
        raise
    with contextlib.suppress(OSError):
        remember_file(home, ident)
    remember_seen(home, path, ident.sha256)
    if sha256 is not None and ident.sha256 != sha256:
        raise UsageError(
            _(
                "{path} changed while it was read (its bytes differ from a moment before), so its content could "
                "not be checked; run the command again when nothing is writing to it"
            ).format(path=path)
        )
    return ident


def identities_of(
    home: Path,
    path: str | Path,
    *,
    sha256: str,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    computed: ContentIdentity | None = None,
) -> list[ContentIdentity]:
    """A file's content identities as the home's records need them: scheme 2's (``computed`` by the loader in
    the same read when given, else from the cache or a pass of its own), and scheme 1's too when the home
    remembers it for these bytes or still has a dataset known by scheme-1 keys only
    (:func:`~dpdesk.core.ledger.contents.needs_scheme1`: a re-saved copy of its table must still be found)."""
    kw: dict[str, Any] = {
        "encoding": encoding,
        "delimiter": delimiter,
        "progress": progress,
        "sha256": sha256,
    }
    out = [identity_of(home, path, scheme=2, computed=computed, **kw)]
    old = cached_identity(home, sha256, 1)
    if old is None and needs_scheme1(home):
        old = identity_of(home, path, **kw)
    return out + ([old] if old is not None else [])


def identify(
    home: Path,
    path: str | Path,
    *,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    sha256: str | None = None,
) -> tuple[str, Sketch]:
    """A file's content key and sketch (:func:`identities_of`: scheme 2's; scheme 1's is computed too when the
    home's records need it)."""
    kw: dict[str, Any] = {
        "encoding": encoding,
        "delimiter": delimiter,
        "progress": progress,
        "sha256": sha256,
    }
    if sha256 is not None:
        ident = identities_of(home, path, **kw)[0]
    else:  # computed (and remembered), whatever the cache holds
        ident = identity_of(home, path, scheme=2, **kw)
        if needs_scheme1(home):
            identity_of(home, path, **kw)
    return ident.key, ident.sketch


@dataclass(frozen=True)
class PrivateMatch:
    """A file offered as public holds private rows: ``dataset`` is the known dataset's public id, ``""`` for the
    table opened for release; ``exact``: its rows are that table's (whole, or with one column changed), not
    only most of them."""

    dataset: str
    exact: bool
    #: its columns are that table's (:func:`same_columns`: some of them kept, or renamed)
    marginal: bool = False


def private_match(
    home: Path,
    path: str | Path,
    *,
    sha256: str,
    private_sha: str | None = None,
    progress: Progress = NULL_PROGRESS,
) -> PrivateMatch | None:
    """Whether a file offered as PUBLIC (for a simulation) holds a private table's rows, by its content: a known
    dataset whose table it is or resembles (a re-saved, sorted, converted copy, one with a column added, dropped,
    renamed or edited, or a large part of one), or the table opened for release (``private_sha``, whose identity
    the opening computed); None otherwise. A file the content readers cannot read is judged by its bytes alone
    (None here). The same content, whole or with one column changed, is always refused; resemblance by sketches
    only where the file's rows nearly identify it (:func:`compare` with ``public``). Nothing is linked or recorded
    for a dataset; the file's identity is remembered by its SHA-256 like any file's.
    """
    privates = cached_identities(home, private_sha) if private_sha is not None else []
    if not privates and not dataset_records(home):
        return None  # nothing private to compare with (and no identity secret made for it)
    try:
        idents = identities_of(home, path, progress=progress, sha256=sha256)
        if privates and not any(p.sketch.scheme == 2 for p in privates):
            idents.append(identity_of(home, path, progress=progress, sha256=sha256))  # the private's scheme
    except InputError:
        return None
    for private in privates:
        for ident in idents:
            if ident.key == private.key:
                return PrivateMatch("", exact=True)
            match = compare(private.sketch, private.columns, ident.sketch, ident.columns, public=True)
            if match is not None and max(match.contained, match.found) > RESEMBLANCE_THRESHOLD:
                return PrivateMatch("", exact=match.exact, marginal=match.marginal)
    for ident in idents:
        same = dataset_of_content(home, ident.key)
        if same is not None:
            return PrivateMatch(same, exact=True)
    for ident in idents:
        near = resembles(home, ident.sketch, columns=ident.columns, public=True)
        if near:
            return PrivateMatch(near[0][0], exact=near[0][1].exact, marginal=near[0][1].marginal)
    return None


def refuse_near_copy(resolution: Resolution | None) -> None:
    """Raise :class:`NearCopy` when a new table resembles a known dataset (it is linked or declared new first)."""
    if not COPY_RULES.near_copies_refused:
        return
    if resolution is not None and resolution.how == "new" and resolution.resembles:
        raise NearCopy(resolution)


def resolve(
    home: Path,
    path: str | Path,
    *,
    sha256: str | None = None,
    encoding: str | None = None,
    delimiter: str | None = None,
    progress: Progress = NULL_PROGRESS,
    computed: ContentIdentity | None = None,
    computed_secret: bytes | None = None,
    cluster_table: bool = False,
) -> Resolution:
    """Find a data file's dataset: by its bytes, then by its content; otherwise it is new (with what it resembles).

    ``computed``: the file's scheme-2 identity, computed by the loader in the same read under ``computed_secret``
    (used only when that is the secret this home resolves with); ``cluster_table``: a table only a cluster reads,
    named by its ``computed`` identity alone (in a team, never read here).

    An unknown file whose content is a known dataset's is linked to it here (its SHA-256 becomes another local
    key of that dataset), so the ledger opened by the SHA-256 afterwards is that dataset's. A file the content
    readers cannot read is resolved by its bytes alone, as before content identities.
    """
    from dpdesk.core.loading import file_sha256

    sha = sha256 if sha256 is not None else file_sha256(path, progress)
    ledger = ledger_for(home, sha)
    if ledger.legacy:
        return Resolution(sha, None, "file", ledger)
    team = ledger.team
    if team is not None:
        # a team keeps the keys of both schemes (made with the team's secret) in its database: resolved by them
        return _resolve_in_team(
            team,
            path,
            sha,
            ledger,
            encoding=encoding,
            delimiter=delimiter,
            progress=progress,
            computed=computed,
            computed_secret=computed_secret,
            cluster_table=cluster_table,
        )
    check_identity(home)  # before the cache is trusted: a broken identity store is refused, named
    if computed is not None and (computed_secret is None or computed_secret != _read_home_secret(home)):
        computed = None  # keyed with another secret: not this home's identity
    try:
        idents = identities_of(
            home,
            path,
            encoding=encoding,
            delimiter=delimiter,
            progress=progress,
            sha256=sha,
            computed=computed,
        )
    except InputError:
        return Resolution(sha, ledger.dataset, "file" if ledger.dataset is not None else "new", ledger)
    if ledger.dataset is not None:
        for ident in idents:
            ledger = settle_duplicates(
                home, sha, ident.key, ledger
            )  # two datasets of this table: named, never one
        for ident in idents:  # a dataset known by scheme 1 gets its scheme-2 key here
            record_content(home, ledger.dataset or "", ident.key, ident.sketch, ident.columns)
        return Resolution(sha, ledger.dataset, "file", ledger)
    owner = None
    if COPY_RULES.same_rows_share_ledger:
        for ident in idents:
            owner = live_owner(home, ident.key)
            if owner is not None:
                break
    if owner is not None:
        linked = link_key(home, sha, owner)  # the file's identities (both schemes) become the dataset's
        how: Literal["file", "content"] = "file" if linked != owner else "content"
        return Resolution(sha, linked, how, ledger_for(home, sha))
    near = _resemblances(home, _not_retired(home, _resembles_any(home, idents)))
    return Resolution(sha, None, "new", ledger, near)


def _resembles_any(home: Path, idents: list[ContentIdentity]) -> list[tuple[str, Match]]:
    """:func:`resembles` for each of a table's identities (one per scheme), the closest match per dataset."""
    best: dict[str, Match] = {}
    for ident in idents:
        for dataset, match in resembles(home, ident.sketch, columns=ident.columns):
            known = best.get(dataset)
            if known is None or max(match.contained, match.found) > max(known.contained, known.found):
                best[dataset] = match
    return sorted(best.items(), key=lambda r: (-max(r[1].contained, r[1].found), r[0]))


def _resemblances(home: Path, matches: Iterable[tuple[str, Match]]) -> tuple[Resemblance, ...]:
    """The datasets a new table resembles, with what each spent (read from its ledger, the home's or the team's)."""
    return tuple(
        Resemblance(d, m.contained, m.found, *spent_by(home, d), changed=m.changed, marginal=m.marginal)
        for d, m in matches
    )


def _resolve_in_team(
    team: PgStore,
    path: str | Path,
    sha: str,
    ledger: Ledger,
    *,
    encoding: str | None,
    delimiter: str | None,
    progress: Progress,
    computed: ContentIdentity | None = None,
    computed_secret: bytes | None = None,
    cluster_table: bool = False,
) -> Resolution:
    """:func:`resolve` for a home that uses a team ledger: by the bytes, else by the content, both as the team's
    database knows them (content keys made with the team's identity secret, so the same rows have the same key on
    every curator's machine). A new table is compared with the sketches of the team's tables (made with the same
    secret, kept by the database with each dataset's content keys): a near-copy of a table the team knows is found
    on every curator's machine, as at home.

    A file's content is known to the team by the keys of both schemes (:func:`_team_identities`): scheme 2's
    (``computed`` by the loader in the same read under the team's identity secret, else a pass of its own) and
    scheme 1's (a pass of its own, as before scheme 2); the rows are the team's dataset when either key is. A file
    the team knows by its bytes gets its scheme-2 key recorded when its dataset lacks one. ``cluster_table``: a
    table only a cluster reads (named by :func:`~dpdesk.core.release.engines.spark.engine.cluster_key`), known by
    its scheme-2 identity alone (``computed``, by Spark), never read here."""
    secret = team.identity_secret()
    if computed is not None and (
        computed_secret != secret or computed.sketch.scheme != 2 or computed.sha256 != sha
    ):
        computed = None  # keyed with another secret, or of other bytes: not the team's identity of this file
    if cluster_table and computed is None and ledger.home is not None:
        # looked up without Spark (budget, ledger, declare-new --data SOURCE): the identity its last release
        # attempt in this home computed, when keyed with this team's secret (cluster_table_identity)
        kept = cluster_table_identity(ledger.home, path, secret)
        computed = kept if kept is not None and kept.sha256 == sha else None
        if computed is None and ledger.dataset is not None:
            return Resolution(sha, ledger.dataset, "file", ledger)  # the team's dataset of the key it left
    if cluster_table and computed is None:
        raise LedgerError(
            _(
                "{path}: a table only the cluster reads is named by its content, which was not computed with the "
                "team's secret; nothing was charged or revealed. Check a release of it from this home first "
                "(dpdesk release PLAN --data {path} --engine spark --check): Spark computes its identity with the "
                "team's secret, and nothing is charged"
            ).format(path=path)
        )
    if ledger.home is not None and not cluster_table:
        _remember_own_identity(
            ledger.home, path, sha, encoding=encoding, delimiter=delimiter, progress=progress
        )
    kw: dict[str, Any] = {"encoding": encoding, "delimiter": delimiter, "progress": progress}
    if ledger.dataset is not None:
        _record_scheme2(team, path, sha, ledger.dataset, secret, computed, cluster_table, kw)
        return Resolution(sha, ledger.dataset, "file", ledger)
    idents = _team_identities(path, sha, secret, computed, cluster_table, kw)
    if not idents:
        return Resolution(sha, None, "new", ledger)
    owner = _team_owner(team, idents)
    if owner is None:
        # the keys are looked up again after the sketches are read: a claim records them in one transaction, so a
        # table another curator claimed meanwhile is found by its key (joined), never taken for a near-copy of itself
        records = _team_records(team)
        owner = _team_owner(team, idents)
        if owner is None:
            assert ledger.home is not None  # a team ledger is always opened for a home
            best: dict[str, Match] = {}
            for ident in idents:  # each scheme's sketch is compared with the team's sketches of that scheme
                for dataset, match in resembles_among(records, ident.sketch, columns=ident.columns):
                    known = best.get(dataset)
                    if known is None or max(match.contained, match.found) > max(known.contained, known.found):
                        best[dataset] = match
            near = sorted(best.items(), key=lambda r: (-max(r[1].contained, r[1].found), r[0]))
            _remember_team_contents(team, sha, idents)
            return Resolution(sha, None, "new", ledger, _resemblances(ledger.home, near))
    _remember_team_contents(team, sha, idents, first=owner[1])
    ledger.ensure_id()  # claims the file for the dataset of its rows (and records its other key there)
    return Resolution(sha, ledger.dataset, "content", ledger)


def _team_identities(
    path: str | Path,
    sha: str,
    secret: bytes,
    computed: ContentIdentity | None,
    cluster_table: bool,
    kw: dict[str, Any],
    *,
    scheme1: bool = True,
) -> list[ContentIdentity]:
    """A table's identities under the team's identity secret: scheme 2's (``computed``, else a pass of its own),
    then scheme 1's (a pass of its own; never for a table only a cluster reads). A file the content readers cannot
    read has none (known by its bytes alone, as before content identities)."""
    out: list[ContentIdentity] = []
    if computed is not None:
        out.append(computed)
    elif not cluster_table:
        with contextlib.suppress(InputError):
            out.append(content_identity2(path, secret, **kw))
    if scheme1 and not cluster_table:
        with contextlib.suppress(InputError):
            out.append(content_identity(path, secret, **kw))
    for ident in out:
        if ident.sha256 != sha:
            raise UsageError(
                _(
                    "{path} changed while it was read (its bytes differ from a moment before), so its content could "
                    "not be checked; run the command again when nothing is writing to it"
                ).format(path=path)
            )
    return out


def _team_owner(team: PgStore, idents: list[ContentIdentity]) -> tuple[str, str] | None:
    """The team's dataset of a table's rows by the first of its content keys the team knows: (dataset, key)."""
    for ident in idents:
        owner = team.dataset_of_content(ident.key)
        if owner is not None:
            return owner, ident.key
    return None


def _remember_team_contents(
    team: PgStore, sha: str, idents: list[ContentIdentity], *, first: str | None = None
) -> None:
    """Give the team store a table's content keys and sketches for its claim (:meth:`PgStore.claim`): the key the
    team knows first (``first``: the claim joins its dataset), then the others (recorded with that dataset)."""
    ordered = sorted(idents, key=lambda i: i.key != first)
    team.remember_contents(sha, [(i.key, team_sketch_text(i)) for i in ordered])


def team_sketch_text(ident: ContentIdentity) -> str:
    """A table's sketches as the team keeps them (:func:`_team_sketch`), as JSON within the team's limit
    (:data:`~dpdesk.core.ledger.pgschema.MAX_SKETCH_BYTES`). A table whose column sketches pass it (about 190
    columns and more) keeps them with fewer hashes each (:func:`_thinned`: the smallest half, then a quarter, ...
    of every projection's; still bottom-k sketches, their estimates coarser), so a copy with a column dropped is
    still found; past that, its projections' keys alone (an exact copy with a column dropped), and last its content
    sketch alone (about 20 KB), never nothing, so a near-copy of its rows is still found and its key's scheme still
    counted (:func:`team_scheme1_only`)."""
    text = json.dumps(_team_sketch(ident.key, ident.sketch, ident.columns))
    m = COLUMN_SKETCH_K
    while ident.columns is not None and len(text.encode("utf-8")) > MAX_SKETCH_BYTES and m > _THINNEST:
        m //= 2
        text = json.dumps(_team_sketch(ident.key, ident.sketch, _thinned(ident.columns, m)))
    if len(text.encode("utf-8")) > MAX_SKETCH_BYTES and ident.columns is not None:
        text = json.dumps(_team_sketch(ident.key, ident.sketch, _thinned(ident.columns, 0)))
    if len(text.encode("utf-8")) > MAX_SKETCH_BYTES:
        text = json.dumps(_team_sketch(ident.key, ident.sketch, None))
    return text


#: The fewest hashes a thinned projection sketch keeps (a share's standard error about 0.09 at 32)
_THINNEST = 32


def _thinned(columns: ColumnSketches, m: int) -> ColumnSketches:
    """``columns`` with each projection's sketch cut to its ``m`` smallest hashes (a bottom-``m`` sketch of the same
    rows: :func:`~dpdesk.core.loading.identity.overlap` compares it with a fuller one), whether it nearly identifies
    its rows decided on the full sketch; ``m`` 0: the projections' keys alone."""

    def thin(p: Projection) -> Projection:
        if p.sketch is None or m == 0:
            return Projection(p.key, None)
        s = p.sketch
        if len(s.hashes) < m:  # it holds every distinct row already
            return p
        cut = Sketch(None, s.hashes[:m], m, identifying(s), s.scheme)
        return Projection(p.key, cut)

    return replace(
        columns,
        whole=thin(columns.whole),
        left_out={c: thin(p) for c, p in columns.left_out.items()},
    )


def _record_scheme2(
    team: PgStore,
    path: str | Path,
    sha: str,
    dataset: str,
    secret: bytes,
    computed: ContentIdentity | None,
    cluster_table: bool,
    kw: dict[str, Any],
) -> None:
    """A file the team knows by its bytes: its scheme-2 content key and sketches recorded with its dataset when the
    team lacks them (a dataset claimed before scheme 2), so that its rows read by Spark are found. Free when the
    loader computed the identity in the same read; otherwise a pass of its own, only while the dataset is known
    by fewer scheme-2 than scheme-1 sketches (:func:`team_scheme1_only`)."""
    if computed is None and (cluster_table or dataset not in team_scheme1_only(team)):
        return
    idents = _team_identities(path, sha, secret, computed, cluster_table, kw, scheme1=False)
    if not idents or team.dataset_of_content(idents[0].key) is not None:
        return  # unreadable as a table, or its key is recorded already (this dataset's, or another's: never moved)
    _remember_team_contents(team, sha, idents)
    team.claim(sha, dataset)  # a file the team knows: the claim adds the content key to its dataset


def team_scheme1_only(team: PgStore) -> list[str]:
    """The team's live datasets known by fewer scheme-2 than scheme-1 sketches (claimed before the team recorded
    scheme-2 keys, and not released since): a table only a cluster reads, named by its scheme-2 key alone, would
    not be found among them (the team's analogue of :func:`~dpdesk.core.ledger.contents.needs_scheme1`). Counted
    by the database over all the team's sketches (:meth:`PgStore.sketch_schemes`), not the near-copy check's window
    of the most recent: many newer tables never hide an older dataset from it."""
    return sorted(d for d, one, later in team.sketch_schemes() if later < one)


def _remember_own_identity(
    home: Path,
    path: str | Path,
    sha: str,
    *,
    encoding: str | None,
    delimiter: str | None,
    progress: Progress,
) -> None:
    """In a team home that has ledgers of its own, the file's identity as the home knows it (remembered by its
    bytes), so that a re-saved copy of a table whose history is still in the home's own ledger is found by its rows
    and refused until that history is imported (:meth:`dpdesk.core.ledger.book.Ledger.transaction`): known only by
    the bytes of the file released at home, it would start a second budget in the team."""
    from dpdesk.core.ledger.book import own_dataset_of_file

    if not (home / "ledgers" / "keys").is_dir() or own_dataset_of_file(home, sha) is not None:
        return
    with contextlib.suppress(InputError):  # unreadable as a table: known by its bytes alone, as at home
        identities_of(home, path, encoding=encoding, delimiter=delimiter, progress=progress, sha256=sha)


def _team_sketch(content: str, sketch: Sketch, columns: ColumnSketches | None) -> dict[str, Any]:
    """A table's sketches as the team keeps them: one dataset record of a home (``contents``, ``columns``) holding
    this table alone, in the team's form (no row count, no column counts: :meth:`Sketch.to_team_json`,
    :meth:`ColumnSketches.to_team_json`)."""
    return {
        "contents": {content: sketch.to_team_json()},
        "columns": {content: columns.to_team_json()} if columns else {},
    }


def _team_records(team: PgStore) -> list[tuple[str, dict[str, Any]]]:
    """The team's datasets' records (:func:`_team_sketch`, merged per dataset), as :func:`resembles_among` reads
    them; a record that does not parse is left out (it only makes a near-copy less likely to be recognised)."""
    merged: dict[str, dict[str, Any]] = {}
    for dataset, text in team.sketches():
        try:
            raw = json.loads(text)
            contents, by_content = dict(raw["contents"]), dict(raw.get("columns") or {})
        except (ValueError, TypeError, KeyError):
            continue
        into = merged.setdefault(dataset, {"contents": {}, "columns": {}})
        into["contents"].update(contents)
        into["columns"].update(by_content)
    return list(merged.items())


def ledger_for(home: Path, sha256: str) -> Ledger:
    """The ledger of the data file with this SHA-256 (:meth:`Ledger.for_dataset`), which decides the file's
    dataset again under the home-wide key lock before it makes a new one (:func:`recheck_new`): every ledger a
    release or a ``ledger`` verb opens by a data file comes from here. A file of a table that more than one dataset
    holds is refused (:class:`DuplicateDatasets`), and one of a dataset merged into another opens that other's
    ledger (:func:`settle_duplicates`)."""
    ledger = Ledger.for_dataset(home, sha256)
    if ledger.team is not None:
        return (
            ledger  # the team's database decides which dataset a file belongs to, for every home of the team
        )
    ledger.decide_new = recheck_new
    if ledger.dataset is not None and not ledger.legacy:
        for cached in cached_identities(home, sha256):
            ledger = settle_duplicates(home, sha256, cached.key, ledger)
    return ledger


class DuplicateDatasets(LedgerError):
    """A table's content belongs to more than one live dataset (saves first released at once by a version before
    issue 24's fix): dpdesk never picks one; they are merged first (``dpdesk ledger merge``, exit 3)."""

    def __init__(self, home: Path, datasets: list[str]) -> None:
        parts = []
        for d in datasets:
            h, broken = spent_by(home, d)
            if broken:
                parts.append(_("{dataset} (its ledger does not verify)").format(dataset=d))
            elif h is None or h.releases == 0:
                parts.append(_("{dataset} (nothing released)").format(dataset=d))
            else:
                parts.append(
                    _("{dataset} (epsilon {spent} of {budget} spent in {n} release(s))").format(
                        dataset=d,
                        spent=f"{h.spent_epsilon:.6g}",
                        budget=f"{h.budget.epsilon:.6g}",
                        n=h.releases,
                    )
                )
        super().__init__(
            _(
                "this table belongs to {n} datasets of this dpdesk home: {list}. They were made when saves of it were "
                "first released at the same moment by an older version, and each kept a budget of its own, so "
                "dpdesk picks none of them and nothing is released. Merge them: dpdesk ledger merge --data FILE "
                "(one dataset then charges every release of all of them, under the smallest budget; with --approval "
                "FILE from the officer of each governed one)"
            ).format(n=len(datasets), list="; ".join(parts))
        )
        self.datasets = tuple(datasets)


def retired_into(home: Path, dataset: str) -> str | None:
    """The dataset a dataset was merged into (its verified ledger ends with ``merged_into``), else None (a
    ledger that does not verify is not retired: it still counts as a dataset of its table)."""
    if not is_dataset_id(dataset):
        return None
    try:
        state = Ledger.of(home, dataset).read()
    except LedgerError:
        return None
    return state.retired_into


def live_owners(home: Path, content: str) -> list[str]:
    """The datasets of a content key that were not merged into another (by their ledgers, not by a mark in the
    home's identity files: retirement is proven by the anchored chain)."""
    owners = datasets_of_content(home, content)
    if len(owners) <= 1:
        return owners
    return [d for d in owners if retired_into(home, d) is None]


def live_owner(home: Path, content: str) -> str | None:
    """The one live dataset of a content key, or None; :class:`DuplicateDatasets` when there are several."""
    owners = live_owners(home, content)
    if len(owners) > 1:
        raise DuplicateDatasets(home, owners)
    return owners[0] if owners else None


def settle_duplicates(home: Path, sha256: str, content: str, ledger: Ledger) -> Ledger:
    """``ledger`` (the file's dataset by its bytes) when its table has no other live dataset; the live one's
    ledger when the file's dataset was merged into it (the file's key is moved there); :class:`DuplicateDatasets`
    when the table has several live datasets."""
    owners = datasets_of_content(home, content)
    if not owners or owners == [ledger.dataset]:
        return ledger
    live = [d for d in {*owners, ledger.dataset} if d is not None and retired_into(home, d) is None]
    if len(live) > 1:
        raise DuplicateDatasets(home, sorted(live))
    if ledger.dataset in live:
        return ledger
    target = live[0] if live else retired_into(home, ledger.dataset or "")
    if target is None or target == ledger.dataset:
        return ledger
    relink_key(home, sha256, target)
    moved = Ledger.for_dataset(home, sha256)
    moved.decide_new = recheck_new
    return moved


def _not_retired(home: Path, near: list[tuple[str, Match]]) -> list[tuple[str, Match]]:
    """The resemblances of datasets not merged into another (a merged dataset's table is its survivor's too)."""
    return [(d, m) for d, m in near if retired_into(home, d) is None]


def recheck_new(home: Path, sha256: str) -> tuple[str | None, Callable[[], LedgerError] | None]:
    """The dataset a file with no key yet belongs to, decided again when its dataset is about to be made: called
    by :meth:`~dpdesk.core.ledger.book.Ledger.ensure_id` with the home-wide key lock held (``ledgers/keys.lock``),
    under which every new dataset is made and its first table's content recorded, so that this answer and the
    new dataset are one atomic step for the whole home.

    Returns (the dataset whose content the file's is, None): the file is linked to it; (None, the near-copy
    refusal, raised once the lock is released: it reads the resembled datasets' ledgers); or (None, None): a new
    dataset. A file whose content identity is not known (the content readers could not read it) is decided by its
    bytes alone, as in :func:`resolve`. Takes no lock of its own but the content record's and the register's (the
    lock order is in :mod:`dpdesk.core.ledger.book`)."""
    idents = cached_identities(home, sha256)
    if not idents:
        return None, None
    if COPY_RULES.same_rows_share_ledger:
        for ident in idents:
            owners = live_owners(home, ident.key)
            if len(owners) > 1:
                return None, lambda owners=owners: DuplicateDatasets(home, owners)
            if owners:
                return owners[0], None
    near = _resembles_any(home, idents) if COPY_RULES.near_copies_refused else []
    near = _not_retired(home, near) if near else near
    if not near:
        return None, None
    return None, lambda: near_copy_refusal(home, sha256, near)


def near_copy_refusal(home: Path, sha256: str, near: list[tuple[str, Match]]) -> NearCopy:
    """The near-copy refusal of a file :func:`recheck_new` found resembling known datasets (built after the key
    lock is released: it reads their ledgers)."""
    resemblances = tuple(
        Resemblance(name, m.contained, m.found, *spent_by(home, name), changed=m.changed, marginal=m.marginal)
        for name, m in near
    )
    return NearCopy(Resolution(sha256, None, "new", Ledger(None, None, sha256, home), resemblances))


def _read_home_secret(home: Path) -> bytes | None:
    """The home's identity secret when it has one (never made here)."""
    return read_home_secret(home)


def load_secret(home: Path, path: str | Path | None = None) -> bytes | None:
    """The secret a release's loader keys the table's scheme-2 identity with, computed in the same read
    (:func:`resolve` takes it as ``computed``): the home's identity secret (made now if the home has none), None
    for a file unchanged since the home identified it (``path``: a later release looks its identity up by the
    bytes' hash). For a home that uses a team ledger, the team's identity secret
    (:meth:`~dpdesk.core.ledger.pgstore.PgStore.identity_secret`): it connects to the team's database now, which
    the release does a moment later anyway, and spares the resolution a pass of its own over the file; None when
    the database cannot be reached (the resolution reports it)."""
    from dpdesk.core.ledger.team import TeamLedgerError, team_url

    try:
        if team_url(home) is not None:
            from dpdesk.core.ledger.pgstore import team_store

            store = team_store(home)
            return store.identity_secret() if store is not None else None
    except (LedgerError, TeamLedgerError):
        return None  # reported by the resolution
    if path is not None and seen_identified(home, path):
        return None
    try:
        return home_secret(home)
    except (LedgerError, OSError):
        return None  # a damaged or unwritable identity store: the resolution names it
