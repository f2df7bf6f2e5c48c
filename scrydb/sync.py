"""Incremental sync: walk -> diff -> chunk -> write (lexical first) -> embed what is new.

* A file whose (size, mtime_ns) match the index is not read. A changed stat with the
  same hash only updates the stat. Otherwise the file is re-chunked.
* Files, chunks, symbols and FTS rows are committed in batches before any embedding, so
  search works lexically while vectors are computed; each embedding batch is its own
  transaction, so a killed run keeps everything committed and the next run resumes.
* Vectors are reused by chunk text hash: an unchanged, renamed or moved chunk costs no
  embedding. Unreferenced vectors are kept (up to ``orphan_keep``) for branch switches.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scrydb import langs, tokens
from scrydb.chunk import CHUNKER_VERSION, Chunk, chunk_file
from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.search.rank import ENTRY_SHAPES
from scrydb.store import Store
from scrydb.walk import WalkedFile, classify_content, walk

#: Files per lexical write transaction (also capped by LEXICAL_BATCH_BYTES).
LEXICAL_BATCH_FILES = 256
LEXICAL_BATCH_BYTES = 4_000_000
#: Chunk texts read from the store per embedding round (sorted by length inside it).
EMBED_PAGE = 2048
#: Texts per embedding transaction: a killed run loses at most this much work.
EMBED_COMMIT = 256

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
    chunks_written: int = 0
    chunks_deleted: int = 0
    texts_embedded: int = 0  #: distinct chunk texts sent to the model
    chunks_reused: int = 0  #: new chunk rows that got an existing vector
    vectors_pruned: int = 0
    pending: int = 0  #: chunks still without a vector after this sync
    skipped: Counter[str] = field(default_factory=Counter)
    rebuilt: str | None = None  #: why everything was re-chunked / re-embedded, if it was
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
            self.files_added or self.files_changed or self.files_deleted or self.texts_embedded
        )


@dataclass
class _Staged:
    """A file read and chunked, waiting to be written."""

    walked: WalkedFile
    lang: str | None
    digest: str
    n_lines: int
    chunks: list[Chunk]


def text_hash(content: str) -> str:
    """Key of embedding reuse: blake2b-128 of the chunk content."""
    return hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def file_hash(data: bytes) -> str:
    """blake2b-128 of a file's bytes (decides whether a touched file really changed)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode(data: bytes) -> str:
    """UTF-8 text of a file (BOM dropped, invalid bytes replaced, never an error)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def embed_header(repo: str, path: str, symbol: str | None) -> str:
    """The context line put before a chunk's text when it is embedded (not shown)."""
    return f"{repo} > {path} > {symbol}\n" if symbol else f"{repo} > {path}\n"


