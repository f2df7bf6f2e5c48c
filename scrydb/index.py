"""The public API: :func:`open` a repository's index, then ``sync``, ``search``, ``read``,
``related``, ``locate`` and ``status``.

    import scrydb
    with scrydb.open("path/to/repo") as ix:
        ix.sync()
        for hit in ix.search("where is the retry backoff computed"):
            print(hit.location, hit.symbol)
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import ParamSpec, TypeVar

from scrydb import status as status_mod
from scrydb.config import Config, find_config
from scrydb.embed import Embedder, IndexEmbedders
from scrydb.errors import IndexError_, ScryError
from scrydb.paths import default_db_path, expand_user, filter_path, find_root, storable
from scrydb.results import READ_MAX_LINES, Match, ReadResult, Results
from scrydb.search.codegraph import CodeGraph
from scrydb.search.engine import SearchEngine, checked_k
from scrydb.status import Status
from scrydb.store import IndexWriteError, Store, friendly_errors, sqlitefile
from scrydb.store import chunks as chunk_rows
from scrydb.store import files as indexed_files
from scrydb.store.vcache import VectorCache
from scrydb.sync import (
    Estimate,
    Progress,
    Syncer,
    SyncReport,
    estimate,
)
from scrydb.sync.rates import embed_rate, record_rate
from scrydb.sync.reuse import SeedIndex, open_shared_cache

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _file_errors(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """SQLite errors about the index file (damaged, disk full, read-only, busy) leave an
    :class:`Index` method as one-line ScryErrors that say what to do."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        self = args[0]
        with friendly_errors(getattr(self, "db_path", None)):
            return method(*args, **kwargs)

    return wrapper


