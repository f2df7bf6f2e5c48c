"""Search across repositories: each one searched with its own index, configuration and
model, the lists merged by rank, each hit naming its repository.

    import scrydb
    res = scrydb.search_many(["~/src/service", "~/src/client"], "where are retries scheduled")
    for hit in res:
        print(hit.location)           # client:src/retry.ts:10-42
    print(res.repos)                  # {"service": "/home/me/src/service", ...}

Scores of two indexes are not comparable (two models, two corpora, a fusion that gives
each list's best hit 1.0), so the lists merge by rank alone: reciprocal rank fusion, a
hit at rank r scoring ``weight / (RRF_K + r)``. A chunk lives in one repository, so this
interleaves the lists rank by rank (the first hit of each list, then the second of
each, ...), the repositories in the order given where ranks tie. A list its own engine
judged weak (nothing scored well, or the name asked for occurs nowhere in that
repository; ``Results.weak``) counts :data:`WEAK_LIST_WEIGHT`. Each list is already
diversified as a single search is (at most ``search.rank.MAX_PER_FILE`` hits per file,
near-duplicates dropped) and a file belongs to one repository, so the merged list keeps
that rule; a copy of the same code in two repositories is two places, and both stay.

A repository that cannot be searched (no index, an unreadable file, a broken
``.scry.toml``, a root that is gone) becomes a note; bad input (an empty query, an unknown
language) is a :class:`~scrydb.errors.ScryError` before any index is opened. Nothing is
synced: each index is opened read-only and searched as it is (``scry repos`` shows when
each was last synced).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from scrydb.catalog import RepoSource, display_names, read_entry
from scrydb.config import find_config
from scrydb.embed import Embedder, embedder_id, make_embedder
from scrydb.errors import ScryError, shown
from scrydb.index import Index
from scrydb.results import Hit, Results
from scrydb.search.engine import MAX_K, MODES
from scrydb.search.filters import Filter
from scrydb.search.query import clean_query

#: Reciprocal rank fusion's constant (Cormack, Clarke and Buettcher 2009, the value their
#: experiments settled on): a hit at rank r scores 1 / (RRF_K + r). With one list per
#: chunk it fixes only how far a weak list's hits fall (see WEAK_LIST_WEIGHT).
RRF_K = 60

#: A weak list's hits count this much: its first hit (0.5 / 61) ranks with a confident
#: list's 62nd (1 / 122), so near matches from a repository that lacks the answer come
#: after every real answer of a usual list, yet still appear when nothing better is left.
WEAK_LIST_WEIGHT = 0.5

#: What :func:`search_many` takes for a repository: its root, its index file, or an
#: :class:`~scrydb.index.Index` the caller opened (kept open: the caller closes it).
Repo = str | os.PathLike[str] | Index | RepoSource


@dataclass
class _Searched:
    """One repository's list in a search: its name, root and results."""

    name: str
    root: str
    results: Results


