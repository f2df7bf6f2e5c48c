"""The public API: :func:`open` a repository's index, then ``sync``, ``search``, ``read``,
``related``, ``locate`` and ``status``.

    import scrydb
    with scrydb.open("path/to/repo") as ix:
        ix.sync()
        for hit in ix.search("where is the retry backoff computed"):
            print(hit.location, hit.symbol)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import platformdirs

from scrydb import tokens
from scrydb.chunk import CHUNKER_VERSION
from scrydb.config import Config, find_config
from scrydb.embed import Embedder, embedder_id, make_embedder
from scrydb.errors import IndexError_, ScryError
from scrydb.results import ReadResult, Results
from scrydb.search.engine import SearchEngine
from scrydb.store import SCHEMA_VERSION, Store
from scrydb.sync import Progress, Syncer, SyncReport
from scrydb.walk import walk

#: Files that mark a repository root when looking upwards from a directory.
ROOT_MARKERS = (".git", ".scry.toml", ".hg", ".svn")
#: Most lines ``read`` serves in one call.
READ_MAX_LINES = 400
#: ``status`` warns loudly when more git-tracked files than this are missing.
MISSING_WARN = 5


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The repository root containing ``start``: the nearest directory upwards that has a
    ``.git`` (or ``.scry.toml``, ``.hg``) or an index already; else ``start`` itself."""
    p = Path(start or os.getcwd()).resolve()
    if not p.exists():
        raise ScryError(f"no such directory: {start}")
    if not p.is_dir():
        raise ScryError(f"not a directory: {start}")
    for d in (p, *p.parents):
        if any((d / m).exists() for m in ROOT_MARKERS) or default_db_path(d, env=False).exists():
            return d
    return p


def default_db_path(root: Path, env: bool = True) -> Path:
    """Where the index of ``root`` lives by default: ``$SCRY_DB``, else the per-user cache
    directory keyed by the root's absolute path (two clones of one remote are two
    working trees, so they get two indexes)."""
    env_db = os.environ.get("SCRY_DB") if env else None
    if env_db:
        return Path(env_db).expanduser().resolve()
    key = hashlib.blake2b(str(root.resolve()).encode(), digest_size=6).hexdigest()
    cache = Path(os.environ.get("SCRY_CACHE_DIR") or platformdirs.user_cache_dir("scrydb"))
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in root.name) or "root"
    return cache / f"{name}-{key}.db"


