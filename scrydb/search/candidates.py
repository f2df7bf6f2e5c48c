"""The candidate pool of one query: made once from the legs' ranked lists, then filled
from the chunks table (path, lines, kind, symbol, content) before the ranker reads it."""

from __future__ import annotations

from scrydb.search.dense import DenseHit
from scrydb.search.rank import Candidate
from scrydb.store import Store, legs

#: Chunk ids per ``IN (...)`` when candidates are read back (well under SQLite's
#: 32,766 parameters; a pool is a few hundred).
HYDRATE_BATCH = 500


def gather(lexical: list[tuple[int, float]], dense: list[DenseHit] | None) -> dict[int, Candidate]:
    """One candidate per chunk either leg found, with its rank and score in each."""
    cands: dict[int, Candidate] = {}
    for r, (cid, bm25) in enumerate(lexical, 1):
        c = cands.setdefault(cid, Candidate(cid))
        c.lex_rank, c.lex_score = r, bm25
    for r, (cid, cos, seq) in enumerate(dense or [], 1):
        c = cands.setdefault(cid, Candidate(cid))
        c.dense_rank, c.dense_score, c.window = r, cos, seq
    return cands


def hydrate(store: Store, cands: dict[int, Candidate]) -> None:
    """Fill each candidate from the chunks table; drop the ones a concurrent sync deleted
    between the legs and now."""
    ids = list(cands)
    for i in range(0, len(ids), HYDRATE_BATCH):
        part = ids[i : i + HYDRATE_BATCH]
        for cid, path, lang, a, b, kind, sym, content, h, mtime_ns in legs.hydrate(store, part):
            c = cands[cid]
            c.path, c.lang, c.start_line, c.end_line = path, lang, a, b
            c.kind, c.symbol, c.content, c.text_hash = kind, sym, content, h
            c.mtime_ns = mtime_ns
    for cid in [cid for cid, c in cands.items() if not c.path]:
        del cands[cid]
