"""``related(file, line)``: the dense neighbours of the chunk at a line, other files first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrydb.errors import ScryError
from scrydb.results import Hit, Results
from scrydb.search.snippet import make_snippet

if TYPE_CHECKING:
    from scrydb.index import Index

#: Neighbours in the same file rank after those in other files: the caller already has
#: the file open; what it lacks is the other places that do the same kind of thing.
SAME_FILE_FACTOR = 0.85
#: Bounds of the arguments (a JSON number can be anything).
MAX_LINE = 2**31
MAX_K = 1000


def related(ix: Index, path: str, line: int, k: int = 10) -> Results:
    """Chunks most similar to the chunk of ``path`` that contains ``line``."""
    s = ix.store
    line = max(1, min(int(line), MAX_LINE))  # SQLite integers are 64-bit; files are not that long
    k = max(1, min(int(k), MAX_K))
    rows = s.rows(
        "SELECT c.id, c.emb_id, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = c.file_id "
        "WHERE f.path = ? ORDER BY abs(c.start_line - ?) LIMIT 200",
        (path, line),
    )
    if not rows:
        raise ScryError(f"not an indexed file: {path}")
    hit = [r for r in rows if r[2] <= line <= r[3]]
    cid, emb_id, _a, _b = hit[0] if hit else rows[0]
    res = Results()
    res.query, res.shape = f"{path}:{line}", "related"
    if emb_id is None:
        res.notes.append("this chunk has no embedding yet (indexing adds it)")
        return res
    eng = ix.engine
    eng.vectors.refresh(s)
    vec = eng.vectors.vector(emb_id)
    if vec is None:
        res.notes.append("this chunk's vector is missing (indexing adds it)")
        return res
    emb_ids, scores = eng.vectors.search(
        vec, k * 4 + 10, None, ix.config.search.exact_max, ix.config.search.coarse_pool
    )
    score_of = {
        int(e): float(sc) for e, sc in zip(emb_ids, scores, strict=True) if int(e) != emb_id
    }
    if not score_of:
        return res
    marks = ",".join("?" * len(score_of))
    cands = s.rows(
        "SELECT c.id, c.emb_id, f.path, f.lang, c.start_line, c.end_line, c.kind, c.symbol, c.content "
        f"FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.emb_id IN ({marks}) AND c.id != ?",
        (*score_of, cid),
    )
    scored = []
    for row in cands:
        sc = score_of[row[1]] * (SAME_FILE_FACTOR if row[2] == path else 1.0)
        scored.append((sc, row))
    scored.sort(key=lambda t: -t[0])
    for sc, (ocid, _e, p, lang, a, b, kind, sym, content) in scored[:k]:
        snip = make_snippet(content, a, set(), {sym.split(".")[-1]} if sym else None)
        res.append(
            Hit(
                p,
                a,
                b,
                lang,
                kind,
                sym,
                round(sc, 4),
                snip.text,
                snip.anchor_line,
                snip.start_line,
                snip.truncated,
                ocid,
            )
        )
    res.legs = ["dense"]
    return res