@dataclass
class Status:
    """What ``Index.status()`` reports (``scry status``)."""

    root: str
    db: str
    db_bytes: int
    files: int
    chunks: int
    symbols: int
    vectors: int
    pending: int  #: chunks still waiting for a vector
    skipped: dict[str, int]
    last_sync: float | None
    fingerprint: dict[str, str | None]
    stale: dict[str, int] | None = None  #: added/changed/deleted vs the working tree
    git_missing: list[str] = field(default_factory=list)  #: tracked by git, not indexed
    git_missing_count: int = 0
    langs: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


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
    ) -> None:
        if root is None:
            self.root = find_root(None)
        else:
            self.root = Path(root).expanduser().resolve()
            if not self.root.exists():
                raise ScryError(f"no such directory: {root}")
            if not self.root.is_dir():
                raise ScryError(f"not a directory: {root}")
        self.config = config if isinstance(config, Config) else find_config(self.root, config)
        self.db_path = Path(db).expanduser().resolve() if db else default_db_path(self.root)
        self.store = Store(self.db_path, readonly=readonly)
        owner = self.store.meta("root")
        if owner is not None and owner != str(self.root) and Path(owner).exists():
            self.store.close()
            raise IndexError_(
                f"index {self.db_path} belongs to {owner}, not {self.root}; pass another --db or rebuild it there"
            )
        self._embedder = embedder
        self.engine = SearchEngine(self.store, self.config, self.embedder)

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
        if self._embedder is None:
            self._embedder = make_embedder(self.config.embed)
        return self._embedder

    # -- writing -----------------------------------------------------------------------

    def sync(
        self,
        full: bool = False,
        embed: bool = True,
        progress: Progress | None = None,
        warn: Any = None,
        wait: bool = True,
        on_wait: Any = None,
    ) -> SyncReport:
        """Bring the index up to date with the working tree (incremental).

        ``full`` rebuilds from nothing; ``embed=False`` stops after the lexical phase
        (chunks are searchable lexically; the next sync embeds them). ``wait=False``
        raises :class:`~scrydb.errors.LockedError` when another process is indexing.
        """
        if self.store.readonly:
            raise ScryError("index opened read-only")
        self.store.writer_lock(wait=wait, on_wait=on_wait)
        try:
            syncer = Syncer(
                self.store,
                self.root,
                self.config,
                self.embedder if embed else None,
                progress=progress,
                warn=warn,
            )
            return syncer.run(full=full, embed=embed)
        finally:
            self.store.release_writer_lock()

    # -- reading -----------------------------------------------------------------------

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
        """The ``k`` best chunks for ``query``.

        ``lang`` (e.g. ``"python"`` or ``"ts,tsx"``) and ``path`` (a directory prefix or
        a glob) are hard filters applied in both legs. ``mode`` is ``fused`` (default),
        ``lexical`` or ``dense`` (one leg alone, for evaluation). ``rerank=False`` skips
        a configured reranker leg.
        """
        return self.engine.search(
            query, k=k, lang=lang, path=path, explain=explain, mode=mode, rerank=rerank
        )

    def read(
        self,
        path: str,
        start: int | None = None,
        end: int | None = None,
        max_lines: int = READ_MAX_LINES,
    ) -> ReadResult:
        """Lines ``start``..``end`` of an indexed file, served from the index itself.

        Only paths that were indexed are served: no ``..``, no absolute paths, nothing
        outside the root; the text comes from the stored chunks, not from the disk.
        """
        rel = safe_relpath(path)
        row = self.store.rows("SELECT id, lang, n_lines FROM files WHERE path = ?", (rel,))
        if not row:
            raise ScryError(f"not an indexed file: {path}")
        fid, lang, _n_lines = row[0]
        chunks = self.store.rows(
            "SELECT start_line, end_line, kind, symbol, content FROM chunks WHERE file_id = ? ORDER BY start_line",
            (fid,),
        )
        last = chunks[-1][1] if chunks else 0
        a = 1 if start is None else int(start)
        b = last if end is None else int(end)
        if a < 1 or b < a:
            raise ScryError(f"bad line range {a}-{b} for {rel}")
        b = min(b, last)
        truncated = False
        if b - a + 1 > max_lines:
            b, truncated = a + max_lines - 1, True
        lines: dict[int, str] = {}
        spans = []
        for s, e, kind, sym, content in chunks:
            if e < a or s > b:
                continue
            spans.append((s, e, kind, sym))
            for i, line in enumerate(content.split("\n")):
                lines[s + i] = line
        text = "\n".join(lines.get(i, "") for i in range(a, b + 1)) if b >= a else ""
        return ReadResult(rel, a, max(a, b) if b >= a else a, text, lang, truncated, spans)

    def related(self, path: str, line: int, k: int = 10) -> Results:
        """Chunks nearest (by embedding) to the chunk at ``path:line``, other files first."""
        from scrydb.search.related import related

        return related(self, safe_relpath(path), line, k)

    def locate(
        self,
        text: str,
        k: int = 50,
        lang: str | None = None,
        path: str | None = None,
        ignore_case: bool = False,
    ) -> list[dict[str, Any]]:
        """Exact literal matches of ``text`` in the indexed chunks, with line numbers."""
        from scrydb.search.locate import locate

        return locate(self, text, k=k, lang=lang, path=path, ignore_case=ignore_case)

    def status(self, check_stale: bool = True, check_git: bool = True) -> Status:
        """Counts, freshness and fingerprint of the index."""
        s = self.store
        skipped: Counter[str] = Counter()
        for reason, n in s.rows("SELECT reason, count(*) FROM skipped GROUP BY reason"):
            skipped[reason] += n
        for part in (s.meta("skipped_walk") or "").split(","):
            if "=" in part:
                k, v = part.split("=", 1)
                skipped[k] += int(v)
        last = s.meta("last_sync")
        size = 0
        for suffix in ("", "-wal"):
            try:
                size += os.path.getsize(str(self.db_path) + suffix)
            except OSError:
                pass
        fp = {
            "schema": s.meta("schema"),
            "schema_supported": str(SCHEMA_VERSION),
            "embedder": s.meta("embedder"),
            "embed_dim": s.meta("embed_dim"),
            "chunker": s.meta("chunker"),
            "tokenizer": s.meta("tokenizer"),
            "current_embedder": embedder_id(self.config.embed),
            "current_chunker": CHUNKER_VERSION,
            "current_tokenizer": tokens.TOKENIZER_VERSION,
        }
        st = Status(
            root=str(self.root),
            db=str(self.db_path),
            db_bytes=size,
            files=s.scalar("SELECT count(*) FROM files") or 0,
            chunks=s.scalar("SELECT count(*) FROM chunks") or 0,
            symbols=s.scalar("SELECT count(*) FROM symbols") or 0,
            vectors=s.scalar("SELECT count(*) FROM embeddings") or 0,
            pending=s.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0,
            skipped=dict(sorted(skipped.items())),
            last_sync=float(last) if last else None,
            fingerprint=fp,
            langs={
                (lang or "text"): n
                for lang, n in s.rows(
                    "SELECT lang, count(*) FROM files GROUP BY lang ORDER BY 2 DESC"
                )
            },
        )
        if check_stale:
            st.stale = self._staleness()
        if check_git:
            missing = self._git_missing()
            st.git_missing_count = len(missing)
            st.git_missing = missing[:20]
        return st

    def _staleness(self) -> dict[str, int]:
        indexed = {
            p: (size, mt)
            for p, size, mt in self.store.rows("SELECT path, size, mtime_ns FROM files")
        }
        skipped = {
            p: (size, mt)
            for p, size, mt in self.store.rows("SELECT path, size, mtime_ns FROM skipped")
        }
        result = walk(self.root, self.config.index)
        added = changed = 0
        seen = set()
        for f in result.files:
            seen.add(f.path)
            old = indexed.get(f.path) or skipped.get(f.path)
            if old is None:
                added += 1
            elif old != (f.size, f.mtime_ns):
                changed += 1
        deleted = sum(1 for p in indexed if p not in seen)
        return {"added": added, "changed": changed, "deleted": deleted}

    def _git_missing(self) -> list[str]:
        """Files git tracks that are neither indexed nor skipped for a counted reason."""
        if not (self.root / ".git").exists():
            return []
        try:
            out = subprocess.run(
                ["git", "-C", str(self.root), "ls-files", "-z", "--cached"],
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return []
        if out.returncode != 0:
            return []
        tracked = [p for p in out.stdout.decode("utf-8", "replace").split("\0") if p]
        indexed = {r[0] for r in self.store.rows("SELECT path FROM files")}
        skipped = {r[0] for r in self.store.rows("SELECT path FROM skipped")}
        from scrydb.walk import BINARY_EXTENSIONS, DATA_EXTENSIONS, LOCK_FILES

        missing = []
        for p in tracked:
            if p in indexed or p in skipped:
                continue
            name = p.rsplit("/", 1)[-1]
            ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
            if name in LOCK_FILES or ext in BINARY_EXTENSIONS or ext in DATA_EXTENSIONS:
                continue
            if not (self.root / p).is_file() or (self.root / p).is_symlink():
                continue
            missing.append(p)
        return missing


def safe_relpath(path: str) -> str:
    """A user-supplied path as a clean relative POSIX path, or a :class:`ScryError`.

    Refuses absolute paths, ``..`` components, NUL bytes, backslashes and
    percent-encoded separators; the result must still be looked up among indexed files.
    """
    if not isinstance(path, str) or not path.strip():
        raise ScryError("empty path")
    p = path.strip()
    if "\x00" in p or "\\" in p:
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
) -> Index:
    """Open (creating if needed) the index of the repository at ``root``.

    ``root`` defaults to the repository containing the working directory; ``db`` to a
    file in the per-user cache (or ``$SCRY_DB``); ``config`` to ``root/.scry.toml``.
    """
    return Index(root, db, config, readonly=readonly, embedder=embedder)