class Index:
    """An open index over one repository. Use :func:`scrydb.open` to get one."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        db: str | os.PathLike[str] | None = None,
        config: Config | str | os.PathLike[str] | None = None,
        *,
        readonly: bool = False,
        embedder: Embedder | None = None,
        recover: bool = False,
    ) -> None:
        if root is None:
            self.root = find_root(None)
        else:
            self.root = expand_user(str(root)).resolve()
            if not self.root.exists():
                raise ScryError(f"no such directory: {root}")
            if not self.root.is_dir():
                raise ScryError(f"not a directory: {root}")
        self.config = config if isinstance(config, Config) else find_config(self.root, config)
        self.db_path = expand_user(str(db)).resolve() if db else default_db_path(self.root)
        self.store = Store(self.db_path, readonly=readonly, recover=recover)
        with friendly_errors(self.db_path):
            owner = self.store.meta("root")
        if owner is not None and owner != str(self.root) and Path(owner).exists():
            self.store.close()
            raise IndexError_(
                f"index {self.db_path} belongs to {owner}, not {self.root}; pass another --db or rebuild it there"
            )
        self._embedders = IndexEmbedders(self.config.embed, embedder)
        self.engine = SearchEngine(self.store, self.config, self.query_embedder)

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the index file (and release the writer lock if held)."""
        self.store.close()

    def embedder(self) -> Embedder:
        """The configured embedder (built on first use; the model loads when it embeds)."""
        return self._embedders.configured()

    def query_embedder(self) -> Embedder:
        """The embedder that made the index's vectors, for query vectors: the configured
        one, except during a re-embed for a newly configured model
        (:meth:`~scrydb.embed.live.IndexEmbedders.for_queries`)."""
        return self._embedders.for_queries(self.store.meta)

    # -- writing -----------------------------------------------------------------------

    @_file_errors
    def sync(
        self,
        full: bool = False,
        embed: bool = True,
        progress: Progress | None = None,
        warn: Callable[[str], None] | None = None,
        wait: bool | float = True,
        on_wait: Callable[[], None] | None = None,
        cancel: Callable[[], bool] | None = None,
        probe: bool = True,
        seed: str | os.PathLike[str] | None = None,
    ) -> SyncReport:
        """Bring the index up to date with the working tree (incremental).

        ``full`` rebuilds from nothing; ``embed=False`` stops after the lexical phase
        (chunks are searchable lexically; the next sync embeds them). ``wait`` decides
        what happens when another process is indexing: ``True`` waits (``on_wait()`` is
        called once first), a number waits at most that many seconds, ``False`` does not
        wait; a lock not taken raises :class:`~scrydb.errors.LockedError`. ``cancel`` is
        polled between batches: when it returns True the sync stops early
        (``report.cancelled``), keeping everything committed for the next sync.
        A newly configured embedder is loaded and probed before anything changes (a
        model that cannot load raises ScryError, index untouched); ``embed=False,
        probe=False`` never loads a model and leaves a model change to a later sync.
        Before the model, vectors are looked up in the per-user shared cache (``[index]
        shared_cache``) and in ``seed``, another index of the same fingerprint (one of
        another fingerprint raises ScryError naming both, index untouched).
        """
        if self.store.readonly:
            raise IndexWriteError(
                f"cannot sync: {self.store.write_denied}; searches still read it as it is"
                if self.store.write_denied
                else "index opened read-only"
            )
        self.store.writer_lock(wait=wait, on_wait=on_wait)
        try:
            if full:
                self._replace_if_damaged(warn)
            if self.store.moved_aside is not None:
                if warn is not None:
                    warn(
                        f"index {self.db_path} was damaged: moved to {self.store.moved_aside}; "
                        "rebuilding it from nothing"
                    )
                self.store.moved_aside = None
            syncer = Syncer(
                self.store,
                self.root,
                self.config,
                self.embedder if embed or probe else None,
                progress=progress,
                warn=warn,
                embedder_id=self.embedder_id(),
                exclude=self.own_files(),
                cancel=cancel,
                seed=seed,
            )
            report = syncer.run(full=full, embed=embed)
        finally:
            self.store.release_writer_lock()
        if report.embed_rate:
            record_rate(self.embedder_id(), report.embed_rate)
        reused = report.vectors_from_cache + report.vectors_from_seed
        if reused:
            rate, _measured = embed_rate(self.embedder_id())
            report.seconds_saved = reused / rate if rate > 0 else 0.0
        return report

    def check_seed(self, seed: str | os.PathLike[str]) -> None:
        """Raise ScryError (one line) when ``seed`` cannot give this index vectors: no
        such file, not a scrydb index, no vectors, or another fingerprint (both named)."""
        SeedIndex.open(seed, self.config, self.embedder_id(), self.db_path).close()

    def _replace_if_damaged(self, warn: Callable[[str], None] | None) -> None:
        """Before a full rebuild: a file that fails SQLite's quick check is moved aside
        (``<db>.damaged``) and a new one takes its place (deleting rows from a damaged
        b-tree would keep the damage)."""
        problem = self.store.check()
        if problem is None:
            return
        aside = self.store.reopen_fresh()
        self.store.moved_aside = None
        self.engine = SearchEngine(self.store, self.config, self.query_embedder)
        if warn is not None:
            warn(
                f"index {self.db_path} was damaged ({problem}): moved to {aside}; "
                "rebuilding it from nothing"
            )

    def estimate(self) -> Estimate:
        """What indexing this tree from nothing would cost (files, chunks, time at the
        embedding rate measured on this machine, else the documented default)."""
        rate, measured = embed_rate(self.embedder_id())
        cache = self._existing_shared_cache()
        try:
            return estimate(self.root, self.config, rate, measured, cache=cache)
        finally:
            if cache is not None:
                cache.close()

    def _existing_shared_cache(self) -> VectorCache | None:
        """This index's shared vector cache file when it exists already (an estimate
        never creates one); None for an endpoint of unknown dimension."""
        cfg = self.config
        if cfg.embed.provider != "local" and not cfg.embed.dim:
            return None  # (its dimension would cost a request)
        dim = cfg.embed.dim or self.embedder().dim
        cache = open_shared_cache(
            cfg, self.embedder_id(), dim, warn=lambda _msg: None, readonly=True
        )
        return cache if cache is not None and cache.path.is_file() else None

    def embedder_id(self) -> str:
        """Identity of the embedder this index embeds with (nothing is loaded)."""
        return self._embedders.configured_id()

    def own_files(self) -> set[str]:
        """The index's own files, relative to the root, when ``--db`` put them in the tree."""
        try:
            rel = self.db_path.relative_to(self.root)
        except ValueError:
            return set()
        base = rel.as_posix()
        suffixes = (*sqlitefile.OWN_SUFFIXES, ".lock")
        return {base + suffix for suffix in suffixes}

    # -- reading -----------------------------------------------------------------------

    @_file_errors
    def search(
        self,
        query: str,
        k: int = 10,
        lang: str | None = None,
        path: str | None = None,
        *,
        explain: bool = False,
        mode: str = "fused",
        rerank: bool = True,
    ) -> Results:
        """The ``k`` best chunks for ``query``. ``lang`` (``"python"``, ``"ts,tsx"``) and
        ``path`` (a prefix or glob relative to the root, or absolute inside it) are hard
        filters in both legs; ``mode``: ``fused`` (default), ``lexical`` or ``dense`` (one
        leg alone); ``rerank=False`` skips a configured reranker leg."""
        k = checked_k(mode, k)
        path = filter_path(self.root, path)
        return self.engine.search(
            query, k=k, lang=lang, path=path, explain=explain, mode=mode, rerank=rerank
        )

    @_file_errors
    def read(
        self,
        path: str,
        start: int | None = None,
        end: int | None = None,
        max_lines: int = READ_MAX_LINES,
    ) -> ReadResult:
        """Lines ``start``..``end`` of an indexed file, served from the index itself.

        ``start`` alone means the whole chunk (or chunks) containing that line, as a hit
        header ``path:LINE`` names it; neither means the whole file.

        Only paths that were indexed are served: no ``..``, no absolute paths, nothing
        outside the root; the text comes from the stored chunks, not from the disk.
        """
        rel = self._indexed_path(path)
        got = chunk_rows.read_lines(self.store, rel, start, end, max_lines)
        if got is None:
            raise ScryError(f"not an indexed file: {path}")
        return got

    @_file_errors
    def related(self, path: str, line: int, k: int = 10) -> Results:
        """Chunks nearest (by embedding) to the chunk at ``path:line``, other files first."""
        from scrydb.search.related import related

        return related(
            self.store, self.engine.vectors, self.config.search, self._indexed_path(path), line, k
        )

    def _indexed_path(self, path: str) -> str:
        """The indexed path a user-supplied one names: the exact path of an indexed file
        as given (every file name the walk accepts, ``~x.py``, `` a.py`` and ``a\\b.py``
        included: indexed paths are inside the root by construction), else
        :func:`safe_relpath` of it (which refuses anything that could leave the root)."""
        if isinstance(path, str) and path and storable(path):
            if indexed_files.has(self.store, path):
                return path
        return safe_relpath(path)

    @property
    def graph(self) -> CodeGraph:
        """The code graph: callers, callees, refs, map (search/codegraph.py)."""
        return CodeGraph(self.store, self.root)

    @_file_errors
    def locate(
        self,
        text: str,
        k: int = 50,
        lang: str | None = None,
        path: str | None = None,
        ignore_case: bool = False,
    ) -> list[Match]:
        """Exact literal matches of ``text`` in the indexed chunks, with line numbers."""
        from scrydb.search.locate import locate

        path = filter_path(self.root, path)
        return locate(self.store, text, k=k, lang=lang, path=path, ignore_case=ignore_case)

    @_file_errors
    def skipped_paths(self) -> dict[str, list[str]]:
        """Every path the index leaves out, per reason (``scry status --skipped``)."""
        return status_mod.skipped_paths(self.store, self.root, self.config)

    @_file_errors
    def status(self, check_stale: bool = True, check_git: bool = True) -> Status:
        """Counts, freshness and fingerprint of the index.

        ``check_stale`` walks the working tree (stat only) to count what a sync would
        change; ``check_git`` asks git which tracked files the index lacks, and why.
        """
        st = status_mod.status(
            self.store,
            self.root,
            self.config,
            self.db_path,
            embedder_id=self.embedder_id(),
            own_files=self.own_files(),
            check_stale=check_stale,
            check_git=check_git,
        )
        cache = self._existing_shared_cache()
        if cache is not None:
            try:
                st.shared_cache = status_mod.shared_cache(cache)
            finally:
                cache.close()
        return st


