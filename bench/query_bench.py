"""Section 4: query latency in process (index open, model loaded), and the coarse pass's
recall on real embeddings. Also the tracemalloc peaks of a dense query (section 6)."""

from __future__ import annotations

import time
import tracemalloc
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from common import Results, median, pct

from scrydb.embed.local import LocalEmbedder
from scrydb.index import Index
from scrydb.search import rank
from scrydb.store.vectors import COARSE_SHARE, VectorIndex, _top_k, read_chunks, read_rows

#: Vectors the dense leg asks for (the engine's candidate pool).
DENSE_POOL = rank.POOL
#: sqlite-vec KNN queries timed per scale (slow at 100k; a few are enough).
VEC0_QUERIES = 12


def _clear_query_cache(ix: Index, memo: bool = False) -> None:
    """Forget the query vectors (process and index caches); ``memo``: the per-chunk
    ranking memo too, so a query pays for all a fresh process pays for but the loads."""
    ix.engine.qvectors._qcache.clear()
    if memo:
        ix.engine._factors = {}
    with ix.store.transaction():
        ix.store.conn.execute("DELETE FROM query_cache")


def _lat(fn: Any, items: list[Any], before: Any = None) -> list[float]:
    out = []
    for it in items:
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn(it)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _add_lat(
    res: Results,
    sec: str,
    name: str,
    ms: list[float],
    ref: float | None = None,
    ref_name: str = "",
    **kw: Any,
) -> float:
    p50, p95 = pct(ms, 50), pct(ms, 95)
    res.add(sec, f"{name} p50", p50, "ms", ref, ref_name, **kw)
    res.add(sec, f"{name} p95", p95, "ms")
    return p50


