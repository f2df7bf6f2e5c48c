"""Incremental sync: walk -> diff -> chunk -> write (lexical first) -> embed what is new.

* A file whose (size, mtime_ns) match the index is not read. A changed stat with the
  same hash only updates the stat. Otherwise the file is re-chunked, and its new chunks
  are diffed against its old ones: an unchanged chunk keeps its row (only its line
  numbers move), so an edit rewrites only the chunks it touched.
* Files, chunks, symbols and FTS rows are committed in batches before any embedding, so
  search works lexically while vectors are computed; each embedding batch is its own
  transaction, so a killed run keeps everything committed and the next run resumes.
* Vectors are reused by chunk text hash: an unchanged, renamed or moved chunk costs no
  embedding. Unreferenced vectors are kept (the ``orphan_keep`` most recently orphaned)
  for branch switches and undos.
* The fingerprint (schema, chunker, tokenizer, embedder, embedded-text recipe) decides
  what a sync must rebuild; each rebuild is announced with one warning line.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scrydb import langs, tokens
from scrydb.chunk import CHUNKER_VERSION, Chunk, chunk_file
from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.search.rank import ENTRY_SHAPES
from scrydb.store import SCHEMA_VERSION, Store, scrydb_version
from scrydb.walk import UTF16_BOMS, WalkedFile, classify_content, failure_reason, walk

#: Files per lexical write transaction (also capped by LEXICAL_BATCH_BYTES).
LEXICAL_BATCH_FILES = 256
LEXICAL_BATCH_BYTES = 4_000_000
#: Pending chunks read from the store per embedding round (sorted by length inside it).
EMBED_PAGE = 2048
#: Texts per embedding transaction: about 3 s of MiniLM on 2 cores, so a killed run loses
#: at most that much work, and a cancel request waits at most that long.
EMBED_COMMIT = 64
#: Bump when the text given to the embedder changes (``embed_header``, the cut): a new
#: value re-embeds every chunk, like a new model.
EMBED_TEXT_VERSION = "1"
#: A sync that timed at least this many texts (after its first model call, which may
#: load the model) records its rate (texts/s) for estimates.
RATE_MIN_TEXTS = 32

#: A file whose mtime is this close before the previous sync's scan is hashed again even
#: when its stat did not change: file systems stamp times coarsely (jiffies on Linux, up
#: to 2 s on FAT), so a second edit right after a sync read the file can keep its stat.
RACY_NS = 2_000_000_000
#: Files read and chunked to estimate a first index (spread evenly over the tree).
ESTIMATE_SAMPLE = 200

#: progress(phase, done, total): phases "scan", "chunk", "embed".
Progress = Callable[[str, int, int], None]


@dataclass
class SyncReport:
    """What one sync did (returned by ``Index.sync``)."""

    files_seen: int = 0
    files_added: int = 0
    files_changed: int = 0
    files_deleted: int = 0
    files_unchanged: int = 0
    chunks_written: int = 0  #: chunk rows inserted (new or changed text)
    chunks_kept: int = 0  #: chunk rows of changed files kept as they were (lines may move)
    chunks_deleted: int = 0
    texts_embedded: int = 0  #: distinct chunk texts sent to the model
    chunks_reused: int = 0  #: new chunk rows that got an existing vector
    vectors_pruned: int = 0
    pending: int = 0  #: chunks still without a vector after this sync
    skipped: Counter[str] = field(default_factory=Counter)
    rebuilt: str | None = None  #: why everything was re-chunked / re-embedded, if it was
    cancelled: bool = False  #: stopped early on request; the next sync resumes
    embed_rate: float | None = None  #: texts/s of the model (loading not counted)
    seconds_scan: float = 0.0
    seconds_lexical: float = 0.0
    seconds_embed: float = 0.0

    @property
    def seconds(self) -> float:
        """Wall time of the whole sync."""
        return self.seconds_scan + self.seconds_lexical + self.seconds_embed

    @property
    def changed(self) -> bool:
        """Whether anything in the index changed."""
        return bool(
            self.files_added
            or self.files_changed
            or self.files_deleted
            or self.texts_embedded
            or self.rebuilt
        )

    def to_json(self) -> dict[str, object]:
        """JSON form (``scry index --json``)."""
        d: dict[str, object] = dict(self.__dict__)
        d["skipped"] = dict(sorted(self.skipped.items()))
        d["seconds"] = round(self.seconds, 3)
        return d


@dataclass
class _Staged:
    """A file read and chunked, waiting to be written."""

    walked: WalkedFile
    lang: str | None
    digest: str
    n_lines: int
    chunks: list[Chunk]
    hashes: list[str]


@dataclass
class Estimate:
    """What a first (or full) index of a tree will cost, from a sample of its files."""

    files: int
    bytes: int
    chunks: int  #: expected chunk rows
    texts: int  #: expected distinct chunk texts (what the model embeds)
    seconds_lexical: float  #: until lexical search works
    seconds_embed: float  #: embedding at ``rate``
    rate: float  #: texts/s
    rate_measured: bool  #: measured on this machine (else the documented default)


def estimate(root: Path, config: Config, rate: float, rate_measured: bool) -> Estimate:
    """Walk ``root`` (stat only), read and chunk a sample of its files, and extrapolate."""
    files = walk(root, config.index).files
    total = sum(f.size for f in files)
    step = max(1, len(files) // ESTIMATE_SAMPLE)
    sample = files[::step][:ESTIMATE_SAMPLE]
    t0 = time.perf_counter()
    s_bytes = s_chunks = 0
    hashes: set[str] = set()
    s_texts = 0
    for f in sample:
        try:
            data = (root / f.path).read_bytes()[: config.index.max_file_bytes + 1]
        except OSError:
            continue
        s_bytes += len(data)
        if len(data) > config.index.max_file_bytes or classify_content(data):
            continue
        chunks = chunk_file(f.path, decode(data), langs.detect(f.path, data[:256]))
        s_chunks += len(chunks)
        for c in chunks:
            h = text_hash(c.content)
            if h not in hashes:
                hashes.add(h)
                s_texts += 1
    elapsed = time.perf_counter() - t0
    scale = total / s_bytes if s_bytes else 0.0
    chunks = round(s_chunks * scale)
    texts = round(s_texts * scale)
    # Writing the rows costs about as much again as chunking; the sample's one-time costs
    # (loading grammars) make up for it on a tree of any size (measured: 10k files).
    return Estimate(
        files=len(files),
        bytes=total,
        chunks=chunks,
        texts=texts,
        seconds_lexical=elapsed * scale,
        seconds_embed=texts / rate if rate > 0 else 0.0,
        rate=rate,
        rate_measured=rate_measured,
    )


def text_hash(content: str) -> str:
    """Key of embedding reuse: blake2b-128 of the chunk content."""
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def read_file(path: Path, size: int, limit: int) -> bytes:
    """A file's bytes, at most ``limit + 1`` (more than ``limit`` means too large).

    Unbuffered and sized by the stat the walk took, so reading a file allocates what it
    holds plus one byte (a buffered ``read(limit + 1)`` allocates ``limit`` bytes for
    every file, however small; ``tests/test_perf_gates.py`` holds this). A file that grew
    since its stat is read on, up to the limit.
    """
    want = min(max(size, 0), limit) + 1
    with open(path, "rb", buffering=0) as fh:
        data = fh.read(want)
        # A regular file returns less only at its end; all of it means it grew.
        while len(data) == want and want <= limit:
            more = fh.read(min(limit + 1 - len(data), max(len(data), 65536)))
            if not more:
                break
            data += more
            want = len(data)
    return data


def file_hash(data: bytes) -> str:
    """blake2b-128 of a file's bytes (decides whether a touched file really changed)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode(data: bytes) -> str:
    """UTF-8 text of a file (BOM dropped, invalid bytes replaced, never an error); a file
    that starts with a UTF-16 byte order mark is read as UTF-16."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith(UTF16_BOMS):
        return data.decode("utf-16", errors="replace").replace("\x00", "\ufffd")
    return data.decode("utf-8", errors="replace")


def embed_header(repo: str, path: str, symbol: str | None) -> str:
    """The context line put before a chunk's text when it is embedded (not shown)."""
    return f"{repo} > {path} > {symbol}\n" if symbol else f"{repo} > {path}\n"


