"""The embedding phase: embed every distinct chunk text that has no vector yet, then every
chunk header (chunk/header.py) and window of a long chunk (chunk/windows.py) that has
none (one transaction per EMBED_COMMIT texts, so a killed run resumes), and keep the
vectors that lost their chunks for reuse (branch switches, undos) up to
``orphan_keep``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from scrydb.chunk.header import HEADER_VERSION
from scrydb.chunk.windows import views_recipe
from scrydb.embed import Embedder
from scrydb.store import embwrite
from scrydb.sync.base import (
    BODY,
    EMBED_COMMIT,
    EMBED_PAGE,
    HEAD,
    ORIGIN_CACHE,
    ORIGIN_SEED,
    RATE_MIN_TEXTS,
    WINDOW,
    Phase,
)
from scrydb.sync.models import ModelSwitch
from scrydb.sync.reuse import Reuse, SeedIndex, make_reuse
from scrydb.sync.texts import head_key, view_key, views


class EmbeddingPhase(Phase):
    """Computes the vectors a sync left pending; a model change goes to ``switch``."""

    def __init__(self, *args: Any, switch: ModelSwitch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.switch = switch
        #: another index to take vectors from (``--seed``), set by the Syncer
        self.seed: SeedIndex | None = None

    def track_orphans(self) -> None:
        """Stamp vectors that lost their last chunk, unstamp reused ones, and drop the
        oldest orphans beyond ``orphan_keep`` (their chunks are long gone)."""
        s = self.store
        if not s.has_table("vec_float"):
            return
        self.report.vectors_pruned += embwrite.track_orphans(s, self.config.index.orphan_keep)

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
        return embwrite.pending_texts(self.store)

    def derive_heads(self) -> None:
        """Give every chunk its header hash ('' when it has none, or ``[index]
        header_vectors`` is off). Cheap (text only, no model); a changed header recipe or
        setting resets the headers (the bodies' vectors stay; the old headers' vectors are
        kept for reuse like any unreferenced vector)."""
        s = self.store
        on = self.config.index.header_vectors
        recipe = HEADER_VERSION if on else "off"
        if s.meta("head_text") != recipe:
            with s.transaction():
                embwrite.reset_heads(s)
                s.set_meta("head_text", recipe)
        for page in embwrite.chunk_pages(s, "no-head-hash", EMBED_PAGE):
            if self._cancelled():
                break
            rows = [
                (head_key(path, sym, kind, content, on), cid)
                for cid, path, sym, kind, content, _h, _hh in page
            ]
            with s.transaction():
                embwrite.set_heads(s, rows)

    def derive_windows(self) -> None:
        """Give every chunk its extra views (chunk/windows.py ``view_texts``): windows of
        very long chunks (``[index] window_vectors``) and the text of its inner comments
        (``[index] comment_vectors``); none for most chunks. Cheap (text only, no model); a
        changed rule or setting derives them again (their old vectors are kept for reuse
        like any unreferenced vector)."""
        s = self.store
        cfg = self.config.index
        recipe = views_recipe(cfg.window_vectors, cfg.comment_vectors)
        if s.meta("window_text") != recipe:
            with s.transaction():
                embwrite.reset_views(s)
                s.set_meta("window_text", recipe)
        for page in embwrite.chunk_pages(s, "no-views", EMBED_PAGE):
            if self._cancelled():
                break
            rows: list[tuple[int, int, str]] = []
            counts: list[tuple[int, int]] = []
            for cid, _path, _sym, _kind, content, _h, _hh in page:
                texts = views(content, cfg)
                rows.extend((cid, seq, view_key(t)) for seq, t in texts.items())
                counts.append((len(texts), cid))
            with s.transaction():
                embwrite.set_views(s, rows, counts)

    def _pending_pages(self) -> Iterator[tuple[dict[str, str], str]]:
        """Pages of pending texts (hash -> text to embed) and what they are (BODY, HEAD,
        WINDOW): chunk bodies first (the dense leg needs them most), then headers, then
        windows."""
        s = self.store
        for page in embwrite.chunk_pages(s, "body-pending", EMBED_PAGE):
            texts: dict[str, str] = {}
            for _cid, path, sym, _kind, content, h, _hh in page:
                if h not in texts:
                    texts[h] = self.body_text(path, sym, content)
            yield texts, BODY
        for page in embwrite.chunk_pages(s, "head-pending", EMBED_PAGE):
            texts = {}
            for _cid, path, sym, kind, content, _h, hh in page:
                if hh not in texts:
                    texts[hh] = self.head_text(path, sym, kind, content)
            yield texts, HEAD
        for wpage in embwrite.pending_window_pages(s, EMBED_PAGE):
            texts = {}
            for _cid, seq, wh, path, sym, content in wpage:
                if wh not in texts:
                    texts[wh] = self.window_text(path, sym, content, seq)
            yield {h: t for h, t in texts.items() if t}, WINDOW

    def embed_pending(self) -> None:
        """Embed every distinct pending chunk text, header and window, one transaction
        per EMBED_COMMIT."""
        s = self.store
        self.derive_heads()
        self.derive_windows()
        if s.meta("next_embedder") is not None:
            self.switch.seed = self.seed
            self.switch.embed_all()
            return
        if not embwrite.anything_pending(s):
            return
        emb = self.embedder()
        self._ensure_vec_tables(emb)
        reuse = make_reuse(self.config, self.embedder_id, emb.dim, self.seed, self.warn)
        try:
            self._embed_pending(emb, reuse)
        finally:
            self.report.seconds_cache += reuse.seconds
            reuse.close()

    def _embed_pending(self, emb: Embedder, reuse: Reuse) -> None:
        s = self.store
        total = self._pending_texts()
        done = 0
        self.progress("embed", 0, total)
        # The recorded rate is texts (every kind) per second of the whole loop after the
        # first model call (which may load the model): page reads, cache lookups and
        # vector writes included, as an estimate (texts / rate) needs.
        rate_texts = 0
        rate_from: float | None = None  # when the first model call's vectors were stored
        rate_to = 0.0
        for texts, kind in self._pending_pages():
            if self._cancelled():
                break
            known = self._lookup_embeddings(texts)
            if known:  # a vector exists but was not linked (a header equal to another's)
                with s.transaction():
                    self._link(list(known.items()))
                    s.bump("vec_epoch")  # a kept orphan back in use: searches unmask it
            items = sorted(
                ((h, t) for h, t in texts.items() if h not in known), key=lambda it: len(it[1])
            )  # similar lengths batch with little padding
            found, items = reuse.take(items)
            for origin in (ORIGIN_CACHE, ORIGIN_SEED):
                got = [(h, v) for h, v, o in found if o == origin]  # (at most a page)
                if got:
                    hashes = [h for h, _ in got]
                    self._store_vectors(hashes, np.stack([v for _, v in got]), origin=origin)
                    self.count_reused(origin, len(got))
                    done += len(got)
            if found:
                self.progress("embed", done, max(total, done))
            for i in range(0, len(items), EMBED_COMMIT):
                if self._cancelled():
                    break
                part = items[i : i + EMBED_COMMIT]
                vecs = emb.embed_documents([t for _, t in part])
                self._store_vectors([h for h, _ in part], vecs)
                reuse.give(part, vecs)
                if rate_from is None:
                    rate_from = time.perf_counter()
                else:
                    rate_texts += len(part)
                    rate_to = time.perf_counter()
                done += len(part)
                self.count_embedded(kind, len(part))
                self.progress("embed", done, max(total, done))
        if rate_from is not None and rate_texts >= RATE_MIN_TEXTS and rate_to > rate_from:
            self.report.embed_rate = rate_texts / (rate_to - rate_from)

    def _link(self, pairs: list[tuple[str, int]]) -> None:
        """Point the chunks waiting for these hashes at their vectors (in a transaction)."""
        embwrite.link(self.store, pairs)

    def _store_vectors(
        self, hashes: list[str], vecs: np.ndarray, origin: int | None = None
    ) -> None:
        """Store vectors under their hashes and link the chunks waiting for them;
        ``origin`` says where they came from (None: the model; ``sync.reuse``)."""
        embwrite.store_vectors(self.store, hashes, vecs, origin)
