"""Learned fusion: one linear model over the evidence the hand ranker collects.

``rank.fuse`` adds the legs' normalised scores with hand-set weights per query shape, then
adds votes and multiplies penalties. Here the same evidence becomes a feature vector per
candidate (see FEATURES) and the score is a weighted sum, with the weights fitted by
``training/fusion.py`` (a listwise softmax loss over each query's candidates, on synthetic
queries mined from the training packages, never on the golden sets). Penalties enter as
logs, so a weight of 1 on them keeps the hand ranker's multiplicative meaning.

The weights live in ``fusion.json`` beside this file. The learned fusion is the default
(``[search] fusion = "learned"``); ``fusion = "hand"`` goes back to rank.py's weights
(evals/RESULTS.md compares the two).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from scrydb.errors import ScryError
from scrydb.search import rank
from scrydb.search.query import QUERY_SHAPES
from scrydb.search.rank import Candidate

WEIGHTS_FILE = Path(__file__).with_name("fusion.json")

SHAPES = QUERY_SHAPES
#: Votes the ranker casts (votes.py); a reranker's rank vote counts as "other".
VOTES = ("symbol", "definition", "stem", "entry")
#: Votes that are not features, each with its reason (as UNUSED_FACTORS); a vote in
#: neither list is an error (tests/test_rank.py checks the lists agree with rank.py).
UNUSED_VOTES: dict[str, str] = {
    "frame": "a bug report's (reportquery.py): carried by the hand score until a refit",
    "message": "a bug report's (reportquery.py): carried by the hand score until a refit",
    "connected": "the code graph's (graph.connected_votes): carried by the hand score until a refit",
}
#: Factors a candidate can carry that are not features, each with its reason. A factor in
#: neither list is an error (rank.FACTOR_NAMES; tests/test_rank.py checks the three agree).
UNUSED_FACTORS: dict[str, str] = {
    # The short-chunk prior came after the fit (evals/RESULTS.md, 4 December): it reaches
    # the learned score through the "hand" feature (the hand ranker multiplies it in), and
    # a column of its own would need a refit of fusion.json.
    "short": "carried by the hand score; no column until fusion.json is refitted",
}
#: Penalty and boost factors that are features (each a log feature), in column order.
FACTORS = tuple(f for f in rank.FACTOR_ORDER if f not in UNUSED_FACTORS)

#: Feature names, in column order. "hand" is the hand ranker's own score (rank.fuse), so
#: the fitted model starts from it and learns corrections. Leg scores appear once per query shape (the hand
#: ranker's weights differ by shape too) and once scaled by how strong that leg's best
#: evidence is for this query (thin lexical evidence should count less).
FEATURES: tuple[str, ...] = (
    "hand",
    *(f"lex@{s}" for s in SHAPES),
    *(f"dense@{s}" for s in SHAPES),
    "lex_rr",
    "dense_rr",
    "has_lex",
    "has_dense",
    "cos",
    "lex*strength",
    "dense*best_cos",
    "lex*coverage",
    *(f"vote:{v}" for v in VOTES),
    "vote:other",
    *(f"log:{f}" for f in FACTORS),
    "log_lines",
)


#: Column of each feature.
COL: dict[str, int] = {n: i for i, n in enumerate(FEATURES)}
_FACTOR_COL: dict[str, int] = {f: COL[f"log:{f}"] for f in FACTORS}
_VOTE_COL: dict[str, int] = {v: COL[f"vote:{v}"] for v in VOTES}


def _factor_col(name: str) -> int:
    """A factor's column; -1 for one left out on purpose (UNUSED_FACTORS)."""
    col = _FACTOR_COL.get(name)
    if col is not None:
        return col
    if name in UNUSED_FACTORS:
        return -1
    raise ValueError(f"factor {name!r} is neither a feature nor in learned.UNUSED_FACTORS")


def features(cands: list[Candidate], shape: str, coverage: float = 1.0) -> np.ndarray:
    """The feature matrix (len(cands) x len(FEATURES)) of one query's candidates, whose
    ``score`` holds the hand ranker's (``rank.fuse``).

    ``coverage``: the share of the query's content words that occur in the index at all
    (1.0 when unknown); a paraphrase that shares few words with the code scores low."""
    return features_of(rank.evidence(cands), np.array([c.score for c in cands]), shape, coverage)