def embed_recipe(config: Config) -> str:
    """What, besides the model's id, decides a stored vector: the text recipe version,
    the cut, a configured dimension and document prefix. Part of the fingerprint."""
    recipe = f"{EMBED_TEXT_VERSION}:{config.index.embed_max_chars}"
    if config.embed.dim:
        recipe += f":d{config.embed.dim}"
    if config.embed.document_prefix:
        digest = hashlib.blake2b(config.embed.document_prefix.encode(), digest_size=4)
        recipe += f":p{digest.hexdigest()}"
    return recipe


def fingerprint(config: Config, embedder_id: str | None) -> dict[str, str | None]:
    """What this scrydb would write: meta key -> value. A stored value that differs
    makes the next sync rebuild (chunker, tokenizer: re-chunk; embedder, embed_text:
    re-embed)."""
    return {
        "chunker": CHUNKER_VERSION,
        "tokenizer": tokens.TOKENIZER_VERSION,
        "embedder": embedder_id,
        "embed_text": embed_recipe(config),
    }


class Syncer:
    """Brings one store up to date with one working tree.

    ``embedder`` builds the model (called only when there is something to embed);
    ``embedder_id`` is its identity, known without loading it: the fingerprint is
    checked with it even when this sync does not embed. ``exclude`` holds paths (relative
    to the root) that are never indexed: the index's own files when it lives in the tree.
    ``cancel`` is polled between batches; when it returns True the sync stops early,
    leaving a consistent index that the next sync completes.
    """

    def __init__(
        self,
        store: Store,
        root: Path,
        config: Config,
        embedder: Callable[[], Embedder] | None,
        progress: Progress | None = None,
        warn: Callable[[str], None] | None = None,
        *,
        embedder_id: str | None = None,
        exclude: Iterable[str] = (),
        cancel: Callable[[], bool] | None = None,
    ) -> None:
        self.store = store
        self.root = root
        self.config = config
        self._embedder_factory = embedder
        self.embedder_id = embedder_id
        self.exclude = frozenset(exclude)
        self.progress = progress or (lambda phase, done, total: None)
        self.warn = warn or (lambda msg: None)
        self.cancel = cancel or (lambda: False)
        self.report = SyncReport()
        self.repo_name = root.name
        self._names_new: set[str] = set()  #: symbols.norm values written in this transaction
        self._names_gone: set[str] = set()  #: ... and deleted (may still exist elsewhere)
        self._read_failures: Counter[str] = Counter()  #: files the walk saw but none could read
        self._dropped: list[int] = []  #: ids of indexed files the next batch drops (now skipped)

    # -- the whole run -----------------------------------------------------------------

    def run(self, full: bool = False, embed: bool = True) -> SyncReport:
        """One sync. The caller holds the store's writer lock for its duration."""
        t0 = time.perf_counter()
        scan_ns = time.time_ns()
        if not (self.root.is_dir() and os.access(self.root, os.R_OK | os.X_OK)):
            # A vanished or unreadable root must not read as "every file was deleted".
            raise ScryError(f"cannot read the repository root {self.root}; the index is unchanged")
        self._check_fingerprint(full)
        result = walk(self.root, self.config.index)
        if "" in result.unlisted:
            raise ScryError(f"cannot list the repository root {self.root}; the index is unchanged")
        files = [f for f in result.files if f.path not in self.exclude]
        self.report.skipped.update(result.skipped)
        self.report.files_seen = len(files)
        existing = {
            path: (fid, size, mtime, digest)
            for fid, path, size, mtime, digest in self.store.rows(
                "SELECT id, path, size, mtime_ns, hash FROM files"
            )
        }
        skipped_before = {
            p: (reason, size, mtime)
            for p, reason, size, mtime in self.store.rows(
                "SELECT path, reason, size, mtime_ns FROM skipped"
            )
        }
        # "Racily clean" files (git's term): changed so shortly before the last sync's
        # scan that a second change within the file system's timestamp granularity
        # could have kept their stat. They are hashed once more.
        racy_after = int(self.store.meta("scan_ns") or 0) - RACY_NS
        todo: list[WalkedFile] = []
        for f in files:
            old = existing.get(f.path)
            if old is not None and old[1] == f.size and old[2] == f.mtime_ns:
                if racy_after <= 0 or f.mtime_ns < racy_after:
                    self.report.files_unchanged += 1
                    continue
            sk = skipped_before.get(f.path)
            if sk is not None and old is None and sk[1] == f.size and sk[2] == f.mtime_ns:
                if racy_after <= 0 or f.mtime_ns < racy_after:  # (racily clean: read again)
                    self.report.skipped[sk[0]] += 1
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
        self.report.seconds_scan = time.perf_counter() - t0

        t1 = time.perf_counter()
        complete = self._write_lexical(todo, existing, deleted, stale_skips)
        # Only after a complete pass: a rebuild stopped half-way has many vectors that are
        # unreferenced only until the rest of the files are written again.
        if complete and (
            self.report.chunks_deleted or self.report.chunks_reused or self.report.rebuilt
        ):
            self._track_orphans()
        self.report.seconds_lexical = time.perf_counter() - t1

        if complete and embed and self._embedder_factory is not None:
            t2 = time.perf_counter()
            self._embed_pending()
            self.report.seconds_embed = time.perf_counter() - t2
        self.report.pending = (
            self.store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0
        )
        with self.store.transaction():
            if complete:
                self.store.set_meta("last_sync", str(time.time()))
                self.store.set_meta("scan_ns", str(scan_ns))
                self.store.set_meta("files_seen", str(self.report.files_seen))
                self.store.set_meta(
                    "skipped_walk", _counter_text(result.skipped + self._read_failures)
                )
            if self.report.embed_rate:
                self.store.set_meta("embed_rate", f"{self.report.embed_rate:.2f}")
        return self.report

    def _cancelled(self) -> bool:
        if not self.report.cancelled and self.cancel():
            self.report.cancelled = True
        return self.report.cancelled

    # -- fingerprint -------------------------------------------------------------------

    def _check_fingerprint(self, full: bool) -> None:
        s = self.store
        fp = fingerprint(self.config, self.embedder_id)
        want = {"chunker": fp["chunker"], "tokenizer": fp["tokenizer"]}
        have = {k: s.meta(k) for k in want}
        fresh = s.scalar("SELECT count(*) FROM files") == 0 and have["chunker"] is None
        with s.transaction():
            if full:
                self._clear_lexical()
                s.drop_vectors()
                self.report.rebuilt = "--full"
            elif s.rebuilt_from is not None:
                # Store found a schema it cannot migrate and started the file afresh.
                self.warn(
                    f"index schema changed ({s.rebuilt_from} -> {SCHEMA_VERSION}): "
                    "rebuilding the index from nothing"
                )
                self.report.rebuilt = f"schema {s.rebuilt_from} -> {SCHEMA_VERSION}"
            elif not fresh and have != want:
                changed = ", ".join(
                    f"{k} {have[k]} -> {want[k]}" for k in want if have[k] != want[k]
                )
                self.warn(
                    f"index format changed ({changed}): re-indexing every file (vectors are reused)"
                )
                self._clear_lexical()
                self.report.rebuilt = changed
            s.rebuilt_from = None
            for k, v in want.items():
                if have[k] != v and v is not None:
                    s.set_meta(k, v)
            if s.meta("root") != str(self.root):
                s.set_meta("root", str(self.root))
            if s.meta("scrydb_version") != scrydb_version():
                s.set_meta("scrydb_version", scrydb_version())
            self._check_embedder()

    def _check_embedder(self) -> None:
        """Drop every vector when the model or the embedded-text recipe changed."""
        s = self.store
        new_id = self.embedder_id
        if new_id is None:
            return
        recipe = embed_recipe(self.config)
        old_id, old_recipe = s.meta("embedder"), s.meta("embed_text")
        differs = []
        if old_id is not None and old_id != new_id:
            differs.append(f"embedding model changed ({old_id} -> {new_id})")
        if old_recipe is not None and old_recipe != recipe:
            differs.append(f"embedded text changed ({old_recipe} -> {recipe})")
        if differs and s.scalar("SELECT 1 FROM embeddings LIMIT 1"):
            self.warn(
                f"{'; '.join(differs)}: re-embedding every chunk (lexical search works meanwhile)"
            )
            s.drop_vectors()
            self.report.rebuilt = self.report.rebuilt or "; ".join(differs)
        if old_id != new_id:
            s.set_meta("embedder", new_id)
        if old_recipe != recipe:
            s.set_meta("embed_text", recipe)

    def _clear_lexical(self) -> None:
        c = self.store.conn
        c.execute("DELETE FROM chunks_fts")
        c.execute("DELETE FROM symbols")
        c.execute("DELETE FROM chunks")
        c.execute("DELETE FROM files")
        c.execute("DELETE FROM skipped")
        c.execute("DELETE FROM symbol_names")
        self.store.bump("lex_epoch")

    # -- lexical phase -----------------------------------------------------------------

    def _write_lexical(
        self,
        todo: list[WalkedFile],
        existing: dict[str, tuple[int, int, int, str]],
        deleted: list[tuple[str, int]],
        stale_skips: list[str],
    ) -> bool:
        """Write deletions, then the changed files in batches. False when cancelled."""
        total = len(todo)
        if deleted or stale_skips:
            with self.store.transaction():
                for _path, fid in deleted:
                    self._delete_file(fid)
                self.store.conn.executemany(
                    "DELETE FROM skipped WHERE path = ?", [(p,) for p in stale_skips]
                )
                self.report.files_deleted = len(deleted)
                self._flush_names()
                self.store.bump("lex_epoch")
        batch: list[_Staged] = []
        touched: list[tuple[int, int, int]] = []  # (file id, size, mtime) with same hash
        skips: list[tuple[str, str, int, int]] = []
        batch_bytes = 0
        complete = True
        for i, f in enumerate(todo):
            staged = self._read(f, existing.get(f.path), touched, skips)
            if staged is not None:
                batch.append(staged)
                batch_bytes += f.size
            if len(batch) >= LEXICAL_BATCH_FILES or batch_bytes >= LEXICAL_BATCH_BYTES:
                self._commit_lexical(batch, existing, touched, skips)
                batch, touched, skips, batch_bytes = [], [], [], 0
                if i < total - 1 and self._cancelled():
                    complete = False
                    break
            self.progress("chunk", i + 1, total)
        self._commit_lexical(batch, existing, touched, skips)
        return complete

    def _read(
        self,
        f: WalkedFile,
        old: tuple[int, int, int, str] | None,
        touched: list[tuple[int, int, int]],
        skips: list[tuple[str, str, int, int]],
    ) -> _Staged | None:
        try:
            data = read_file(self.root / f.path, f.size, self.config.index.max_file_bytes)
        except OSError as e:
            # Not kept in the skipped table: the next sync tries again (permissions fixed,
            # the file back). FileNotFoundError: deleted since the walk saw it.
            reason = failure_reason(e)
            self.report.skipped[reason] += 1
            self._read_failures[reason] += 1
            return None
        reason = (
            "too-large"
            if len(data) > self.config.index.max_file_bytes
            else classify_content(data, self.config.index.skip_secrets)
        )
        if reason is not None:
            self.report.skipped[reason] += 1
            skips.append((f.path, reason, f.size, f.mtime_ns))
            if old is not None:  # indexed before (a key pasted in, now binary): drop it
                self._dropped.append(old[0])
            return None
        digest = file_hash(data)
        if old is not None and old[3] == digest:
            touched.append((old[0], f.size, f.mtime_ns))
            self.report.files_unchanged += 1
            return None
        text = decode(data)
        lang = langs.detect(f.path, data[:256])
        chunks = chunk_file(f.path, text, lang)
        n_lines = text.count("\n") + 1 if text else 0
        return _Staged(f, lang, digest, n_lines, chunks, [text_hash(c.content) for c in chunks])

    def _commit_lexical(
        self,
        batch: list[_Staged],
        existing: dict[str, tuple[int, int, int, str]],
        touched: list[tuple[int, int, int]],
        skips: list[tuple[str, str, int, int]],
    ) -> None:
        if not (batch or touched or skips):
            return
        s = self.store
        c = s.conn
        now = time.time()
        with s.transaction():
            reuse = self._lookup_embeddings(h for st in batch for h in st.hashes)
            c.executemany(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
                [(sz, mt, fid) for fid, sz, mt in touched],
            )
            c.executemany(
                "INSERT OR REPLACE INTO skipped(path, reason, size, mtime_ns) VALUES (?, ?, ?, ?)",
                skips,
            )
            for fid in self._dropped:
                self._delete_file(fid)
            self.report.files_deleted += len(self._dropped)
            self._dropped.clear()
            for st in batch:
                f = st.walked
                old = existing.get(f.path)
                if old is not None:
                    fid = old[0]
                    c.execute(
                        "UPDATE files SET lang = ?, size = ?, mtime_ns = ?, hash = ?, n_lines = ?, indexed_at = ? WHERE id = ?",
                        (st.lang, f.size, f.mtime_ns, st.digest, st.n_lines, now, fid),
                    )
                    fresh = self._diff_chunks(fid, st)
                    self.report.files_changed += 1
                else:
                    c.execute("DELETE FROM skipped WHERE path = ?", (f.path,))
                    c.execute(
                        "INSERT INTO files(path, lang, size, mtime_ns, hash, n_lines, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (f.path, st.lang, f.size, f.mtime_ns, st.digest, st.n_lines, now),
                    )
                    fid = c.last_insert_rowid()
                    fresh = list(zip(st.chunks, st.hashes, strict=True))
                    self.report.files_added += 1
                self._insert_chunks(fid, f.path, fresh, reuse)
            self._flush_names()
            s.bump("lex_epoch")

    def _lookup_embeddings(self, hashes: Iterable[str]) -> dict[str, int]:
        """text_hash -> embedding id for the hashes that already have a vector."""
        wanted = sorted(set(hashes))
        if not wanted:
            return {}
        return dict(
            self.store.rows(
                "SELECT e.text_hash, e.id FROM json_each(?) AS j "
                "JOIN embeddings AS e ON e.text_hash = j.value",
                (json.dumps(wanted),),
            )
        )

    def _diff_chunks(self, fid: int, st: _Staged) -> list[tuple[Chunk, str]]:
        """Keep the rows of a changed file's chunks that did not change; delete the rest.

        A chunk is unchanged when its text, kind, symbol and definitions (relative to its
        first line) are: its FTS row is then identical, only its lines may have moved.
        Returns the new chunks that still need rows.
        """
        s = self.store
        c = s.conn
        defs: dict[int, list[tuple[str, str, str, int]]] = defaultdict(list)
        for cid, name, qual, kind, line in s.rows(
            "SELECT chunk_id, name, qualname, kind, line FROM symbols WHERE file_id = ?", (fid,)
        ):
            defs[cid].append((name, qual, kind, line))
        pool: dict[tuple[object, ...], list[tuple[int, int]]] = defaultdict(list)
        for cid, start, end, kind, sym, h in s.rows(
            "SELECT id, start_line, end_line, kind, symbol, text_hash FROM chunks WHERE file_id = ?",
            (fid,),
        ):
            rel = tuple(sorted((n, q, k, ln - start) for n, q, k, ln in defs.get(cid, ())))
            pool[(h, kind, sym, end - start, rel)].append((cid, start))
        fresh: list[tuple[Chunk, str]] = []
        moves: list[tuple[int, int]] = []
        for ch, h in zip(st.chunks, st.hashes, strict=True):
            rel = tuple(
                sorted((d.name, d.qualname, d.kind, d.line - ch.start_line) for d in ch.defs)
            )
            kept = pool.get((h, ch.kind, ch.symbol, ch.end_line - ch.start_line, rel))
            if kept:
                cid, start = kept.pop()
                if start != ch.start_line:
                    moves.append((ch.start_line - start, cid))
                self.report.chunks_kept += 1
            else:
                fresh.append((ch, h))
        gone = [(cid,) for rows in pool.values() for cid, _ in rows]
        if gone:
            self._names_gone.update(
                normalise_name(d[0]) for (cid,) in gone for d in defs.get(cid, ())
            )
            c.executemany("DELETE FROM chunks_fts WHERE rowid = ?", gone)
            c.executemany("DELETE FROM symbols WHERE chunk_id = ?", gone)
            c.executemany("DELETE FROM chunks WHERE id = ?", gone)
            self.report.chunks_deleted += len(gone)
        if moves:
            c.executemany(
                "UPDATE chunks SET start_line = start_line + ?1, end_line = end_line + ?1 WHERE id = ?2",
                moves,
            )
            c.executemany("UPDATE symbols SET line = line + ?1 WHERE chunk_id = ?2", moves)
        return fresh

    def _insert_chunks(
        self, fid: int, path: str, chunks: list[tuple[Chunk, str]], reuse: dict[str, int]
    ) -> None:
        c = self.store.conn
        stem_text, dir_text = tokens.path_texts(path)
        for ch, h in chunks:
            emb = reuse.get(h)
            entry = 1 if ENTRY_SHAPES.search(ch.content) else 0
            c.execute(
                "INSERT INTO chunks(file_id, start_line, end_line, kind, symbol, content, text_hash, emb_id, entry) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (fid, ch.start_line, ch.end_line, ch.kind, ch.symbol, ch.content, h, emb, entry),
            )
            cid = c.last_insert_rowid()
            if emb is not None:
                self.report.chunks_reused += 1
            names = [ch.symbol] if ch.symbol else []
            names += [d.qualname for d in ch.defs if d.qualname != ch.symbol]
            c.execute(
                "INSERT INTO chunks_fts(rowid, symbol, stem, path, body) VALUES (?, ?, ?, ?, ?)",
                (
                    cid,
                    tokens.symbol_text(names),
                    stem_text,
                    dir_text,
                    tokens.index_text(ch.content),
                ),
            )
            if ch.defs:
                self._names_new.update(normalise_name(d.name) for d in ch.defs)
                c.executemany(
                    "INSERT INTO symbols(name, norm, qualname, kind, file_id, chunk_id, line) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (d.name, normalise_name(d.name), d.qualname, d.kind, fid, cid, d.line)
                        for d in ch.defs
                    ],
                )
            self.report.chunks_written += 1

    def _delete_chunks(self, fid: int) -> int:
        c = self.store.conn
        self._names_gone.update(
            r[0] for r in self.store.rows("SELECT norm FROM symbols WHERE file_id = ?", (fid,))
        )
        n = self.store.scalar("SELECT count(*) FROM chunks WHERE file_id = ?", (fid,)) or 0
        c.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)",
            (fid,),
        )
        c.execute("DELETE FROM symbols WHERE file_id = ?", (fid,))
        c.execute("DELETE FROM chunks WHERE file_id = ?", (fid,))
        return n

    def _delete_file(self, fid: int) -> None:
        self.report.chunks_deleted += self._delete_chunks(fid)
        self.store.conn.execute("DELETE FROM files WHERE id = ?", (fid,))

    def _flush_names(self) -> None:
        """Bring ``symbol_names`` (fuzzy expansion) in line with the symbols written or
        deleted in the current transaction, so it is never behind, even after a kill."""
        c = self.store.conn
        if self._names_new:
            c.execute(
                "INSERT OR IGNORE INTO symbol_names(name) SELECT value FROM json_each(?)",
                (json.dumps(sorted(self._names_new)),),
            )
        if self._names_gone:
            c.execute(
                "DELETE FROM symbol_names WHERE name IN (SELECT value FROM json_each(?)) "
                "AND NOT EXISTS (SELECT 1 FROM symbols WHERE symbols.norm = symbol_names.name)",
                (json.dumps(sorted(self._names_gone)),),
            )
        self._names_new.clear()
        self._names_gone.clear()

    # -- orphan vectors ----------------------------------------------------------------

    def _track_orphans(self) -> None:
        """Stamp vectors that lost their last chunk, unstamp reused ones, and drop the
        oldest orphans beyond ``orphan_keep`` (their chunks are long gone)."""
        s = self.store
        if not s.has_table("vec_float"):
            return
        now = time.time()
        with s.transaction():
            c = s.conn
            c.execute(
                "UPDATE embeddings SET orphaned_at = NULL WHERE orphaned_at IS NOT NULL "
                "AND EXISTS (SELECT 1 FROM chunks WHERE chunks.emb_id = embeddings.id)"
            )
            c.execute(
                "UPDATE embeddings SET orphaned_at = ? WHERE orphaned_at IS NULL "
                "AND NOT EXISTS (SELECT 1 FROM chunks WHERE chunks.emb_id = embeddings.id)",
                (now,),
            )
            drop = [
                (r[0],)
                for r in s.rows(
                    "SELECT id FROM embeddings WHERE orphaned_at IS NOT NULL "
                    "ORDER BY orphaned_at DESC, id DESC LIMIT -1 OFFSET ?",
                    (max(0, self.config.index.orphan_keep),),
                )
            ]
            if drop:
                c.executemany("DELETE FROM vec_float WHERE rowid = ?", drop)
                c.executemany("DELETE FROM vec_bit WHERE rowid = ?", drop)
                c.executemany("DELETE FROM embeddings WHERE id = ?", drop)
                s.bump("vec_epoch")
        self.report.vectors_pruned += len(drop)

    # -- embedding phase ---------------------------------------------------------------

    def embedder(self) -> Embedder:
        """The embedder (built on first use; loading it may take seconds)."""
        if not hasattr(self, "_embedder"):
            assert self._embedder_factory is not None
            self._embedder = self._embedder_factory()
        return self._embedder

    def _ensure_vec_tables(self, emb: Embedder) -> None:
        s = self.store
        dim = emb.dim
        have = s.vec_dim()
        if have == dim:
            return
        with s.transaction():
            if have is not None:
                self.warn(
                    f"embedding dimension changed ({have} -> {dim}): re-embedding every chunk"
                )
                s.drop_vectors()
                self.report.rebuilt = self.report.rebuilt or f"dimension {have} -> {dim}"
            s.create_vec_tables(dim)

    def _pending_texts(self) -> int:
        return (
            self.store.scalar("SELECT count(DISTINCT text_hash) FROM chunks WHERE emb_id IS NULL")
            or 0
        )

    def _embed_pending(self) -> None:
        """Embed every distinct pending chunk text, one transaction per EMBED_COMMIT."""
        s = self.store
        if not s.scalar("SELECT 1 FROM chunks WHERE emb_id IS NULL LIMIT 1"):
            return
        emb = self.embedder()
        self._ensure_vec_tables(emb)
        total = self._pending_texts()
        done = 0
        self.progress("embed", 0, total)
        max_chars = self.config.index.embed_max_chars
        last_id = 0
        calls = rate_texts = 0
        rate_s = 0.0
        while not self._cancelled():
            # Keyset pages over the chunks_emb index: no scan or sort of all pending rows.
            page = s.rows(
                "SELECT c.id, c.text_hash, c.content, c.symbol, f.path FROM chunks c "
                "JOIN files f ON f.id = c.file_id WHERE c.emb_id IS NULL AND c.id > ? "
                "ORDER BY c.id LIMIT ?",
                (last_id, EMBED_PAGE),
            )
            if not page:
                break
            last_id = page[-1][0]
            texts: dict[str, str] = {}
            for _cid, h, content, sym, path in page:
                if h not in texts:
                    texts[h] = embed_header(self.repo_name, path, sym) + content[:max_chars]
            known = self._lookup_embeddings(texts)
            if known:  # a vector exists but was not linked (cannot normally happen)
                with s.transaction():
                    s.conn.executemany(
                        "UPDATE chunks SET emb_id = ? WHERE text_hash = ? AND emb_id IS NULL",
                        [(eid, h) for h, eid in known.items()],
                    )
            items = sorted(
                ((h, t) for h, t in texts.items() if h not in known), key=lambda it: len(it[1])
            )  # similar lengths batch with little padding
            for i in range(0, len(items), EMBED_COMMIT):
                if self._cancelled():
                    break
                part = items[i : i + EMBED_COMMIT]
                t0 = time.perf_counter()
                vecs = emb.embed_documents([t for _, t in part])
                if calls:  # the first call may include loading the model
                    rate_texts += len(part)
                    rate_s += time.perf_counter() - t0
                calls += 1
                self._store_vectors([h for h, _ in part], vecs)
                done += len(part)
                self.report.texts_embedded += len(part)
                self.progress("embed", done, max(total, done))
        if rate_texts >= RATE_MIN_TEXTS and rate_s > 0:
            self.report.embed_rate = rate_texts / rate_s

    def _store_vectors(self, hashes: list[str], vecs: np.ndarray) -> None:
        s = self.store
        c = s.conn
        with s.transaction():
            # Ids only grow (meta.emb_seq survives deletions), so readers can tell new
            # vectors from old ones by id alone.
            seq = max(int(s.meta("emb_seq") or 0), s.scalar("SELECT max(id) FROM embeddings") or 0)
            rows = []
            for h, v in zip(hashes, vecs, strict=True):
                eid = s.scalar("SELECT id FROM embeddings WHERE text_hash = ?", (h,))
                if eid is None:
                    seq += 1
                    eid = seq
                    c.execute("INSERT INTO embeddings(id, text_hash) VALUES (?, ?)", (eid, h))
                else:
                    c.execute("DELETE FROM vec_float WHERE rowid = ?", (eid,))
                    c.execute("DELETE FROM vec_bit WHERE rowid = ?", (eid,))
                rows.append((eid, np.ascontiguousarray(v, dtype=np.float32).tobytes(), h))
            c.executemany(
                "INSERT INTO vec_float(rowid, embedding) VALUES (?, ?)", [r[:2] for r in rows]
            )
            c.executemany(
                "INSERT INTO vec_bit(rowid, embedding) VALUES (?, vec_quantize_binary(?))",
                [r[:2] for r in rows],
            )
            c.executemany(
                "UPDATE chunks SET emb_id = ? WHERE text_hash = ? AND emb_id IS NULL",
                [(eid, h) for eid, _, h in rows],
            )
            s.set_meta("emb_seq", str(seq))
            s.bump("vec_epoch")


def normalise_name(name: str) -> str:
    """Symbol name -> squashed lower-case words (``getUserById`` == ``get_user_by_id``)."""
    words = tokens.split_identifier(name)
    return "".join(words) if words else name.lower()


def _counter_text(c: Counter[str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(c.items()))


def file_stat(path: Path) -> tuple[int, int] | None:
    """(size, mtime_ns) of a file, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns
