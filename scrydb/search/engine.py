"""One query end to end: prepare -> legs -> candidates -> votes -> fuse -> diversify ->
hits. The engine only orchestrates: the query is analysed once (``query.prepare``), each
leg (``lexical_leg`` here, ``dense.dense_leg``), the votes (``votes``), the fusion
(``fusion``) and the weak-match check (``weak``) are their own steps returning plain
values."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scrydb.config import Config
from scrydb.embed import Embedder
from scrydb.errors import ScryError
from scrydb.results import Results
from scrydb.search import candidates, fusion, graph, rank, reportquery, votes, weak
from scrydb.search.dense import dense_leg
from scrydb.search.filters import Filter
from scrydb.search.hits import hits_for
from scrydb.search.query import Query, fts_match, prepare
from scrydb.search.qvectors import QueryVectors
from scrydb.store import Store, legs, lookup
from scrydb.store.vectors import VectorIndex

MODES = ("fused", "lexical", "dense")
#: Most hits one search returns.
MAX_K = 1000


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
        k = checked_k(mode, k)
        t0 = time.perf_counter()
        q = prepare(text)
        res = Results()
        res.query, res.shape, res.notes = q.text, q.shape, list(q.notes)
        if not _searchable(q.text):
            res.notes.append(NOTHING_TO_SEARCH)
            return res
        filt, pool = Filter(lang, path), rank.pool_size(q.shape, k)
        fused = mode == "fused"
        expansions = votes.fuzzy_expand(self.store, q) if fused else []
        lex: list[tuple[int, float]] = []
        if mode in ("fused", "lexical"):
            terms = q.lexical_terms + [e for e in expansions if e not in q.lexical_terms]
            lex = lexical_leg(self.store, terms, filt, pool)
            res.legs.append("lexical")
        t_lex = time.perf_counter()
        dense = None
        if mode in ("fused", "dense"):
            leg = dense_leg(
                self.store, self.vectors, self.qvectors, self.config, q.dense_texts, filt, pool, res
            )
            dense, res.pending = leg.hits, leg.pending
            res.notes += leg.notes
            if dense is not None:
                res.legs.append("dense")
        t_dense = time.perf_counter()
        cands = candidates.gather(lex, dense)
        if fused:
            votes.symbol_votes(self.store, q, expansions, filt, cands)
            if q.report is not None:
                join = not filt.active
                reportquery.frame_votes(self.store, q.report, cands, join)
                reportquery.message_votes(self.store, q.report, cands, join)
        candidates.hydrate(self.store, cands)
        files: dict[str, int] = {}
        if fused:
            files = self._rank(cands, q, filt, res, rerank)
        else:
            rank.fuse(cands, *((1.0, 0.0) if mode == "dense" else (0.0, 1.0)))
        per_file = rank.MAX_PER_FILE if q.report is None else reportquery.MAX_PER_FILE
        chosen = (
            rank.diversify(list(cands.values()), k, per_file) if fused else _plain_top(cands, k)
        )
        res.extend(hits_for(chosen, q, explain))
        if explain and q.report is not None:  # which parts of the report each hit matched
            seg = self._segment_cosines(q) if dense is not None else None
            parts = reportquery.matched_parts(self.store, q.report, chosen, seg, files)
            for hit, part in zip(res, parts, strict=True):
                if hit.explain is not None:
                    hit.explain["report"] = part
        if fused or not cands:
            self._judge(res, q, chosen, cands)
        res.timings = {"lexical": t_lex - t0, "dense": t_dense - t_lex}
        res.timings["total"] = time.perf_counter() - t0
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

    def _segment_cosines(self, q: Query) -> Callable[[rank.Candidate], list[float]]:
        """Each embedded text's cosine with a candidate's body vector (a report's prose
        segments, for ``--explain``; their vectors are in the cache the dense leg filled)."""
        vecs = [self.qvectors.vector(t) for t in q.dense_texts]

        def cosines(c: rank.Candidate) -> list[float]:
            eid = lookup.embedding_ids(self.store, [c.text_hash]).get(c.text_hash)
            if eid is None:
                return []
            return [self.vectors.cosines([eid], v).get(eid, 0.0) for v in vecs]

        return cosines

    def suggest(self, q: Query, limit: int = 5) -> list[str]:
        """Existing symbol names close to the query's words ("did you mean")."""
        return weak.suggest(self.store, q, limit)

    def _rank(
        self, cands: dict[int, rank.Candidate], q: Query, filt: Filter, res: Results, rerank: bool
    ) -> dict[str, int]:
        """Path and content priors, entry votes, the fusion and the optional reranker leg
        (which fuses again with its votes); for a report, its own scores after them
        (reportquery.rescore). Returns a report's file ranks (reportquery.file_ranks; {}
        for any other query)."""
        votes.path_signals(self.store, self.config, q, cands, self._factors)
        graph.connected_votes(self.store, cands)
        if q.entry:
            votes.entry_votes(self.store, filt, cands)
        fusion.fuse(self.config.search.fusion, cands, q)
        if rerank and self.config.rerank.provider != "none":
            from scrydb.search.rerank import rerank_leg  # the optional third leg

            if rerank_leg(self.config.rerank, q, cands, res):
                fusion.fuse(self.config.search.fusion, cands, q)
        if q.report is not None:
            files = reportquery.file_ranks(
                self.store, fts_match(q.lexical_terms), filt.sql(), filt.active
            )
            reportquery.rescore(cands, files)
            return files
        return {}

    def _judge(
        self,
        res: Results,
        q: Query,
        chosen: list[rank.Candidate],
        cands: dict[int, rank.Candidate],
    ) -> None:
        """Whether the list is weak (search/weak.py): names that exist nowhere, notes and
        suggestions."""
        res.missing = weak.missing_identifiers(self.store, q) if chosen else []
        if res.missing:
            res.notes.append(
                f"{', '.join(res.missing)} occurs nowhere in the index: these hits only "
                "share parts of the name or its meaning"
            )
        res.weak = weak.is_weak(chosen, cands, lexical_ran=True, missing=res.missing)
        if res.weak:
            res.suggestions = weak.suggest(self.store, q)


def lexical_leg(store: Store, terms: list[str], filt: Filter, pool: int) -> list[tuple[int, float]]:
    """The lexical leg: (chunk id, BM25: lower is better), best first."""
    match = fts_match(terms)
    if not match:
        return []
    return legs.bm25(store, match, filt.sql(), filt.active, pool, rank.BM25_WEIGHTS)


def checked_k(mode: str, k: int) -> int:
    """``k`` as the number of hits to return (at most MAX_K), after checking the mode
    (``Index.search`` checks them before its path filter: the arguments in order)."""
    if mode not in MODES:
        raise ScryError(f"unknown search mode {mode!r} (one of {', '.join(MODES)})")
    if isinstance(k, bool) or int(k) < 1:
        raise ValueError(f"k must be at least 1, not {k!r}")
    return min(int(k), MAX_K)


NOTHING_TO_SEARCH = (
    "nothing to search for: the query has no words, names or numbers "
    "(only punctuation, query operators or symbols)"
)


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
