"""Change detection: which files of the walk a sync must read, which indexed files are
gone, and which skips are stale. Stat only: a file whose (size, mtime_ns) match the index
is not read (unless it is "racily clean")."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from scrydb.config import Config
from scrydb.errors import ScryError
from scrydb.store import Store
from scrydb.store import files as indexed_files
from scrydb.sync.base import RACY_NS, SyncReport
from scrydb.sync.read import DECODER_VERSION
from scrydb.walk import WalkedFile, walk


@dataclass
class Changes:
    """What a sync must do to the lexical index."""

    todo: list[WalkedFile]  #: files to read (new, changed, or racily clean)
    existing: dict[str, tuple[int, int, int, str]]  #: indexed path -> (id, size, mtime, hash)
    deleted: list[tuple[str, int]]  #: indexed files gone from the tree: (path, id)
    stale_skips: list[str]  #: skipped paths no longer in the tree
    walk_skipped: Counter[str]  #: what the walk skipped, per reason


def detect(
    store: Store, root: Path, config: Config, exclude: frozenset[str], report: SyncReport
) -> Changes:
    """Walk ``root`` and diff it against the index (counts go to ``report``)."""
    result = walk(root, config.index)
    if "" in result.unlisted:
        raise ScryError(f"cannot list the repository root {root}; the index is unchanged")
    files = [f for f in result.files if f.path not in exclude]
    report.skipped.update(result.skipped)
    report.files_seen = len(files)
    existing = indexed_files.states(store)
    if existing and store.meta("decoder") != DECODER_VERSION:
        # Text decoded by an older rule: files that held undecodable bytes are read again
        # (a blank hash never matches their bytes).
        for path in indexed_files.paths_with_text(store, "\ufffd") & existing.keys():
            existing[path] = (*existing[path][:3], "")
    skipped_before = indexed_files.skipped(store)
    # "Racily clean" files (git's term): changed so shortly before the last sync's
    # scan that a second change within the file system's timestamp granularity
    # could have kept their stat. They are hashed once more.
    racy_after = int(store.meta("scan_ns") or 0) - RACY_NS
    todo: list[WalkedFile] = []
    for f in files:
        old = existing.get(f.path)
        if old is not None and old[1] == f.size and old[2] == f.mtime_ns and old[3]:
            if racy_after <= 0 or f.mtime_ns < racy_after:
                report.files_unchanged += 1
                continue
        sk = skipped_before.get(f.path)
        if sk is not None and old is None and sk[1] == f.size and sk[2] == f.mtime_ns:
            if racy_after <= 0 or f.mtime_ns < racy_after:  # (racily clean: read again)
                report.skipped[sk[0]] += 1
                continue
        todo.append(f)
    walked = {f.path for f in files}
    # Files under a directory that could not be listed are kept as they were.
    unlisted = tuple(d + "/" for d in result.unlisted)
    deleted = [
        (p, v[0])
        for p, v in existing.items()
        if p not in walked and not (unlisted and p.startswith(unlisted))
    ]
    stale_skips = [p for p in skipped_before if p not in walked]
    return Changes(todo, existing, deleted, stale_skips, result.skipped)
