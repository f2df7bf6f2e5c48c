"""``scry status``: what the index holds, how fresh it is against the working tree, and
which files git tracks that it lacks, and why. Reads the index; never writes it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrydb import background
from scrydb.config import Config
from scrydb.store import SCHEMA_VERSION, Store, counts
from scrydb.store import files as indexed_files
from scrydb.store.keys import ORIGIN_CACHE, ORIGIN_SEED
from scrydb.sync import fingerprint
from scrydb.walk import Selector, walk

if TYPE_CHECKING:
    from scrydb.store.vcache import VectorCache

#: ``status`` warns loudly when more git-tracked files than this are missing.
MISSING_WARN = 5

#: Tracked files left out for one of these reasons were left out on purpose; any other
#: reason ("ignored" by a pattern, "other") is what a gitignore mistake looks like.
DELIBERATE_SKIPS = frozenset(
    {
        "noise-dir",
        "lock-file",
        "meta-file",
        "binary",
        "data",
        "minified",
        "secret",
        "too-large",
        "generated",
        "symlink",
        "not-synced",
    }
)


@dataclass
class Status:
    """What ``Index.status()`` reports (``scry status``)."""

    root: str
    db: str
    db_bytes: int  #: the index file plus its WAL
    files: int
    chunks: int
    symbols: int
    vectors: int  #: distinct chunk-body vectors in use (orphans not counted)
    pending: int  #: chunks still waiting for a vector
    skipped: dict[str, int]  #: paths the last sync skipped, per reason
    last_sync: float | None  #: unix time of the last complete sync
    fingerprint: dict[str, str | None]
    stale: dict[str, int] | None = None  #: added/changed/deleted vs the working tree
    git_missing: list[str] = field(default_factory=list)  #: suspicious ones, first 20
    git_missing_count: int = 0  #: tracked by git, not indexed, for no deliberate reason
    langs: dict[str, int] = field(default_factory=dict)
    pending_texts: int = 0  #: distinct chunk texts still to embed
    orphan_vectors: int = 0  #: vectors kept for reuse that no chunk refers to now
    header_vectors: int = 0  #: distinct header vectors in use (chunk/header.py)
    window_vectors: int = 0  #: distinct window vectors of long chunks (chunk/windows.py)
    comment_vectors: int = 0  #: distinct vectors of chunks' inner comments (the same)
    #: vectors in use by where they came from: "model" (computed here), "cache" (the
    #: shared vector cache), "seed" (a seed index); orphans not counted
    vector_origins: dict[str, int] = field(default_factory=dict)
    #: "hybrid", "hybrid-partial" (some chunks wait for vectors), "lexical" or "empty"
    search: str = "empty"
    rebuild: list[str] = field(default_factory=list)  #: what the next sync will rebuild, and why
    stale_paths: list[str] = field(default_factory=list)  #: first few stale paths
    #: git-tracked files the index lacks, per reason (see DELIBERATE_SKIPS)
    git_tracked_skipped: dict[str, int] = field(default_factory=dict)
    git_warning: bool = False  #: more than MISSING_WARN suspicious git-tracked files missing
    writer_active: bool = False  #: a sync is running right now
    embed_rate: float | None = None  #: texts/s measured by the last syncs that embedded
    #: a re-embed for a new model under way: {"model", "done", "total"} (old vectors serve)
    reembed: dict[str, Any] | None = None
    #: files whose parse failed: chunked as plain windows (a grammar bug or a time-out)
    parse_fallbacks: list[str] = field(default_factory=list)
    #: files not in UTF-8, read in their declared coding (a PEP 263 cookie, a UTF-16 byte
    #: order mark) or a fallback (cp1252, then Latin-1): path -> coding
    codings: dict[str, str] = field(default_factory=dict)
    #: a background indexer running now: {"pid", "started", "log", "root"}
    background: dict[str, Any] | None = None
    #: this model's shared vector cache: {"path", "vectors", "bytes", "bound_bytes"}
    #: (None: turned off, or no file yet)
    shared_cache: dict[str, Any] | None = None

    @property
    def fresh(self) -> bool | None:
        """Whether the index matches the working tree (None when not checked)."""
        if self.stale is None:
            return None
        return not any(self.stale.values()) and not self.rebuild

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        d = asdict(self)
        d["fresh"] = self.fresh
        return d


def skipped_paths(store: Store, root: Path, config: Config) -> dict[str, list[str]]:
    """Every path the index leaves out, per reason: what the walk skips by name, size
    or ignore rules (directories end in "/"), and what the last sync skipped by
    content (binary, generated, secret, unreadable)."""
    out: dict[str, list[str]] = {}
    res = walk(root, config.index)
    for reason, paths in res.skipped_paths.items():
        out.setdefault(reason, []).extend(paths)
    for path, (reason, _size, _mtime) in sorted(indexed_files.skipped(store).items()):
        out.setdefault(reason, []).append(path)
    return {k: sorted(v) for k, v in sorted(out.items())}


def status(
    store: Store,
    root: Path,
    config: Config,
    db_path: Path,
    *,
    embedder_id: str | None,
    own_files: set[str],
    check_stale: bool = True,
    check_git: bool = True,
) -> Status:
    """Counts, freshness and fingerprint of an index (see ``Index.status``): what it holds,
    then (``check_stale``) what a sync would change and (``check_git``) which git-tracked
    files it lacks."""
    st = _holdings(store, root, db_path)
    st.fingerprint, st.rebuild = _fingerprint(store, config, embedder_id)
    bg = background.running(db_path)
    if bg is not None:
        st.background = asdict(bg)
    walked: set[str] | None = None
    if check_stale or check_git:
        result = walk(root, config.index)
        files = [f for f in result.files if f.path not in own_files]
        walked = {f.path for f in files}
        if check_stale:
            st.stale, st.stale_paths = _staleness(store, files, result.unlisted)
    if check_git:
        _git_diagnosis(st, git_missing(store, root, config, walked or set(), own_files))
    return st


def shared_cache(cache: VectorCache) -> dict[str, Any]:
    """What ``Status.shared_cache`` says of this model's shared vector cache: its file,
    vectors, bytes on disk (with its WAL) and the bound it is kept under."""
    files = [Path(str(cache.path) + s) for s in ("", "-wal")]
    return {
        "path": str(cache.path),
        "vectors": cache.count(),
        "bytes": sum(f.stat().st_size for f in files if f.exists()),
        "bound_bytes": cache.max_bytes,
    }


def _holdings(s: Store, root: Path, db_path: Path) -> Status:
    """What the index holds: files, chunks, vectors by role and origin, skips, the file's
    size, the last sync, a re-embed under way (the fingerprint is filled in after)."""
    skipped = indexed_files.skipped_reasons(s)
    for part in (s.meta("skipped_walk") or "").split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            skipped[k] += int(v)
    size = 0
    for suffix in ("", "-wal"):
        try:
            size += os.path.getsize(str(db_path) + suffix)
        except OSError:
            pass
    last = s.meta("last_sync")
    vec = counts.vectors(s)
    n_chunks = counts.chunks(s)
    rate = s.meta("embed_rate")
    st = Status(
        root=str(root),
        db=str(db_path),
        db_bytes=size,
        files=indexed_files.count(s),
        chunks=n_chunks,
        symbols=counts.symbols(s),
        vectors=vec.body,
        header_vectors=vec.header,
        window_vectors=vec.window,
        comment_vectors=vec.comment,
        pending=vec.pending,
        pending_texts=vec.pending_texts,
        orphan_vectors=vec.orphan,
        search=(
            "empty"
            if not n_chunks
            else "lexical"
            if not vec.searchable
            else "hybrid-partial"
            if vec.pending
            else "hybrid"
        ),
        skipped=dict(sorted(skipped.items())),
        last_sync=float(last) if last else None,
        fingerprint={},
        rebuild=[],
        langs=indexed_files.langs(s),
        writer_active=s.writer_active(),
        embed_rate=float(rate) if rate else None,
    )
    names = {None: "model", ORIGIN_CACHE: "cache", ORIGIN_SEED: "seed"}
    st.vector_origins = {names.get(o, "model"): n for o, n in counts.origins(s).items()}
    st.parse_fallbacks = json.loads(s.meta("parse_fallbacks") or "[]")
    st.codings = json.loads(s.meta("codings") or "{}")
    moving = s.next_vectors_progress()
    if moving is not None:
        st.reembed = {"model": moving[0], "done": moving[1], "total": moving[2]}
    return st


def _fingerprint(
    s: Store, config: Config, embedder_id: str | None
) -> tuple[dict[str, str | None], list[str]]:
    """The index's fingerprint beside the current settings', and what would force a rebuild."""
    fp: dict[str, str | None] = {
        "schema": s.meta("schema"),
        "schema_supported": str(SCHEMA_VERSION),
        "embed_dim": s.meta("embed_dim"),
        "scrydb_version": s.meta("scrydb_version"),
    }
    rebuild = []
    for key, value in fingerprint(config, embedder_id).items():
        fp[key] = s.meta(key)
        fp["current_" + key] = value
        if fp[key] is not None and fp[key] != value:
            rebuild.append(f"{key} {fp[key]} -> {value}")
    return fp, rebuild


def _git_diagnosis(st: Status, missing: dict[str, str]) -> None:
    """Git-tracked files the index lacks: per reason, and the suspicious ones (loudly)."""
    st.git_tracked_skipped = dict(sorted(Counter(missing.values()).items()))
    suspicious = sorted(p for p, r in missing.items() if r not in DELIBERATE_SKIPS)
    st.git_missing_count = len(suspicious)
    st.git_missing = suspicious[:20]
    st.git_warning = len(suspicious) > MISSING_WARN


def _staleness(
    store: Store, files: list[Any], unlisted: Sequence[str] = ()
) -> tuple[dict[str, int], list[str]]:
    """What a sync would change: counts of added/changed/deleted files, a few paths."""
    indexed = indexed_files.stats(store)
    skipped = {p: (size, mt) for p, (_reason, size, mt) in indexed_files.skipped(store).items()}
    added = changed = 0
    paths: list[str] = []
    seen = set()
    for f in files:
        seen.add(f.path)
        old = indexed.get(f.path) or skipped.get(f.path)
        if old is None:
            added += 1
        elif old != (f.size, f.mtime_ns):
            changed += 1
        else:
            continue
        if len(paths) < 10:
            paths.append(f.path)
    kept = tuple(d + "/" for d in unlisted)  # a sync keeps what it cannot list
    gone = [p for p in indexed if p not in seen and not (kept and p.startswith(kept))]
    paths += gone[: max(0, 10 - len(paths))]
    return {"added": added, "changed": changed, "deleted": len(gone)}, paths


def git_missing(
    store: Store, root: Path, config: Config, walked: set[str], own_files: set[str]
) -> dict[str, str]:
    """Files git tracks that the index lacks, each with the reason it was left out.

    Reasons are the walk's (``noise-dir``, ``lock-file``, ``binary``, …), ``ignored``
    (a .gitignore/.scryignore/exclude pattern matches a file git tracks: the usual
    mistake), ``not-synced`` (would be indexed by the next sync) or ``other``.
    """
    if not (root / ".git").exists():
        return {}
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0:
        return {}
    tracked = {p for p in out.stdout.decode("utf-8", "replace").split("\0") if p}
    indexed = indexed_files.paths(store)
    skipped = set(indexed_files.skipped(store))
    candidates = sorted(tracked - indexed - skipped - own_files)
    if not candidates:
        return {}

    select = Selector(root, config.index)
    missing: dict[str, str] = {}
    for p in candidates:
        full = root / p
        if p in walked:
            missing[p] = "not-synced"
            continue
        if full.is_symlink():
            missing[p] = "symlink"
            continue
        try:
            size = full.stat().st_size
        except OSError:
            continue  # deleted in the working tree, or a submodule
        if not full.is_file():
            continue
        missing[p] = select.reason(p, size) or "other"
    return missing