def features_of(ev: rank.Evidence, hand: np.ndarray, shape: str, coverage: float) -> np.ndarray:
    """The feature matrix from the pool's evidence and the hand ranker's scores (see
    :func:`features`), column by column."""
    n = len(ev.items)
    x = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if not n:
        return x
    if shape not in SHAPES:
        raise ValueError(f"unknown query shape {shape!r} (query.QUERY_SHAPES: {SHAPES})")
    x[:, COL["hand"]] = hand
    if ev.has_lex.any():
        x[:, COL[f"lex@{shape}"]] = ev.lex
        x[:, COL["has_lex"]] = ev.has_lex
        x[:, COL["lex*strength"]] = ev.lex * math.log1p(ev.best_lex)
        x[:, COL["lex*coverage"]] = ev.lex * coverage
    if ev.has_dense.any():
        x[:, COL[f"dense@{shape}"]] = ev.dense
        x[:, COL["has_dense"]] = ev.has_dense
        x[:, COL["cos"]] = ev.cos
        x[:, COL["dense*best_cos"]] = ev.dense * ev.hi
    for name, ranks in (("lex_rr", ev.lex_rank), ("dense_rr", ev.dense_rank)):
        np.divide(1.0, ranks, out=x[:, COL[name]], where=ranks > 0)
    x[:, COL["log_lines"]] = np.log1p(np.maximum(ev.lines, 0.0))
    if ev.vote_rows:  # named votes in their columns, rank votes summed as "other"
        other = COL["vote:other"]
        vcols = np.asarray(
            [-1 if v in UNUSED_VOTES else _VOTE_COL.get(v, other) for v in ev.vote_names]
        )
        rows = np.asarray(ev.vote_rows)
        vals = np.asarray(ev.vote_vals)
        m = (vcols != other) & (vcols >= 0)
        x[rows[m], vcols[m]] = vals[m]
        o = vcols == other
        x[:, other] = np.bincount(rows[o], weights=vals[o], minlength=n)
    if ev.factor_rows:
        cols = [_factor_col(f) for f in ev.factor_names]
        vals = np.asarray(ev.factor_vals)
        m = (np.asarray(cols) >= 0) & (vals > 0)
        if m.any():
            x[np.asarray(ev.factor_rows)[m], np.asarray(cols)[m]] = np.log(vals[m])
    return x


#: Lexical candidates (by rank) whose text ``coverage`` reads.
COVERAGE_DEPTH = 20


def coverage(terms: list[str], cands: dict[int, Candidate]) -> float:
    """The share of the query's content words found in the text of the best lexical hits:
    low for a paraphrase whose words the code does not use (its BM25 hits match on a
    word or two by chance)."""
    words = {t.lower() for t in terms if len(t) > 1}
    if not words:
        return 1.0
    top = [c for c in cands.values() if c.lex_rank is not None and c.lex_rank <= COVERAGE_DEPTH]
    text = "\n".join(c.content.lower() + "\n" + c.path.lower() for c in top)
    return sum(1 for w in words if w in text) / len(words)


@lru_cache(maxsize=4)
def load_weights(path: str = str(WEIGHTS_FILE)) -> tuple[np.ndarray, dict[str, Any]]:
    """The weight vector (in FEATURES order) and the file's metadata."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ScryError(f"cannot read the learned fusion weights {path}: {e}") from None
    names = data.get("features")
    if names != list(FEATURES):
        raise ScryError(
            f"{path}: its features differ from this version's (refit with training/fusion.py)"
        )
    return np.asarray(data["weights"], dtype=np.float64), data


def fuse(cands: dict[int, Candidate], shape: str, coverage: float = 1.0) -> None:
    """Score every candidate with the learned weights (in place). A score is the
    candidate's softmax weight relative to the best one's, ``exp(s - max s)``: the best
    hit scores 1 and the order is the linear model's, without a sigmoid's saturation."""
    items = list(cands.values())
    if not items:
        return
    w, _ = load_weights()
    ev = rank.evidence(items)
    hand = rank.hand_scores(ev, *rank.WEIGHTS.get(shape, rank.WEIGHTS["question"]))
    s = features_of(ev, hand, shape, coverage) @ w
    rel = np.exp(s - s.max())
    for c, v in zip(items, rel.tolist(), strict=True):
        c.score = v
