"""The embedding phase: embed every distinct chunk text that has no vector yet (one
transaction per EMBED_COMMIT texts, so a killed run resumes), and keep the vectors that
lost their chunks for reuse (branch switches, undos) up to ``orphan_keep``."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from scrydb.embed import Embedder
from scrydb.sync.base import (
    EMBED_COMMIT,
    EMBED_PAGE,
    RATE_MIN_TEXTS,
    Phase,
    embed_header,
)
from scrydb.sync.models import ModelSwitch


class EmbeddingPhase(Phase):
    """Computes the vectors a sync left pending; a model change goes to ``switch``."""

    def __init__(self, *args: Any, switch: ModelSwitch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.switch = switch

    def track_orphans(self) -> None:
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

    def embed_pending(self) -> None:
        """Embed every distinct pending chunk text, one transaction per EMBED_COMMIT."""
        s = self.store
        if s.meta("next_embedder") is not None:
            self.switch.embed_all()
            return
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