class Syncer:
    """Brings one store up to date with one working tree."""

    def __init__(
        self,
        store: Store,
        root: Path,
        config: Config,
        embedder: Callable[[], Embedder] | None,
        progress: Progress | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.root = root
        self.config = config
        self._embedder_factory = embedder
        self.progress = progress or (lambda phase, done, total: None)
        self.warn = warn or (lambda msg: None)
        self.report = SyncReport()
        self.repo_name = root.name

    # -- the whole run -----------------------------------------------------------------

    def run(self, full: bool = False, embed: bool = True) -> SyncReport:
        """One sync. Holds the store's writer lock for its duration."""
        t0 = time.perf_counter()
        self._check_fingerprint(full)
        result = walk(self.root, self.config.index)
        self.report.skipped.update(result.skipped)
        self.report.files_seen = len(result.files)
        existing = {
            path: (fid, size, mtime, digest)
            for fid, path, size, mtime, digest in self.store.rows(
                "SELECT id, path, size, mtime_ns, hash FROM files"
            )
        }
        skipped_before = {
            p: (reason, size, mtime)
            for p, reason, size, mtime in self.store.rows("SELECT * FROM skipped")
        }
        todo: list[WalkedFile] = []
        for f in result.files:
            old = existing.get(f.path)
            if old is not None and old[1] == f.size and old[2] == f.mtime_ns:
                self.report.files_unchanged += 1
                continue
            sk = skipped_before.get(f.path)
            if sk is not None and old is None and sk[1] == f.size and sk[2] == f.mtime_ns:
                self.report.skipped[sk[0]] += 1
                continue
            todo.append(f)
        walked = {f.path for f in result.files}
        deleted = [(p, v[0]) for p, v in existing.items() if p not in walked]
        stale_skips = [p for p in skipped_before if p not in walked]
        self.report.seconds_scan = time.perf_counter() - t0

        t1 = time.perf_counter()
        self._write_lexical(todo, existing, deleted, stale_skips)
        self.report.seconds_lexical = time.perf_counter() - t1

        if embed and self._embedder_factory is not None:
            t2 = time.perf_counter()
            self._embed_pending()
            self._prune_orphans()
            self.report.seconds_embed = time.perf_counter() - t2
        self.report.pending = (
            self.store.scalar("SELECT count(*) FROM chunks WHERE emb_id IS NULL") or 0
        )
        with self.store.transaction():
            self.store.set_meta("last_sync", str(time.time()))
            self.store.set_meta("files_seen", str(self.report.files_seen))
            self.store.set_meta("skipped_walk", _counter_text(result.skipped))
        return self.report

    # -- fingerprint -------------------------------------------------------------------

    def _check_fingerprint(self, full: bool) -> None:
        s = self.store
        root = str(self.root)
        old_root = s.meta("root")
        want = {"chunker": CHUNKER_VERSION, "tokenizer": tokens.TOKENIZER_VERSION}
        have = {k: s.meta(k) for k in want}
        fresh = s.scalar("SELECT count(*) FROM files") == 0 and have["chunker"] is None
        with s.transaction():
            if full:
                self._clear_lexical()
                s.drop_vectors()
                self.report.rebuilt = "--full"
            elif not fresh and have != want:
                changed = ", ".join(
                    f"{k} {have[k]} -> {want[k]}" for k in want if have[k] != want[k]
                )
                self.warn(
                    f"index format changed ({changed}): re-indexing every file (vectors are reused)"
                )
                self._clear_lexical()
                self.report.rebuilt = changed
            for k, v in want.items():
                s.set_meta(k, v)
            if old_root != root:
                s.set_meta("root", root)
            if self._embedder_factory is not None:
                self._check_embedder_id()

    def _check_embedder_id(self) -> None:
        from scrydb.embed import embedder_id

        s = self.store
        new_id = embedder_id(self.config.embed)
        old_id = s.meta("embedder")
        if old_id is not None and old_id != new_id and s.scalar("SELECT count(*) FROM embeddings"):
            self.warn(f"embedding model changed ({old_id} -> {new_id}): re-embedding every chunk")
            s.drop_vectors()
            self.report.rebuilt = self.report.rebuilt or f"embedder {old_id} -> {new_id}"
        s.set_meta("embedder", new_id)

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
    ) -> None:
        total = len(todo)
        if deleted or stale_skips:
            with self.store.transaction():
                for _path, fid in deleted:
                    self._delete_file(fid)
                self.store.conn.executemany(
                    "DELETE FROM skipped WHERE path = ?", [(p,) for p in stale_skips]
                )
                self.report.files_deleted = len(deleted)
                self.store.bump("lex_epoch")
        batch: list[_Staged] = []
        touched: list[tuple[int, int, int]] = []  # (file id, size, mtime) with same hash
        skips: list[tuple[str, str, int, int]] = []
        batch_bytes = 0
        for i, f in enumerate(todo):
            staged = self._read(f, existing.get(f.path), touched, skips)
            if staged is not None:
                batch.append(staged)
                batch_bytes += f.size
            if (
                len(batch) >= LEXICAL_BATCH_FILES
                or batch_bytes >= LEXICAL_BATCH_BYTES
                or i == total - 1
            ):
                self._commit_lexical(batch, existing, touched, skips)
                batch, touched, skips, batch_bytes = [], [], [], 0
            self.progress("chunk", i + 1, total)
        if batch or touched or skips:
            self._commit_lexical(batch, existing, touched, skips)
        if self.report.files_added or self.report.files_changed or deleted:
            with self.store.transaction():
                self._refresh_symbol_names()

    def _read(
        self,
        f: WalkedFile,
        old: tuple[int, int, int, str] | None,
        touched: list[tuple[int, int, int]],
        skips: list[tuple[str, str, int, int]],
    ) -> _Staged | None:
        try:
            with open(self.root / f.path, "rb") as fh:
                data = fh.read(self.config.index.max_file_bytes + 1)
        except OSError:
            self.report.skipped["unreadable"] += 1
            return None
        if len(data) > self.config.index.max_file_bytes:
            self.report.skipped["too-large"] += 1
            skips.append((f.path, "too-large", f.size, f.mtime_ns))
            return None
        reason = classify_content(data, self.config.index.skip_secrets)
        if reason is not None:
            self.report.skipped[reason] += 1
            skips.append((f.path, reason, f.size, f.mtime_ns))
            return None
        digest = file_hash(data)
        if old is not None and old[3] == digest:
            touched.append((old[0], f.size, f.mtime_ns))
            self.report.files_unchanged += 1
            return None
        text = decode(data)
        lang = langs.detect(f.path, data[:256])
        chunks = chunk_file(f.path, text, lang)
        return _Staged(f, lang, digest, text.count("\n") + 1 if text else 0, chunks)

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
            c.executemany(
                "UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?",
                [(sz, mt, fid) for fid, sz, mt in touched],
            )
            c.executemany(
                "INSERT OR REPLACE INTO skipped(path, reason, size, mtime_ns) VALUES (?, ?, ?, ?)",
                skips,
            )
            for st in batch:
                f = st.walked
                old = existing.get(f.path)
                if old is not None:
                    self.report.chunks_deleted += self._delete_chunks(old[0])
                    c.execute(
                        "UPDATE files SET lang = ?, size = ?, mtime_ns = ?, hash = ?, n_lines = ?, indexed_at = ? WHERE id = ?",
                        (st.lang, f.size, f.mtime_ns, st.digest, st.n_lines, now, old[0]),
                    )
                    fid = old[0]
                    self.report.files_changed += 1
                else:
                    c.execute("DELETE FROM skipped WHERE path = ?", (f.path,))
                    c.execute(
                        "INSERT INTO files(path, lang, size, mtime_ns, hash, n_lines, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (f.path, st.lang, f.size, f.mtime_ns, st.digest, st.n_lines, now),
                    )
                    fid = c.last_insert_rowid()
                    self.report.files_added += 1
                self._insert_chunks(fid, f.path, st.chunks)
            s.bump("lex_epoch")

    def _insert_chunks(self, fid: int, path: str, chunks: list[Chunk]) -> None:
        c = self.store.conn
        stem_text, dir_text = tokens.path_texts(path)
        for ch in chunks:
            h = text_hash(ch.content)
            emb = self.store.scalar("SELECT id FROM embeddings WHERE text_hash = ?", (h,))
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

    def _refresh_symbol_names(self) -> None:
        c = self.store.conn
        c.execute("INSERT OR IGNORE INTO symbol_names(name) SELECT DISTINCT norm FROM symbols")
        c.execute(
            "DELETE FROM symbol_names WHERE NOT EXISTS (SELECT 1 FROM symbols WHERE symbols.norm = symbol_names.name)"
        )

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

    def _embed_pending(self) -> None:
        s = self.store
        total = s.scalar("SELECT count(DISTINCT text_hash) FROM chunks WHERE emb_id IS NULL") or 0
        if total == 0:
            return
        emb = self.embedder()
        self._ensure_vec_tables(emb)
        total = s.scalar("SELECT count(DISTINCT text_hash) FROM chunks WHERE emb_id IS NULL") or 0
        done = 0
        self.progress("embed", 0, total)
        max_chars = self.config.index.embed_max_chars
        while True:
            page = s.rows(
                "SELECT c.text_hash, c.content, c.symbol, f.path FROM chunks c JOIN files f ON f.id = c.file_id "
                "WHERE c.emb_id IS NULL GROUP BY c.text_hash LIMIT ?",
                (EMBED_PAGE,),
            )
            if not page:
                break
            items = [
                (h, embed_header(self.repo_name, path, sym) + content[:max_chars])
                for h, content, sym, path in page
            ]
            items.sort(key=lambda it: len(it[1]))  # similar lengths batch with little padding
            for i in range(0, len(items), EMBED_COMMIT):
                part = items[i : i + EMBED_COMMIT]
                vecs = emb.embed_documents([t for _, t in part])
                self._store_vectors([h for h, _ in part], vecs)
                done += len(part)
                self.report.texts_embedded += len(part)
                self.progress("embed", done, max(total, done))

    def _store_vectors(self, hashes: list[str], vecs: np.ndarray) -> None:
        s = self.store
        c = s.conn
        with s.transaction():
            for h, v in zip(hashes, vecs, strict=True):
                c.execute("INSERT OR IGNORE INTO embeddings(text_hash) VALUES (?)", (h,))
                eid = s.scalar("SELECT id FROM embeddings WHERE text_hash = ?", (h,))
                blob = np.ascontiguousarray(v, dtype=np.float32).tobytes()
                c.execute("DELETE FROM vec_float WHERE rowid = ?", (eid,))
                c.execute("DELETE FROM vec_bit WHERE rowid = ?", (eid,))
                c.execute("INSERT INTO vec_float(rowid, embedding) VALUES (?, ?)", (eid, blob))
                c.execute(
                    "INSERT INTO vec_bit(rowid, embedding) VALUES (?, vec_quantize_binary(?))",
                    (eid, blob),
                )
                c.execute(
                    "UPDATE chunks SET emb_id = ? WHERE text_hash = ? AND emb_id IS NULL", (eid, h)
                )
            s.bump("vec_epoch")

    def _prune_orphans(self) -> None:
        s = self.store
        if not s.has_table("vec_float"):
            return
        orphans = [
            r[0]
            for r in s.rows(
                "SELECT e.id FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.emb_id = e.id)"
            )
        ]
        if len(orphans) <= self.config.index.orphan_keep:
            return
        with s.transaction():
            c = s.conn
            for eid in orphans:
                c.execute("DELETE FROM vec_float WHERE rowid = ?", (eid,))
                c.execute("DELETE FROM vec_bit WHERE rowid = ?", (eid,))
                c.execute("DELETE FROM embeddings WHERE id = ?", (eid,))
            s.bump("vec_epoch")
        self.report.vectors_pruned = len(orphans)


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
