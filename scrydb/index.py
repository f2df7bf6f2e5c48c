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
import hashlib
import json
import os
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ParamSpec, TypeVar

import platformdirs

from scrydb.config import Config, find_config
from scrydb.embed import Embedder, embedder_id, make_embedder
from scrydb.errors import IndexError_, ScryError
from scrydb.results import ReadResult, Results
from scrydb.search.engine import SearchEngine
from scrydb.store import SCHEMA_VERSION, IndexWriteError, Store, friendly_errors
from scrydb.sync import (
    Estimate,
    Progress,
    Syncer,
    SyncReport,
    estimate,
    fingerprint,
)
from scrydb.walk import walk

#: Files that mark a repository root when looking upwards from a directory.
ROOT_MARKERS = (".git", ".scry.toml", ".hg", ".svn")
#: Most lines ``read`` serves in one call.
READ_MAX_LINES = 400
#: ``status`` warns loudly when more git-tracked files than this are missing.
MISSING_WARN = 5
#: Texts/s assumed for an embedder never measured here: the packaged MiniLM on 2 cores
#: with 1,500-char chunks (DESIGN.md).
DEFAULT_EMBED_RATE = 22.0
#: Measured embedding rates per embedder id (JSON), in the cache directory.
EMBED_RATES_FILE = "embed-rates.json"

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
    cache = cache_dir()
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in root.name) or "root"
    return cache / f"{name}-{key}.db"


def cache_dir() -> Path:
    """The per-user cache directory (``$SCRY_CACHE_DIR`` or the platform's)."""
    return Path(os.environ.get("SCRY_CACHE_DIR") or platformdirs.user_cache_dir("scrydb"))


def record_embed_rate(embedder: str, rate: float) -> None:
    """Remember an embedder's measured rate (texts/s) for first-index estimates."""
    path = cache_dir() / EMBED_RATES_FILE
    try:
        rates = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(rates, dict):
            rates = {}
    except (OSError, ValueError):
        rates = {}
    old = rates.get(embedder)
    # Smooth: one slow run (a busy machine) must not halve the next estimate.
    rates[embedder] = round(rate if not isinstance(old, int | float) else (old + rate) / 2, 2)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rates, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # an estimate is not worth an error


