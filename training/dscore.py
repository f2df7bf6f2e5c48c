"""Offline dense-leg scoring of the golden sets: chunks ranked as the dense leg ranks them
(``search/engine.py``: body cosine, header cosine at ``rank.HEAD_WEIGHT``, best window at
``rank.WINDOW_LEAD``), from the data ``export_eval.py`` writes and any text and query
vectors. Needs numpy only (it runs where scrydb is not installed, e.g. on a lent GPU): the
constants are read from ``scrydb/search/rank.py`` itself, which imports nothing else.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "_scry_rank", Path(__file__).resolve().parent.parent / "scrydb" / "search" / "rank.py"
)
assert _spec is not None and _spec.loader is not None
_rank = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _rank  # dataclasses look their module up
_spec.loader.exec_module(_rank)
HEAD_WEIGHT: float = _rank.HEAD_WEIGHT
WINDOW_LEAD: float = _rank.WINDOW_LEAD
KINDS = ("identifier", "nl", "location", "paraphrase")


def prep(sd):
    """Index arrays for one set."""
    ch = sd["chunks"]
    body = np.array([c[4] for c in ch])
    head = np.array([c[5] for c in ch])
    wc, wt = [], []
    for i, c in enumerate(ch):
        for t in c[6]:
            wc.append(i)
            wt.append(t)
    return body, head, np.array(wc, dtype=int), np.array(wt, dtype=int)


def chunk_scores(T, Q, idx):
    """(n_queries, n_chunks) dense scores. T: text vectors, Q: query vectors (normalised)."""
    body, head, wc, wt = idx
    S = Q @ T.T
    b = S[:, body]
    hs = np.where(head >= 0, S[:, np.maximum(head, 0)], np.nan)
    sc = np.where(np.isnan(hs), b, (1 - HEAD_WEIGHT) * b + HEAD_WEIGHT * np.nan_to_num(hs))
    if len(wc):
        w = S[:, wt]
        best = np.full_like(sc, -np.inf)
        np.maximum.at(best.T, wc, w.T)
        sc = np.where(best > sc, sc + WINDOW_LEAD * (best - sc), sc)
    return sc


def evaluate(sets, embed_texts, embed_queries, halves=("dev", "test"), k=10):
    """{half: {"all": mrr, kind: mrr, "sets": {name: mrr}, "r10": recall}}"""
    res = {h: {"rr": [], "kinds": {}, "sets": {}, "hit": []} for h in halves}
    for name, sd in sets.items():
        T = embed_texts(name, sd["texts"])
        cases = [c for c in sd["cases"] if c["half"] in halves]
        Q = embed_queries([c["q"] for c in cases])
        sc = chunk_scores(T, Q, sd["_idx"])
        for qi, c in enumerate(cases):
            s = sc[qi]
            if c["allowed"] is not None:
                m = np.full(len(s), -np.inf)
                m[c["allowed"]] = s[c["allowed"]]
                s = m
            top = np.argsort(-s, kind="stable")[:k]
            rel = set(c["rel"])
            r = next((i + 1 for i, t in enumerate(top) if int(t) in rel), None)
            rr = 1.0 / r if r else 0.0
            h = res[c["half"]]
            h["rr"].append(rr)
            h["hit"].append(r is not None)
            h["kinds"].setdefault(c["kind"], []).append(rr)
            h["sets"].setdefault(name, []).append(rr)
    out = {}
    for h, d in res.items():
        out[h] = {
            "all": round(float(np.mean(d["rr"])), 4),
            "r10": round(float(np.mean(d["hit"])), 4),
            **{k: round(float(np.mean(v)), 4) for k, v in d["kinds"].items()},
            "sets": {k: round(float(np.mean(v)), 4) for k, v in d["sets"].items()},
        }
    return out
