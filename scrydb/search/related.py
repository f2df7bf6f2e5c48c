"""``related(file, line)``: the dense neighbours of the chunk at a line, other files first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrydb.errors import ScryError
from scrydb.results import Results
from scrydb.search.hits import make_hit
from scrydb.store import lookup

if TYPE_CHECKING:
    from scrydb.config import SearchConfig
    from scrydb.store import Store
    from scrydb.store.vectors import VectorIndex

#: Bounds of the arguments (a JSON number can be anything).
MAX_K = 1000
#: Chunks of the file read to find the one at the line (nearest starts first; the chunk
#: holding the line is among the nearest few, this only bounds a huge file's read).
NEAR_CHUNKS = 200


def related(
    s: Store, vectors: VectorIndex, cfg: SearchConfig, path: str, line: int, k: int = 10
) -> Results:
    """Chunks most similar to the chunk of ``path`` that contains ``line`` (other files
    first), from the index ``s`` and its dense vectors."""
    line = int(line)
    k = max(1, min(int(k), MAX_K))
    last = lookup.last_line(s, path)
    if last is None:
        raise ScryError(f"not an indexed file: {path}")
    if line < 1:
        raise ScryError(f"bad line {line} for {path} (lines start at 1)")
    if line > last:
        raise ScryError(f"{path} has {last} indexed lines; line {line} is past its end")
    rows = lookup.chunks_near(s, path, line, NEAR_CHUNKS)
    if not rows:
        raise ScryError(f"not an indexed file: {path}")
    hit = [r for r in rows if r[2] <= line <= r[3]]
    cid, emb_id, _a, _b = hit[0] if hit else rows[0]
    res = Results()
    res.query, res.shape = f"{path}:{line}", "related"
    if emb_id is None:
        res.notes.append("this chunk has no embedding yet (indexing adds it)")
        return res
    vectors.refresh(s)
    vec = vectors.vector(emb_id)
    if vec is None:
        res.notes.append("this chunk's vector is missing (indexing adds it)")
        return res
    # Code like this code: other chunks' bodies, never their headers (chunk/header.py).
    emb_ids, scores = vectors.search(
        vec, k * 4 + 10, vectors.bodies, cfg.exact_max, cfg.coarse_pool
    )
    score_of = {
        int(e): float(sc) for e, sc in zip(emb_ids, scores, strict=True) if int(e) != emb_id
    }
    if not score_of:
        return res
    cands = lookup.chunks_with_vectors(s, score_of, cid)
    # Other files first, then the same file: the caller already has that file open; what
    # it lacks is the other places that do the same kind of thing.
    scored = [(score_of[row[1]], row) for row in cands]
    scored.sort(key=lambda t: (t[1][2] == path, -t[0]))
    for sc, (ocid, _e, p, lang, a, b, kind, sym, content) in scored[:k]:
        res.append(make_hit(p, a, b, lang, kind, sym, round(sc, 4), content, ocid, words=set()))
    res.legs = ["dense"]
    return res