def _ms(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def query_latency(
    res: Results,
    label: str,
    root: Path,
    db: Path,
    emb: LocalEmbedder,
    queries: list[str],
    big: bool,
) -> dict[str, Any]:
    """Latency of each leg, fused, cached and not, against a plain numpy scan.

    Every variant runs for one query before the next query starts (interleaved), so a
    load that comes and goes on a shared machine moves all of them alike; their medians
    and ratios are comparable even when the absolute times drift.
    """
    sec = f"query@{label}"
    with Index(root, db=db, embedder=emb) as ix, Index(root, db=db, embedder=emb) as fresh:
        n_chunks = ix.store.scalar("SELECT count(*) FROM chunks")
        ix.search("warm up the index", k=10)  # loads the matrix, the numpy encoder
        fresh.search("warm up the index", k=10)
        vi = ix.engine.vectors
        res.add(sec, "chunks / vectors", n_chunks, "chunks", note=f"{len(vi)} vectors")
        # Loading the matrix: vec0's chunk blobs (what a process does) vs row by row.
        dim = vi.dim
        t_chunks = median(_lat(lambda _: read_chunks(ix.store, "vec_float", dim), [0, 1, 2]))
        t_rows = median(_lat(lambda _: read_rows(ix.store, dim, None), [0, 1, 2]))
        res.add(
            sec, f"load {len(vi)} vectors from vec0 chunks", t_chunks, "ms", t_rows, "row by row"
        )
        mat = vi.matrix.copy()
        sc = ix.config.search
        # Half A warms the process as a session's earlier queries do; half B is measured.
        half_a, half_b = queries[0::2], queries[1::2]
        for q in half_a:
            ix.search(q)
        t: dict[str, list[float]] = defaultdict(list)
        for i, q in enumerate(half_b):
            qv = emb.embed_query(q)
            # Reference: one query embedding + a plain float32 scan of the same vectors
            # (the faster of numpy's default, with BLAS threads, and one thread).
            t["embed"].append(_ms(lambda q=q: emb.embed_query(q)))
            blas = _ms(lambda qv=qv: _top_k(mat @ qv, 10))
            one = _ms(lambda qv=qv: _top_k(np.einsum("ij,j->i", mat, qv), 10))
            t["scan"].append(min(blas, one))
            t["ref"].append(t["embed"][-1] + t["scan"][-1])
            if not big and i < 30:
                t["torch"].append(_ms(lambda q=q: emb._encode([q])))
            t["exact"].append(_ms(lambda qv=qv: vi.search(qv, DENSE_POOL, exact_max=10**12)))
            t["coarse"].append(_ms(lambda qv=qv: vi.search(qv, DENSE_POOL, exact_max=0)))
            if i < VEC0_QUERIES:
                t["vec0"].append(
                    _ms(
                        lambda qv=qv: ix.store.rows(
                            "SELECT rowid, distance FROM vec_float WHERE embedding MATCH ? AND k = ?",
                            (qv.tobytes(), DENSE_POOL),
                        )
                    )
                )
                t["vec0bit"].append(
                    _ms(
                        lambda qv=qv: ix.store.rows(
                            "SELECT rowid FROM vec_bit WHERE embedding MATCH "
                            "vec_quantize_binary(?) AND k = ?",
                            (qv.tobytes(), sc.coarse_pool),
                        )
                    )
                )
            t["lexical"].append(_ms(lambda q=q: ix.search(q, mode="lexical")))
            _clear_query_cache(ix)
            t["dense_new"].append(_ms(lambda q=q: ix.search(q, mode="dense")))
            t["dense_cached"].append(_ms(lambda q=q: ix.search(q, mode="dense")))
            _clear_query_cache(ix)
            t["fused_new"].append(_ms(lambda q=q: ix.search(q)))
            t["fused_cached"].append(_ms(lambda q=q: ix.search(q)))
            _clear_query_cache(fresh, memo=True)
            t["fused_first"].append(_ms(lambda q=q: fresh.search(q)))

        p50 = {k: pct(v, 50) for k, v in t.items()}
        ref, scan = p50["ref"], p50["scan"]
        res.add(sec, "reference: numpy scan", scan, "ms", note="M @ q + top 10, BLAS or 1 thread")
        res.add(sec, "reference: query embedding (numpy BERT)", p50["embed"], "ms")
        res.add(sec, "reference: embedding + scan", ref, "ms")
        if t["torch"]:
            res.add(
                sec,
                "query embedding via torch (comparison)",
                p50["torch"],
                "ms",
                p50["embed"],
                "numpy BERT",
            )
        res.add(sec, f"vectors: exact top {DENSE_POOL}", p50["exact"], "ms", scan, "numpy scan")
        pool = max(sc.coarse_pool, DENSE_POOL, int(len(vi) * COARSE_SHARE))
        res.add(
            sec, f"vectors: coarse (pool {pool}) + rescore", p50["coarse"], "ms", scan, "numpy scan"
        )
        res.add(
            sec,
            f"sqlite-vec KNN (float, k={DENSE_POOL})",
            p50["vec0"],
            "ms",
            p50["exact"],
            "numpy exact",
        )
        res.add(
            sec,
            f"sqlite-vec KNN (bit, k={sc.coarse_pool})",
            p50["vec0bit"],
            "ms",
            p50["coarse"],
            "numpy coarse",
        )
        used = "coarse" if len(vi) > sc.exact_max else "exact"
        res.add(sec, f"dense leg uses: {used} (exact_max {sc.exact_max:,})", None, "")
        _add_lat(res, sec, "lexical leg", t["lexical"])
        _add_lat(res, sec, "dense leg, new query", t["dense_new"], ref, "embed+scan")
        _add_lat(res, sec, "dense leg, query vector cached", t["dense_cached"], scan, "scan")
        _add_lat(
            res, sec, "fused, first query of a fresh engine", t["fused_first"], ref, "embed+scan"
        )
        target, limit = ("<= 50 ms", 50.0) if big else ("ratio <= 2", 2 * ref)
        p = _add_lat(
            res,
            sec,
            "fused, new query (warm process)",
            t["fused_new"],
            ref,
            "embed+scan",
            target=target,
        )
        res.rows[-2].ok = p <= limit
        if t["torch"]:
            ref_t = p50["torch"] + scan
            res.add(sec, "  same against torch embedding + scan", p, "ms", ref_t, "torch+scan")
        p = _add_lat(
            res,
            sec,
            "fused, query vector cached",
            t["fused_cached"],
            scan,
            "scan",
            target="" if big else "<= 5 ms",
        )
        if not big:
            res.rows[-2].ok = p <= 5
        # Section 6: allocation of a dense query (cached vector), vs the plain scan's.
        q0 = emb.embed_query(queries[0])
        peak_scan = _traced(lambda: _top_k(mat @ q0, 10))
        peak_vec = _traced(lambda: vi.search(q0, DENSE_POOL, None, sc.exact_max, sc.coarse_pool))
        peak_leg = _traced(lambda: ix.search(queries[0], mode="dense"))
        res.add(
            "memory",
            f"tracemalloc peak, vector search @{label}",
            peak_vec / 1e3,
            "KB",
            peak_scan / 1e3,
            "numpy scan",
        )
        res.add(
            "memory",
            f"tracemalloc peak, dense leg query @{label}",
            peak_leg / 1e3,
            "KB",
            peak_scan / 1e3,
            "numpy scan",
        )
    return {"n_chunks": n_chunks, "n_vectors": len(vi), **{f"{k}_p50": v for k, v in p50.items()}}


def _traced(fn: Any) -> int:
    fn()  # warm: caches, lazy imports
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def _coarse_top(vi: VectorIndex, q: np.ndarray, k: int, pool: int) -> np.ndarray:
    """Top ``k`` ids of a coarse pass keeping exactly ``pool`` rows, then the rescore."""
    rows = vi._coarse(q, None, pool)
    scores = vi._scores(q, rows)
    return vi.ids[rows[_top_k(scores, k)]]


def coarse_recall(
    res: Results, db: Path, root: Path, emb: LocalEmbedder, queries: list[str], exact_max: int
) -> None:
    """Recall@10 (and @DENSE_POOL) of coarse + rescore against exact, on real MiniLM vectors
    with the golden sets' questions (and chunks) as queries.

    Recall depends on the share of rows the coarse pass keeps, so N real vectors with a
    pool of s * N stand for any corpus with the same share s: the old default (400 of
    100k = 0.4%) and COARSE_SHARE, what the dense leg keeps above ``exact_max``.
    """
    with Index(root, db=db, embedder=emb) as ix:
        vi = VectorIndex()
        vi.refresh(ix.store)
    n = len(vi)
    if n < 500:
        res.add(
            "recall", f"coarse recall: only {n} real vectors", None, "", note="run without --quick"
        )
        return
    qs = np.stack([emb.embed_query(q) for q in queries])
    rng = np.random.default_rng(0)
    own = vi.matrix[rng.choice(n, size=min(200, n), replace=False)]
    res.add(
        "recall",
        f"dense leg: exact up to {exact_max:,} vectors",
        1.0,
        "",
        1.0,
        "exact",
        target=">= 0.98",
        ok=True,
    )
    for label, qset in (("questions", qs), ("chunks as queries", own)):
        for share in (0.004, COARSE_SHARE):
            p = max(10, round(share * n))
            r10, r100 = [], []
            for q in qset:
                ex, _ = vi.search(q, DENSE_POOL, exact_max=10**12)
                r10.append(len(set(ex[:10]) & set(_coarse_top(vi, q, 10, p))) / 10)
                co = _coarse_top(vi, q, DENSE_POOL, max(p, DENSE_POOL))
                r100.append(len(set(ex) & set(co)) / len(ex))
            r = float(np.mean(r10))
            used = share == COARSE_SHARE
            res.add(
                "recall",
                f"coarse recall@10, {label}, pool {100 * share:.1f}% ({p} of {n})",
                r,
                "",
                1.0,
                "exact",
                target=">= 0.98" if used else "",
                ok=(r >= 0.98) if used else None,
                note=("used above exact_max; " if used else "old default 400/100k; ")
                + f"recall@{DENSE_POOL} {np.mean(r100):.3f}",
            )