class MultiSearch:
    """Search several repositories, keeping their indexes (and models) open between
    searches: an MCP server holds one. Repositories with the same embedder share it, so a
    model loads once. Thread-safe (one search at a time); :meth:`close` when done."""

    def __init__(self) -> None:
        self._open: dict[Path, tuple[Index, tuple[int, int]]] = {}
        self._models: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> MultiSearch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every index this object opened."""
        with self._lock:
            for ix, _ident in self._open.values():
                ix.close()
            self._open.clear()

    def search(
        self,
        repos: Iterable[Repo],
        query: str,
        k: int = 10,
        lang: str | None = None,
        path: str | None = None,
        *,
        explain: bool = False,
        mode: str = "fused",
        rerank: bool = True,
        cancel: Callable[[], None] | None = None,
    ) -> Results:
        """The ``k`` best chunks of all ``repos`` for ``query`` (see the module doc).

        ``lang`` and ``path`` filter every repository alike (``path`` relative to each
        root); ``explain``, ``mode`` and ``rerank`` are :meth:`Index.search`'s.
        ``cancel`` is called between repositories (it raises to stop).
        """
        _check_input(query, k, lang, path, mode)
        t0 = time.perf_counter()
        targets, notes = self._targets(list(repos))
        lists: list[_Searched] = []
        with self._lock:
            for name, target in targets:
                if cancel is not None:
                    cancel()
                try:
                    ix = target if isinstance(target, Index) else self._index(target)
                    res = ix.search(
                        query, k=k, lang=lang, path=path, explain=explain, mode=mode, rerank=rerank
                    )
                except (ScryError, OSError) as e:
                    notes.append(f"{name}: not searched: {e}")
                    if isinstance(target, RepoSource):
                        self._forget(target.db)
                    continue
                lists.append(_Searched(name, str(ix.root), res))
        out = merge(lists, min(int(k), MAX_K))
        out.query = out.query or clean_query(query)
        out.notes = notes + out.notes
        out.timings = {"total": time.perf_counter() - t0}
        return out

    def _targets(self, repos: list[Repo]) -> tuple[list[tuple[str, Index | RepoSource]], list[str]]:
        """Each repository once, with a distinct display name; notes for those that name
        no repository."""
        found: list[Index | RepoSource] = []
        notes: list[str] = []
        seen: set[Path] = set()
        for r in repos:
            target = r if isinstance(r, Index | RepoSource) else _source(r, notes)
            if target is None:
                continue
            key = target.root.resolve() if isinstance(target, RepoSource) else target.root
            if key not in seen:
                seen.add(key)
                found.append(target)
        names = display_names([t.root for t in found])
        return list(zip(names, found, strict=True)), notes

    def _index(self, src: RepoSource) -> Index:
        """The open index of ``src`` (opened read-only on first use; opened again when
        its file was replaced, e.g. by ``scry index --full`` after damage)."""
        ident = _identity(src.db)
        held = self._open.get(src.db)
        if held is not None and held[1] == ident:
            return held[0]
        self._forget(src.db)
        if ident == (0, 0):
            raise ScryError(f"no index of {src.root} (run `scry index {src.root}`)")
        cfg = find_config(src.root)
        eid = embedder_id(cfg.embed)
        model = self._models.get(eid)
        if model is None:
            model = self._models[eid] = make_embedder(cfg.embed)
        ix = Index(src.root, db=src.db, config=cfg, readonly=True, embedder=model)
        self._open[src.db] = (ix, ident)
        return ix

    def _forget(self, db: Path) -> None:
        held = self._open.pop(db, None)
        if held is not None:
            held[0].close()


def search_many(
    repos: Iterable[Repo],
    query: str,
    k: int = 10,
    lang: str | None = None,
    path: str | None = None,
    *,
    explain: bool = False,
    mode: str = "fused",
    rerank: bool = True,
) -> Results:
    """Search several repositories at once: each with its own index and model, the lists
    merged by rank (never by score), each :class:`~scrydb.results.Hit` naming its
    repository (``hit.repo``; ``Results.repos`` maps the names to roots).

    ``repos`` are roots (a directory is taken as the root itself, as :func:`scrydb.open`
    takes it; its index is the one in the cache directory), index files, or open
    :class:`~scrydb.index.Index` objects (searched as they are, left open). A repository
    that cannot be searched becomes a note in ``Results.notes``; an empty query, an
    unknown language or ``k < 1`` raise as :meth:`Index.search` does.
    """
    with MultiSearch() as ms:
        return ms.search(repos, query, k, lang, path, explain=explain, mode=mode, rerank=rerank)


def merge(lists: Sequence[_Searched], k: int) -> Results:
    """The lists merged by reciprocal rank (see the module doc), the top ``k``, each hit
    naming its repository and scored by its merged score (six decimals); the lists'
    notes (prefixed with the repository's name), legs, suggestions and pending counts
    with them, and as ``missing`` the identifiers that occur in none of them."""
    scored: list[tuple[float, int, int, Hit, str]] = []
    for order, s in enumerate(lists):
        weight = WEAK_LIST_WEIGHT if s.results.weak else 1.0
        for rank, hit in enumerate(s.results, 1):
            scored.append((weight / (RRF_K + rank), order, rank, hit, s.name))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    out = Results(
        [replace(hit, repo=name, score=round(score, 6)) for score, _o, _r, hit, name in scored[:k]]
    )
    out.repos = {s.name: s.root for s in lists}
    first = lists[0].results if lists else None
    if first is not None:
        out.query, out.shape = first.query, first.shape
        out.missing = [m for m in first.missing if all(m in s.results.missing for s in lists)]
    out.weak = bool(lists) and all(s.results.weak for s in lists)
    for s in lists:
        out.notes += [f"{s.name}: {n}" for n in s.results.notes]
        out.legs += [leg for leg in s.results.legs if leg not in out.legs]
        out.suggestions += [x for x in s.results.suggestions if x not in out.suggestions]
        out.pending += s.results.pending
    return out


def _check_input(query: str, k: int, lang: str | None, path: str | None, mode: str) -> None:
    """Bad input raises once, before any repository is opened (as a single search would)."""
    clean_query(query)
    Filter(lang, path)
    if mode not in MODES:
        raise ScryError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
    if isinstance(k, bool) or int(k) < 1:
        raise ValueError(f"k must be at least 1, not {k!r}")


def _source(spec: str | os.PathLike[str], notes: list[str]) -> RepoSource | None:
    """A root or an index file as a :class:`RepoSource`; a note (and None) otherwise."""
    try:
        p = Path(spec).expanduser()
        is_dir, is_file = p.is_dir(), p.is_file()
    except (OSError, RuntimeError, ValueError) as e:  # too long, "~nosuchuser", a NUL
        notes.append(f"{shown(str(spec))}: not searched: {e}")
        return None
    if is_dir:
        return RepoSource.of_root(p.resolve())
    if is_file:
        entry = read_entry(p.resolve())
        if entry.error or not entry.root:
            notes.append(f"{spec}: not searched: {entry.error or 'the index names no root'}")
            return None
        if not entry.root_exists:
            notes.append(f"{spec}: not searched: its root {entry.root} no longer exists")
            return None
        return RepoSource(Path(entry.root), p.resolve())
    notes.append(f"{shown(str(spec))}: not searched: no such directory or index file")
    return None


def _identity(db: Path) -> tuple[int, int]:
    """(device, inode) of an index file; (0, 0) when there is none."""
    try:
        st = db.stat()
    except OSError:
        return (0, 0)
    return (st.st_dev, st.st_ino)
