"""One query end to end: analyse -> legs -> votes -> fuse -> diversify -> snippets."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scrydb import tokens
from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.results import Results
from scrydb.search import fusion, rank, votes, weak
from scrydb.search.filters import Filter
from scrydb.search.hits import make_hit
from scrydb.search.query import (
    STOP_WORDS,
    Query,
    analyse,
    clean_query,
    cut_note,
    fts_match,
    fts_terms,
)
from scrydb.search.qvectors import QueryVectors
from scrydb.store import Store, counts, legs
from scrydb.store.vectors import VectorIndex

MODES = ("fused", "lexical", "dense")
#: Chunk ids per ``IN (...)`` when candidates are read back (well under SQLite's
#: 32,766 parameters; a pool is a few hundred).
HYDRATE_BATCH = 500


class SearchEngine:
    """Runs queries against one store. Thread-safe for concurrent readers."""

    def __init__(self, store: Store, config: Config, embedder: Callable[[], Embedder]) -> None:
        self.store = store
        self.config = config
        self._embedder_factory = embedder
        self.vectors = VectorIndex()
        self.qvectors = QueryVectors(store, config, embedder, self.main_language)
        #: rank.content_factors per (text_hash, lang, kind, start_line) and path_factors
        #: per (path, wants...) (see votes.path_signals).
        self._factors: dict[tuple[Any, ...], dict[str, float]] = {}

    # -- public ------------------------------------------------------------------------

    def search(
        self,
        text: str,
        k: int = 10,
        lang: str | None = None,
        path: str | None = None,
        explain: bool = False,
        mode: str = "fused",
        rerank: bool = True,
    ) -> Results:
        """Ranked hits for ``text`` (see ``Index.search``)."""
        if mode not in MODES:
            raise ScryError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
        if isinstance(k, bool) or int(k) < 1:
            raise ValueError(f"k must be at least 1, not {k!r}")
        cut = cut_note(text)
        text = clean_query(text)
        k = min(int(k), 1000)
        t0 = time.perf_counter()
        q = analyse(text)
        res = Results()
        res.query, res.shape = text, q.shape
        if cut:
            res.notes.append(cut)
        filt = Filter(lang, path)
        if not _searchable(text):
            res.notes.append(
                "nothing to search for: the query has no words, names or numbers "
                "(only punctuation, query operators or symbols)"
            )
            return res
        pool = rank.pool_size(q.shape, k)
        cands: dict[int, rank.Candidate] = {}

        terms = fts_terms(q)
        expansions = votes.fuzzy_expand(self.store, q) if mode == "fused" else []
        # The legs return plain ranked lists; candidates are made from them here, once.
        if mode in ("fused", "lexical"):
            lex = self._lexical(terms + [e for e in expansions if e not in terms], filt, pool)
            for r, (cid, bm25) in enumerate(lex, 1):
                c = cands.setdefault(cid, rank.Candidate(cid))
                c.lex_rank, c.lex_score = r, bm25
            res.legs.append("lexical")
        t_lex = time.perf_counter()
        if mode in ("fused", "dense"):
            dense = self._dense(q, filt, pool, res)
            if dense is not None:
                for r, (cid, cos, seq) in enumerate(dense, 1):
                    c = cands.setdefault(cid, rank.Candidate(cid))
                    c.dense_rank, c.dense_score, c.window = r, cos, seq
                res.legs.append("dense")
        t_dense = time.perf_counter()
        if mode == "fused":
            votes.symbol_votes(self.store, q, expansions, filt, cands)
        if not cands:
            res.weak = True
            res.suggestions = weak.suggest(self.store, q)
            res.timings = {"total": time.perf_counter() - t0}
            return res
        self._hydrate(cands)
        if mode == "fused":
            votes.path_signals(self.store, self.config, q, cands, self._factors)
            if q.entry:
                votes.entry_votes(self.store, filt, cands)
            self._fuse(cands, q)
        else:
            rank.fuse(cands, *((1.0, 0.0) if mode == "dense" else (0.0, 1.0)))
        if mode == "fused" and rerank and self.config.rerank.provider != "none":
            from scrydb.search.rerank import rerank_leg  # the optional third leg

            if rerank_leg(self.config.rerank, q, cands, res):
                self._fuse(cands, q)
        chosen = (
            rank.diversify(list(cands.values()), k) if mode == "fused" else _plain_top(cands, k)
        )
        qwords = {w.lower() for w in q.terms} | {
            p for w in q.terms for p in tokens.split_identifier(w)
        }
        qwords -= STOP_WORDS
        named = {i.split(".")[-1].split("::")[-1].strip("()") for i in q.identifiers}
        for c in chosen:
            kind, symbol = c.kind, c.symbol
            if c.matched is not None and symbol and ", " in symbol:
                kind, symbol = c.matched  # the one of the chunk's peers the query named
            res.append(
                make_hit(
                    c.path,
                    c.start_line,
                    c.end_line,
                    c.lang,
                    kind,
                    symbol,
                    round(c.score, rank.SCORE_DIGITS),
                    c.content,
                    c.chunk_id,
                    words=qwords,
                    names=named,
                    window=c.window,
                    explain=c.explain() if explain else None,
                )
            )
        if mode == "fused":
            res.missing = weak.missing_identifiers(self.store, q)
            if res.missing:
                res.notes.append(
                    f"{', '.join(res.missing)} occurs nowhere in the index: these hits only "
                    "share parts of the name or its meaning"
                )
            res.weak = weak.is_weak(chosen, cands, lexical_ran=True, missing=res.missing)
            if res.weak:
                res.suggestions = weak.suggest(self.store, q)
        res.timings = {
            "lexical": t_lex - t0,
            "dense": t_dense - t_lex,
            "total": time.perf_counter() - t0,
        }
        return res

    def query_vector(self, text: str, res: Results | None = None) -> np.ndarray:
        """The query's vector (see :class:`QueryVectors`)."""
        return self.qvectors.vector(text, res)

    def embedder(self) -> Embedder:
        """The embedder of the index's vectors (the factory caches it; it changes when a
        re-embed for a new model completes)."""
        return self._embedder_factory()

    def main_language(self) -> str | None:
        """The language most files of the index are written in (a hint for HyDE)."""
        try:
            return legs.main_language(self.store)
        except Exception:  # a hint only
            return None

    def suggest(self, q: Query, limit: int = 5) -> list[str]:
        """Existing symbol names close to the query's words ("did you mean")."""
        return weak.suggest(self.store, q, limit)

    def _fuse(self, cands: dict[int, rank.Candidate], q: Query) -> None:
        """One score per candidate: the hand ranker or the learned one (``[search] fusion``)."""
        fusion.fuse(self.config.search.fusion, cands, q)

    # -- legs --------------------------------------------------------------------------

    def _lexical(self, terms: list[str], filt: Filter, pool: int) -> list[tuple[int, float]]:
        """The lexical leg: (chunk id, BM25: lower is better), best first."""
        match = fts_match(terms)
        if not match:
            return []
        return legs.bm25(self.store, match, filt.sql(), filt.active, pool, rank.BM25_WEIGHTS)

    def _dense(
        self, q: Query, filt: Filter, pool: int, res: Results
    ) -> list[tuple[int, float, int | None]] | None:
        """The dense leg: (chunk id, score, the window that gave it or None), best first;
        None when the leg cannot run (no vectors, no model, another dimension: ``res``
        says why)."""
        s = self.store
        if s.vec_dim() is None:
            if s.has_chunks():
                res.notes.append("lexical only: no embeddings yet (indexing adds them)")
            return None
        pending = counts.pending(s)
        res.pending = pending
        if pending:
            total = counts.chunks(s)
            res.notes.append(
                f"{pending} of {total} chunks wait for embeddings: they are found lexically only"
            )
        moving = s.next_vectors_progress()
        if moving is not None:
            res.notes.append(
                f"re-embedding for a new model: {moving[1]} of {moving[2]} texts done; searches "
                "use the previous model's vectors until then (`scry index` completes it)"
            )
        try:
            qvec = self.qvectors.vector(q.text, res)
        except ScryError as e:
            res.notes.append(f"dense leg skipped: {e}")
            return None
        self.vectors.refresh(s)
        if qvec.shape[0] != self.vectors.dim:
            res.notes.append(
                "dense leg skipped: the model's dimension differs from the index (the next index sync re-embeds)"
            )
            return None
        allowed = None
        if filt.active:
            ids = legs.allowed_vectors(s, filt.sql())
            allowed = self.vectors.mask(np.array(ids, dtype=np.int64))
        sc = self.config.search
        # Three times the pool: a chunk's body, header and windows can all be among the
        # nearest.
        emb_ids, scores = self.vectors.search(qvec, 3 * pool, allowed, sc.exact_max, sc.coarse_pool)
        if len(emb_ids) == 0:
            return []
        # A chunk is a candidate when its body, header or a window vector is among the
        # nearest; it is then scored by body and header (rank.HEAD_WEIGHT), or by its best
        # window where that is higher, and ranked by that score.
        cos = {int(e): float(v) for e, v in zip(emb_ids, scores, strict=True)}
        where = filt.sql()
        near = list(cos)
        windows: dict[int, tuple[float, int]] = {}  # chunk -> (best window cosine, its seq)
        for wcid, wid, wseq in legs.windows_among(s, near, where, filt.active):
            if wcid not in windows or cos[wid] > windows[wcid][0]:
                windows[wcid] = (cos[wid], wseq)
        rows = legs.chunks_behind(s, near, windows, where, filt.active)
        # The bodies and headers of these chunks that are not among the nearest: their
        # cosines in one product.
        missing = {e for _c, eid, hid in rows for e in (eid, hid) if e is not None and e not in cos}
        known = {**cos, **self.vectors.cosines(missing, qvec)} if missing else cos
        scored = []
        for cid, eid, hid in rows:
            body = _body_score(known, eid, hid)
            score, seq = body, None
            if cid in windows:
                score = rank.with_window(body, windows[cid][0])
                if score != body:
                    seq = windows[cid][1]
            if score is not None:
                scored.append((score, cid, seq))
        scored.sort(key=lambda t: (t[0], t[1]), reverse=True)
        return [(cid, score, seq) for score, cid, seq in scored[:pool]]

    # -- ranker evidence ---------------------------------------------------------------

    def _hydrate(self, cands: dict[int, rank.Candidate]) -> None:
        ids = list(cands)
        for i in range(0, len(ids), HYDRATE_BATCH):
            part = ids[i : i + HYDRATE_BATCH]
            rows = legs.hydrate(self.store, part)
            for cid, path, lang, a, b, kind, sym, content, h, mtime_ns in rows:
                c = cands[cid]
                c.path, c.lang, c.start_line, c.end_line = path, lang, a, b
                c.kind, c.symbol, c.content, c.text_hash = kind, sym, content, h
                c.mtime_ns = mtime_ns
        for cid in [cid for cid, c in cands.items() if not c.path]:
            del cands[cid]  # deleted by a concurrent sync between the legs and now


def _body_score(cos: dict[int, float], eid: int | None, hid: int | None) -> float | None:
    """A chunk's dense score from the cosines (``cos``) of its body and header vectors
    (rank.HEAD_WEIGHT); None without a body vector."""
    body = cos.get(eid) if eid is not None else None
    if body is None or hid is None:
        return body
    head = cos.get(hid)
    return body if head is None else rank.with_header(body, head)


#: Upper-case words that FTS5 reads as operators: alone they are not something to find.
_FTS_OPERATORS = frozenset({"NEAR", "AND", "OR", "NOT"})


def _searchable(text: str) -> bool:
    """Whether a query holds anything to look for: a word with a letter or digit that is
    not a bare query operator."""
    return any(
        any(ch.isalnum() for ch in w) and w not in _FTS_OPERATORS for w in re.findall(r"\w+", text)
    )


def _plain_top(cands: dict[int, rank.Candidate], k: int) -> list[rank.Candidate]:
    return sorted(cands.values(), key=lambda c: (-c.score, c.path, c.start_line))[:k]
