"""The dense leg: the query's vector against every chunk's body, header and window
vectors, as one ranked list of chunks (plain values: the engine makes candidates)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scrydb.config import Config
from scrydb.embed import normalise
from scrydb.errors import ScryError
from scrydb.results import Results
from scrydb.search import rank
from scrydb.search.filters import Filter
from scrydb.search.qvectors import QueryVectors
from scrydb.store import Store, counts, legs
from scrydb.store.vectors import VectorIndex

#: (chunk id, score, the window whose cosine gave the score or None), best first.
DenseHit = tuple[int, float, int | None]


@dataclass
class DenseLeg:
    """What the dense leg found: ``hits`` (None when the leg could not run: no vectors,
    no model, another dimension), the notes that say why or what is missing, and the
    chunks still waiting for embeddings."""

    hits: list[DenseHit] | None
    notes: list[str] = field(default_factory=list)
    pending: int = 0


def dense_leg(
    store: Store,
    vectors: VectorIndex,
    qvectors: QueryVectors,
    config: Config,
    texts: list[str],
    filt: Filter,
    pool: int,
    res: Results | None = None,
) -> DenseLeg:
    """The best ``pool`` chunks by cosine to the query's vector (see :class:`DenseLeg`):
    the vector of ``texts``' one text, or the normalised mean of several (a bug report's
    prose segments). ``res``: the search's results, which a configured HyDE expansion
    reads and notes on."""
    out = DenseLeg(None)
    if store.vec_dim() is None:
        if store.has_chunks():
            out.notes.append("lexical only: no embeddings yet (indexing adds them)")
        return out
    out.pending = counts.pending(store)
    if out.pending:
        total = counts.chunks(store)
        out.notes.append(
            f"{out.pending} of {total} chunks wait for embeddings: they are found lexically only"
        )
    moving = store.next_vectors_progress()
    if moving is not None:
        out.notes.append(
            f"re-embedding for a new model: {moving[1]} of {moving[2]} texts done; searches "
            "use the previous model's vectors until then (`scry index` completes it)"
        )
    try:
        # HyDE, when configured, notes on ``res`` (a single text only).
        vecs = [qvectors.vector(texts[0], res)] if len(texts) == 1 else qvectors.vectors(texts)
        qvec = vecs[0] if len(vecs) == 1 else normalise(np.mean(np.stack(vecs), axis=0)[None])[0]
    except ScryError as e:
        out.notes.append(f"dense leg skipped: {e}")
        return out
    vectors.refresh(store)
    if qvec.shape[0] != vectors.dim:
        out.notes.append(
            "dense leg skipped: the model's dimension differs from the index (the next index "
            "sync re-embeds)"
        )
        return out
    out.hits = _nearest_chunks(store, vectors, config, qvec, filt, pool)
    return out


def _nearest_chunks(
    store: Store, vectors: VectorIndex, config: Config, qvec: np.ndarray, filt: Filter, pool: int
) -> list[DenseHit]:
    """A chunk is a candidate when its body, header or a window vector is among the
    nearest; it is then scored by body and header (rank.HEAD_WEIGHT), or by its best
    window where that is higher, and ranked by that score."""
    allowed = None
    where = filt.sql()
    if filt.active:
        ids = legs.allowed_vectors(store, where)
        allowed = vectors.mask(np.array(ids, dtype=np.int64))
    sc = config.search
    # Three times the pool: a chunk's body, header and windows can all be among the nearest.
    emb_ids, scores = vectors.search(qvec, 3 * pool, allowed, sc.exact_max, sc.coarse_pool)
    if len(emb_ids) == 0:
        return []
    cos = {int(e): float(v) for e, v in zip(emb_ids, scores, strict=True)}
    near = list(cos)
    windows: dict[int, tuple[float, int]] = {}  # chunk -> (best window cosine, its seq)
    for wcid, wid, wseq in legs.windows_among(store, near, where, filt.active):
        if wcid not in windows or cos[wid] > windows[wcid][0]:
            windows[wcid] = (cos[wid], wseq)
    rows = legs.chunks_behind(store, near, windows, where, filt.active)
    # The bodies and headers of these chunks that are not among the nearest: their
    # cosines in one product.
    missing = {e for _c, eid, hid in rows for e in (eid, hid) if e is not None and e not in cos}
    known = {**cos, **vectors.cosines(missing, qvec)} if missing else cos
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


def _body_score(cos: dict[int, float], eid: int | None, hid: int | None) -> float | None:
    """A chunk's dense score from the cosines (``cos``) of its body and header vectors
    (rank.HEAD_WEIGHT); None without a body vector."""
    body = cos.get(eid) if eid is not None else None
    if body is None or hid is None:
        return body
    head = cos.get(hid)
    return body if head is None else rank.with_header(body, head)