def safe_relpath(path: str) -> str:
    """A user-supplied path as a clean relative POSIX path, or a :class:`ScryError`.

    Refuses absolute paths, ``..`` components, NUL bytes, backslashes and
    percent-encoded separators; the result must still be looked up among indexed files.
    """
    if not isinstance(path, str) or not path.strip():
        raise ScryError("empty path")
    p = path.strip()
    if "\x00" in p or "\\" in p or not storable(p):
        raise ScryError(f"refused path {path!r}: invalid characters")
    low = p.lower()
    if "%2f" in low or "%5c" in low or "%2e%2e" in low:
        raise ScryError(f"refused path {path!r}: encoded separators")
    pp = PurePosixPath(p)
    if pp.is_absolute() or p.startswith("~"):
        raise ScryError(
            f"refused path {path!r}: absolute paths are not served; use a path relative to the repository root"
        )
    parts = [x for x in pp.parts if x not in ("", ".")]
    if any(x == ".." for x in parts):
        raise ScryError(f"refused path {path!r}: '..' is not allowed")
    if not parts:
        raise ScryError("empty path")
    return "/".join(parts)


def open(
    root: str | os.PathLike[str] | None = None,
    db: str | os.PathLike[str] | None = None,
    config: Config | str | os.PathLike[str] | None = None,
    *,
    readonly: bool = False,
    embedder: Embedder | None = None,
    recover: bool = False,
) -> Index:
    """Open (creating if needed) the index of the repository at ``root``.

    ``root`` defaults to the repository containing the working directory; ``db`` to a
    file in the per-user cache (or ``$SCRY_DB``); ``config`` to ``root/.scry.toml``.
    A file that cannot be written opens read-only (``index.store.write_denied`` says
    why); ``recover=True`` moves a damaged index file aside and starts a new one.
    """
    return Index(root, db, config, readonly=readonly, embedder=embedder, recover=recover)