def embed_rate(embedder: str) -> tuple[float, bool]:
    """(texts/s, measured?) of an embedder: the rate measured here, else DEFAULT_EMBED_RATE."""
    try:
        rates = json.loads((cache_dir() / EMBED_RATES_FILE).read_text(encoding="utf-8"))
        rate = rates.get(embedder) if isinstance(rates, dict) else None
        if isinstance(rate, int | float) and rate > 0:
            return float(rate), True
    except (OSError, ValueError):
        pass
    return DEFAULT_EMBED_RATE, False


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
    vectors: int  #: distinct vectors in use (orphans not counted)
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
    #: "hybrid", "hybrid-partial" (some chunks wait for vectors), "lexical" or "empty"
    search: str = "empty"
    rebuild: list[str] = field(default_factory=list)  #: what the next sync will rebuild, and why
    stale_paths: list[str] = field(default_factory=list)  #: first few stale paths
    #: git-tracked files the index lacks, per reason (see DELIBERATE_SKIPS)
    git_tracked_skipped: dict[str, int] = field(default_factory=dict)
    git_warning: bool = False  #: more than MISSING_WARN suspicious git-tracked files missing
    writer_active: bool = False  #: a sync is running right now
    embed_rate: float | None = None  #: texts/s measured by the last syncs that embedded

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
            self.root = Path(root).expanduser().resolve()
            if not self.root.exists():
                raise ScryError(f"no such directory: {root}")
            if not self.root.is_dir():
                raise ScryError(f"not a directory: {root}")
        self.config = config if isinstance(config, Config) else find_config(self.root, config)
        self.db_path = Path(db).expanduser().resolve() if db else default_db_path(self.root)
        self.store = Store(self.db_path, readonly=readonly, recover=recover)
        with friendly_errors(self.db_path):
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
    ) -> SyncReport:
        """Bring the index up to date with the working tree (incremental).

        ``full`` rebuilds from nothing; ``embed=False`` stops after the lexical phase
        (chunks are searchable lexically; the next sync embeds them). ``wait`` decides
        what happens when another process is indexing: ``True`` waits (``on_wait()`` is
        called once first), a number waits at most that many seconds, ``False`` does not
        wait; a lock not taken raises :class:`~scrydb.errors.LockedError`. ``cancel`` is
        polled between batches: when it returns True the sync stops early
        (``report.cancelled``), keeping everything committed for the next sync.
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
                self.embedder if embed else None,
                progress=progress,
                warn=warn,
                embedder_id=self.embedder_id(),
                exclude=self.own_files(),
                cancel=cancel,
            )
            report = syncer.run(full=full, embed=embed)
        finally:
            self.store.release_writer_lock()
        if report.embed_rate:
            record_embed_rate(self.embedder_id(), report.embed_rate)
        return report

    def _replace_if_damaged(self, warn: Callable[[str], None] | None) -> None:
        """Before a full rebuild: a file that fails SQLite's quick check is moved aside
        (``<db>.damaged``) and a new one takes its place (deleting rows from a damaged
        b-tree would keep the damage)."""
        problem = self.store.check()
        if problem is None:
            return
        aside = self.store.reopen_fresh()
        self.store.moved_aside = None
        self.engine = SearchEngine(self.store, self.config, self.embedder)
        if warn is not None:
            warn(
                f"index {self.db_path} was damaged ({problem}): moved to {aside}; "
                "rebuilding it from nothing"
            )

    def estimate(self) -> Estimate:
        """What indexing this tree from nothing would cost (files, chunks, time at the
        embedding rate measured on this machine, else the documented default)."""
        rate, measured = embed_rate(self.embedder_id())
        return estimate(self.root, self.config, rate, measured)

    def embedder_id(self) -> str:
        """Identity of the embedder this index embeds with (nothing is loaded)."""
        if self._embedder is not None:
            return self._embedder.id
        return embedder_id(self.config.embed)

    def own_files(self) -> set[str]:
        """The index's own files, relative to the root, when ``--db`` put them in the tree."""
        try:
            rel = self.db_path.relative_to(self.root)
        except ValueError:
            return set()
        base = rel.as_posix()
        suffixes = ("", "-wal", "-shm", "-journal", ".lock", ".damaged", ".damaged-wal")
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
        """The ``k`` best chunks for ``query``.

        ``lang`` (e.g. ``"python"`` or ``"ts,tsx"``) and ``path`` (a directory prefix or
        a glob) are hard filters applied in both legs. ``mode`` is ``fused`` (default),
        ``lexical`` or ``dense`` (one leg alone, for evaluation). ``rerank=False`` skips
        a configured reranker leg.
        """
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

        Only paths that were indexed are served: no ``..``, no absolute paths, nothing
        outside the root; the text comes from the stored chunks, not from the disk.
        """
        rel = self._indexed_path(path)
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
        if chunks and a > last:
            raise ScryError(f"{rel} has {last} indexed lines; line {a} is past its end")
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

    @_file_errors
    def related(self, path: str, line: int, k: int = 10) -> Results:
        """Chunks nearest (by embedding) to the chunk at ``path:line``, other files first."""
        from scrydb.search.related import related

        return related(self, self._indexed_path(path), line, k)

    def _indexed_path(self, path: str) -> str:
        """The indexed path a user-supplied one names: the exact path of an indexed file
        as given (every file name the walk accepts, ``~x.py``, `` a.py`` and ``a\\b.py``
        included: indexed paths are inside the root by construction), else
        :func:`safe_relpath` of it (which refuses anything that could leave the root)."""
        if isinstance(path, str) and path and _storable(path):
            if self.store.scalar("SELECT 1 FROM files WHERE path = ?", (path,)):
                return path
        return safe_relpath(path)

    @_file_errors
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

    @_file_errors
    def status(self, check_stale: bool = True, check_git: bool = True) -> Status:
        """Counts, freshness and fingerprint of the index.

        ``check_stale`` walks the working tree (stat only) to count what a sync would
        change; ``check_git`` asks git which tracked files the index lacks, and why.
        """
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
        want = fingerprint(self.config, self.embedder_id())
        fp: dict[str, str | None] = {
            "schema": s.meta("schema"),
            "schema_supported": str(SCHEMA_VERSION),
            "embed_dim": s.meta("embed_dim"),
            "scrydb_version": s.meta("scrydb_version"),
        }
        rebuild = []
        for key, value in want.items():
            fp[key] = s.meta(key)
            fp["current_" + key] = value
            if fp[key] is not None and fp[key] != value:
                rebuild.append(f"{key} {fp[key]} -> {value}")
        n_emb = s.scalar("SELECT count(*) FROM embeddings") or 0
        orphans = (
            s.scalar(
                "SELECT count(*) FROM embeddings e WHERE NOT EXISTS "
                "(SELECT 1 FROM chunks c WHERE c.emb_id = e.id)"
            )
            or 0
        )
        chunks = s.scalar("SELECT count(*) FROM chunks") or 0
        pending = s.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0
        rate = s.meta("embed_rate")
        st = Status(
            root=str(self.root),
            db=str(self.db_path),
            db_bytes=size,
            files=s.scalar("SELECT count(*) FROM files") or 0,
            chunks=chunks,
            symbols=s.scalar("SELECT count(*) FROM symbols") or 0,
            vectors=n_emb - orphans,
            pending=pending,
            pending_texts=(
                s.scalar("SELECT count(DISTINCT text_hash) FROM chunks WHERE emb_id IS NULL") or 0
            ),
            orphan_vectors=orphans,
            search=(
                "empty"
                if not chunks
                else "lexical"
                if n_emb == orphans
                else "hybrid-partial"
                if pending
                else "hybrid"
            ),
            skipped=dict(sorted(skipped.items())),
            last_sync=float(last) if last else None,
            fingerprint=fp,
            rebuild=rebuild,
            langs={
                (lang or "text"): n
                for lang, n in s.rows(
                    "SELECT lang, count(*) FROM files GROUP BY lang ORDER BY 2 DESC"
                )
            },
            writer_active=s.writer_active(),
            embed_rate=float(rate) if rate else None,
        )
        walked: set[str] | None = None
        if check_stale or check_git:
            result = walk(self.root, self.config.index)
            own = self.own_files()
            files = [f for f in result.files if f.path not in own]
            walked = {f.path for f in files}
            if check_stale:
                st.stale, st.stale_paths = self._staleness(files, result.unlisted)
        if check_git:
            missing = self._git_missing(walked or set())
            reasons = Counter(missing.values())
            st.git_tracked_skipped = dict(sorted(reasons.items()))
            suspicious = sorted(p for p, r in missing.items() if r not in DELIBERATE_SKIPS)
            st.git_missing_count = len(suspicious)
            st.git_missing = suspicious[:20]
            st.git_warning = len(suspicious) > MISSING_WARN
        return st

    def _staleness(
        self, files: list[Any], unlisted: Sequence[str] = ()
    ) -> tuple[dict[str, int], list[str]]:
        """What a sync would change: counts of added/changed/deleted files, a few paths."""
        indexed = {
            p: (size, mt)
            for p, size, mt in self.store.rows("SELECT path, size, mtime_ns FROM files")
        }
        skipped = {
            p: (size, mt)
            for p, size, mt in self.store.rows("SELECT path, size, mtime_ns FROM skipped")
        }
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

    def _git_missing(self, walked: set[str]) -> dict[str, str]:
        """Files git tracks that the index lacks, each with the reason it was left out.

        Reasons are the walk's (``noise-dir``, ``lock-file``, ``binary``, …), ``ignored``
        (a .gitignore/.scryignore/exclude pattern matches a file git tracks: the usual
        mistake), ``not-synced`` (would be indexed by the next sync) or ``other``.
        """
        if not (self.root / ".git").exists():
            return {}
        try:
            out = subprocess.run(
                ["git", "-C", str(self.root), "ls-files", "-z", "--cached"],
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return {}
        if out.returncode != 0:
            return {}
        tracked = {p for p in out.stdout.decode("utf-8", "replace").split("\0") if p}
        indexed = {r[0] for r in self.store.rows("SELECT path FROM files")}
        skipped = {r[0] for r in self.store.rows("SELECT path FROM skipped")}
        candidates = sorted(tracked - indexed - skipped - self.own_files())
        if not candidates:
            return {}
        from scrydb.walk import NOISE_DIRS, IgnoreRules, name_reason

        rules = IgnoreRules(self.root, self.config.index)
        loaded: set[str] = set()

        def load(d: str) -> None:
            if d not in loaded:
                rules.load_dir(d, self.root / d if d else self.root)
                loaded.add(d)

        missing: dict[str, str] = {}
        for p in candidates:
            full = self.root / p
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
            parts = p.split("/")
            if any(
                d in NOISE_DIRS or d.endswith(".egg-info") or d.startswith("bazel-")
                for d in parts[:-1]
            ):
                missing[p] = "noise-dir"
                continue
            reason = name_reason(p, parts[-1], size, self.config.index)
            if reason is None:
                load("")
                for i in range(1, len(parts)):
                    d = "/".join(parts[:i])
                    if rules.ignored(d, True):
                        reason = "ignored"
                        break
                    load(d)
                else:
                    if rules.ignored(p, False):
                        reason = "ignored"
            missing[p] = reason or "other"
        return missing


def _storable(text: str) -> bool:
    """Whether ``text`` is valid Unicode without NULs (no lone surrogates, which an
    argument of undecodable bytes or a JSON ``\\ud800`` escape can carry)."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def safe_relpath(path: str) -> str:
    """A user-supplied path as a clean relative POSIX path, or a :class:`ScryError`.

    Refuses absolute paths, ``..`` components, NUL bytes, backslashes and
    percent-encoded separators; the result must still be looked up among indexed files.
    """
    if not isinstance(path, str) or not path.strip():
        raise ScryError("empty path")
    p = path.strip()
    if "\x00" in p or "\\" in p or not _storable(p):
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
