"""The lexical phase: read and chunk what changed, diff chunks against the index, and
write files, chunks, symbols and FTS rows in batches (search works lexically as soon as
a batch commits). Unchanged chunk texts keep their rows and vectors."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from typing import Any

from scrydb import tokens
from scrydb.chunk import Chunk, Ref
from scrydb.chunk.entry import ENTRY_SHAPES
from scrydb.store import Store, lexwrite
from scrydb.sync.base import (
    LEXICAL_BATCH_BYTES,
    LEXICAL_BATCH_FILES,
    Phase,
    _Staged,
    text_hash,
)
from scrydb.sync.read import read_and_chunk
from scrydb.walk import WalkedFile

#: Paths of files remembered for ``scry status`` per note (a failed parse, a coding other
#: than UTF-8): a bound on the meta value, not on the files indexed.
MAX_FALLBACKS_KEPT = 1000


class PathNotes:
    """Paths of indexed files with something to say in ``scry status``, kept in the meta
    value ``key`` (at most MAX_FALLBACKS_KEPT): a JSON list of paths, or with
    ``values`` a JSON object path -> value. A sync notes each file it reads, forgets the
    deleted ones and saves once at the end of its lexical pass."""

    def __init__(self, store: Store, key: str, *, values: bool) -> None:
        self.store = store
        self.key = key
        self.values = values
        raw = json.loads(store.meta(key) or ("{}" if values else "[]"))
        self.notes: dict[str, str] = dict(raw) if values else dict.fromkeys(raw, "")
        self._saved = dict(self.notes)

    def note(self, path: str, value: str | None) -> None:
        """Remember ``value`` for ``path`` (None: it has nothing to say any more)."""
        if value is None:
            self.notes.pop(path, None)
        else:
            self.notes[path] = value

    def clear(self) -> None:
        """Forget every path (the lexical index is rebuilt)."""
        self.notes.clear()

    def save(self) -> None:
        """Write the notes to the meta table when they changed (own transaction)."""
        if self.notes == self._saved:
            return
        kept = sorted(self.notes)[:MAX_FALLBACKS_KEPT]
        value = {p: self.notes[p] for p in kept} if self.values else kept
        with self.store.transaction():
            self.store.set_meta(self.key, json.dumps(value))
        self._saved = dict(self.notes)


class LexicalPhase(Phase):
    """Writes the lexical index for the files a sync found changed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._names_new: set[str] = set()  #: symbols.norm values written in this transaction
        self._names_gone: set[str] = set()  #: ... and deleted (may still exist elsewhere)
        self._read_failures: Counter[str] = Counter()  #: files the walk saw but none could read
        self._dropped: list[int] = []  #: ids of indexed files the next batch drops (now skipped)
        #: files chunked as windows because their parse failed (kept in meta, for status)
        self._fallbacks = PathNotes(self.store, "parse_fallbacks", values=False)
        #: files read in a coding other than UTF-8: path -> coding (the same)
        self._codings = PathNotes(self.store, "codings", values=True)

    def clear(self) -> None:
        """Empty the lexical index (a rebuild; vectors stay for reuse)."""
        self._fallbacks.clear()
        self._codings.clear()
        lexwrite.clear(self.store)
        self.store.bump("lex_epoch")

    # -- lexical phase -----------------------------------------------------------------

    def write(
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
                for path, fid in deleted:
                    self._delete_file(fid)
                    self._fallbacks.note(path, None)
                    self._codings.note(path, None)
                lexwrite.forget_skips(self.store, stale_skips)
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
        self._fallbacks.save()
        self._codings.save()
        return complete

    def _read(
        self,
        f: WalkedFile,
        old: tuple[int, int, int, str] | None,
        touched: list[tuple[int, int, int]],
        skips: list[tuple[str, str, int, int]],
    ) -> _Staged | None:
        got = read_and_chunk(self.root, f, self.config.index, old[3] if old else None)
        if got.failed is not None:
            # Not kept in the skipped table: the next sync tries again (permissions fixed,
            # the file back).
            self.report.skipped[got.failed] += 1
            self._read_failures[got.failed] += 1
            return None
        if got.skipped is not None:
            self.report.skipped[got.skipped] += 1
            skips.append((f.path, got.skipped, f.size, f.mtime_ns))
            if old is not None:  # indexed before (a key pasted in, now binary): drop it
                self._dropped.append(old[0])
                self._fallbacks.note(f.path, None)
                self._codings.note(f.path, None)
            return None
        if got.unchanged:
            assert old is not None
            touched.append((old[0], f.size, f.mtime_ns))
            self.report.files_unchanged += 1
            return None
        if got.parse_failed:
            self.report.parse_fallbacks += 1
        self._fallbacks.note(f.path, "" if got.parse_failed else None)
        self._codings.note(f.path, got.coding)
        hashes = [text_hash(c.content) for c in got.chunks]
        return _Staged(f, got.lang, got.digest, got.n_lines, got.chunks, hashes)

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
        now = time.time()
        with s.transaction():
            reuse = self._lookup_embeddings(h for st in batch for h in st.hashes)
            lexwrite.touch_files(s, touched)
            lexwrite.record_skips(s, skips)
            for fid in self._dropped:
                self._delete_file(fid)
            self.report.files_deleted += len(self._dropped)
            self._dropped.clear()
            for st in batch:
                f = st.walked
                old = existing.get(f.path)
                if old is not None:
                    fid = old[0]
                    lexwrite.update_file(
                        s, fid, st.lang, f.size, f.mtime_ns, st.digest, st.n_lines, now
                    )
                    fresh = self._diff_chunks(fid, st)
                    self.report.files_changed += 1
                else:
                    fid = lexwrite.insert_file(
                        s, f.path, st.lang, f.size, f.mtime_ns, st.digest, st.n_lines, now
                    )
                    fresh = list(zip(st.chunks, st.hashes, strict=True))
                    self.report.files_added += 1
                self._insert_chunks(fid, f.path, fresh, reuse)
            self._flush_names()
            s.bump("lex_epoch")

    def _diff_chunks(self, fid: int, st: _Staged) -> list[tuple[Chunk, str]]:
        """Keep the rows of a changed file's chunks that did not change; delete the rest.

        A chunk is unchanged when its text, kind, symbol and definitions (relative to its
        first line) are: its FTS row is then identical, only its lines may have moved.
        Returns the new chunks that still need rows.
        """
        s = self.store
        defs: dict[int, list[tuple[str, str, str, int]]] = defaultdict(list)
        for cid, name, qual, kind, line in lexwrite.symbols_of_file(s, fid):
            defs[cid].append((name, qual, kind, line))
        pool: dict[tuple[object, ...], list[tuple[int, int]]] = defaultdict(list)
        for cid, start, end, kind, sym, h in lexwrite.chunks_of_file(s, fid):
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
                tokens.normalise_name(d[0]) for (cid,) in gone for d in defs.get(cid, ())
            )
            lexwrite.delete_chunks(s, gone)
            self.report.chunks_deleted += len(gone)
        if moves:
            lexwrite.move_chunks(s, moves)
        return fresh

    def _insert_chunks(
        self, fid: int, path: str, chunks: list[tuple[Chunk, str]], reuse: dict[str, int]
    ) -> None:
        stem_text, dir_text = tokens.path_texts(path)
        for ch, h in chunks:
            emb = reuse.get(h)
            entry = 1 if ENTRY_SHAPES.search(ch.content) else 0
            names = [
                (d.name, tokens.normalise_name(d.name), d.qualname, d.kind, d.line) for d in ch.defs
            ]
            lexwrite.insert_chunk(
                self.store,
                (fid, ch.start_line, ch.end_line, ch.kind, ch.symbol, ch.content, h, emb, entry),
                (
                    tokens.symbol_text(ch.index_names()),
                    stem_text,
                    dir_text,
                    tokens.index_text(ch.content),
                ),
                names,
                [_ref_row(r) for r in ch.refs],
            )
            if emb is not None:
                self.report.chunks_reused += 1
            self._names_new.update(norm for _n, norm, _q, _k, _l in names)
            self.report.chunks_written += 1

    def _delete_chunks(self, fid: int) -> int:
        names, n = lexwrite.delete_file_chunks(self.store, fid)
        self._names_gone.update(names)
        return n

    def _delete_file(self, fid: int) -> None:
        self.report.chunks_deleted += self._delete_chunks(fid)
        lexwrite.delete_file(self.store, fid)

    def _flush_names(self) -> None:
        """Bring ``symbol_names`` (fuzzy expansion) in line with the symbols written or
        deleted in the current transaction, so it is never behind, even after a kill."""
        lexwrite.sync_symbol_names(self.store, self._names_new, self._names_gone)
        self._names_new.clear()
        self._names_gone.clear()

    # -- orphan vectors ----------------------------------------------------------------


def _ref_row(r: Ref) -> tuple[str, str, str, int, int, str | None, str | None, str | None]:
    """A reference as its ``refs`` row (name, norm, kind, line, column, qualifier, module,
    alias)."""
    n = r.name
    return (n, tokens.normalise_name(n), r.kind, r.line, r.column, r.qualifier, r.module, r.alias)
