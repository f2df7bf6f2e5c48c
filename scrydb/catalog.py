"""The indexes in the per-user cache directory: ``scry repos`` lists them (root, whether
it still exists, last sync, chunks, model), and a repository given by name (``scry
search --repo NAME``, the MCP ``search`` tool's ``repos``) is found among them.

An index file there is ``NAME-HASH.db`` (:func:`scrydb.paths.default_db_path`); its
``meta`` table records the root it indexes (``root``), when a lexical pass last completed
(``last_sync``) and the model it is indexed with (``embedder``). Indexes placed elsewhere with
``--db``/``SCRY_DB`` are not in the cache directory and are not listed. Nothing here
writes: every file is opened read-only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scrydb.errors import ScryError, shown
from scrydb.paths import cache_dir, default_db_path, find_root, repo_name, storable
from scrydb.store import Store, counts, friendly_errors

#: How an index file in the cache directory is named (``NAME-HASH.db``); a damaged file
#: set aside (``.db.damaged``) and the vector cache's files (in ``vectors/``) are not.
INDEX_GLOB = "*.db"

#: Most characters of a repository spec an error message repeats (a spec can be any
#: text an agent sends).
SHOWN_MAX = 200


@dataclass
class IndexedRepo:
    """One index file of the cache directory, as ``scry repos`` lists it."""

    name: str  #: the root's folder name (the file's name before its hash without a root)
    root: str | None  #: the repository it indexes (``meta.root``); None if unreadable
    db: str  #: the index file
    root_exists: bool  #: the root is still a directory (``--all-repos`` searches only these)
    last_sync: float | None  #: when a lexical pass last completed (epoch seconds)
    chunks: int | None  #: chunks in the index
    model: str | None  #: the embedder it is indexed with (``meta.embedder``; None: not yet)
    error: str | None = None  #: why the file could not be read (damaged, old schema, ...)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``scry repos --json``)."""
        return asdict(self)


def indexed_repos(folder: Path | None = None) -> list[IndexedRepo]:
    """Every index file in ``folder`` (default: :func:`scrydb.paths.cache_dir`), by name
    then root; an unreadable one is listed with its ``error``."""
    where = folder if folder is not None else cache_dir()
    try:
        files = sorted(p for p in where.glob(INDEX_GLOB) if p.is_file())
    except OSError:
        return []
    entries = [read_entry(p) for p in files]
    return sorted(entries, key=lambda e: (e.name, e.root or "", e.db))


def read_entry(db: Path) -> IndexedRepo:
    """What the index file ``db`` records about itself (read-only)."""
    fallback = db.stem.rsplit("-", 1)[0] or db.stem
    try:
        store = Store(db, readonly=True)
    except ScryError as e:
        return IndexedRepo(fallback, None, str(db), False, None, None, None, str(e))
    try:
        with friendly_errors(db):
            root = store.meta("root")
            last = store.meta("last_sync")
            model = store.meta("embedder")
            chunks = counts.chunks(store)
    except ScryError as e:  # a damaged file: listed, with the reason
        return IndexedRepo(fallback, None, str(db), False, None, None, None, str(e))
    finally:
        store.close()
    return IndexedRepo(
        name=Path(root).name if root else fallback,
        root=root,
        db=str(db),
        root_exists=root is not None and Path(root).is_dir(),
        last_sync=float(last) if last else None,
        chunks=chunks,
        model=model,
    )


@dataclass(frozen=True)
class RepoSource:
    """A repository to search: its root and its index file."""

    root: Path
    db: Path

    @classmethod
    def of_root(cls, root: Path) -> RepoSource:
        """``root`` with its index in the cache directory (``SCRY_DB`` names the index
        of one repository, so it never stands for each of several)."""
        return cls(root, default_db_path(root, env=False))


def resolve_repo(spec: str, base: Path | None = None) -> RepoSource:
    """The repository ``spec`` names: a directory (relative to ``base``, default the
    current directory), meaning the repository containing it; an index file; or the name
    of an indexed repository (its root's folder name, or its git ``origin``'s name). A
    spec that is none of these, or a name that several indexes share, is a ScryError
    (one line, the spec shown escaped: it comes from an agent or a command line)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ScryError("empty repository name: give a repository's path or name")
    name = shown(spec[:SHOWN_MAX]) + ("…" if len(spec) > SHOWN_MAX else "")
    if not storable(spec):
        raise ScryError(f"no repository {name}: not text a path or a name can hold")
    try:
        p = Path(spec).expanduser()
        full = p if p.is_absolute() else (base or Path.cwd()) / p
        if full.is_dir():
            return RepoSource.of_root(find_root(full))
        is_file = full.is_file()
    except (OSError, RuntimeError) as e:  # a name too long, "~nosuchuser", no permission
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise ScryError(f"no repository {name}: {why}") from None
    if is_file:
        entry = read_entry(full.resolve())
        if entry.error or not entry.root:
            raise ScryError(f"{name} is not a readable scrydb index: {entry.error or 'no root'}")
        return RepoSource(Path(entry.root), full.resolve())
    entries = indexed_repos()
    named = [e for e in entries if e.root and spec in (e.name, repo_name(Path(e.root)))]
    live = [e for e in named if e.root_exists]
    if len(live) == 1 and live[0].root:
        return RepoSource(Path(live[0].root), Path(live[0].db))
    if len(live) > 1:
        roots = ", ".join(str(e.root) for e in live)
        raise ScryError(f"{name} names {len(live)} indexed repositories ({roots}): give a path")
    if named:
        raise ScryError(f"the indexed repository {name} is gone: {named[0].root} no longer exists")
    raise ScryError(
        f"no repository {name}: not a directory, and no index of that name "
        "(`scry repos` lists the indexed repositories)"
    )


def all_repo_sources(folder: Path | None = None) -> list[RepoSource]:
    """Every index of the cache directory whose root still exists (``--all-repos``)."""
    return [
        RepoSource(Path(e.root), Path(e.db))
        for e in indexed_repos(folder)
        if e.root and e.root_exists and not e.error
    ]


def display_names(roots: list[Path]) -> list[str]:
    """A short, distinct name per root: its folder name, with parent folders added
    where two roots share it (``work/api``, ``old/api``)."""
    depth = [1] * len(roots)

    def name(i: int) -> str:
        parts = roots[i].parts
        return "/".join(parts[-depth[i] :]) if depth[i] < len(parts) else str(roots[i])

    while True:
        names = [name(i) for i in range(len(roots))]
        clash = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clash and depth[i] < len(roots[i].parts)]
        if not grow:
            return names
        for i in grow:
            depth[i] += 1
