"""Learned fusion: one linear model over the evidence the hand ranker collects.

``rank.fuse`` adds the legs' normalised scores with hand-set weights per query shape, then
adds votes and multiplies penalties. Here the same evidence becomes a feature vector per
candidate (see FEATURES) and the score is a weighted sum, with the weights fitted by
``training/fusion.py`` (a listwise softmax loss over each query's candidates, on synthetic
queries mined from the training packages, never on the golden sets). Penalties enter as
logs, so a weight of 1 on them keeps the hand ranker's multiplicative meaning.

The weights live in ``fusion.json`` beside this file; ``[search] fusion = "learned"``
switches to them (evals/RESULTS.md says whether they beat the hand ranker).
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
from scrydb.search.rank import Candidate

WEIGHTS_FILE = Path(__file__).with_name("fusion.json")

SHAPES = ("identifier", "keyword", "question", "location")
#: Votes the ranker casts (votes.py); any other (the reranker's) counts as "other".
VOTES = ("symbol", "definition", "stem", "entry")
#: Penalty and boost factors (rank.py, votes.py), each a log feature.
FACTORS = (
    "test",
    "example",
    "vendored",
    "generated",
    "stub",
    "docs",
    "prose",
    "preamble",
    "comments",
    "imports",
    "declaration",
    "recent",
)

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


def features(cands: list[Candidate], shape: str, coverage: float = 1.0) -> np.ndarray:
    """The feature matrix (len(cands) x len(FEATURES)) of one query's candidates, whose
    ``score`` holds the hand ranker's (``rank.fuse``).

    ``coverage``: the share of the query's content words that occur in the index at all
    (1.0 when unknown); a paraphrase that shares few words with the code scores low."""
    x = np.zeros((len(cands), len(FEATURES)), dtype=np.float64)
    col = {n: i for i, n in enumerate(FEATURES)}
    lex = [-c.lex_score for c in cands if c.lex_score is not None]
    cos = [c.dense_score for c in cands if c.dense_score is not None]
    best_lex = max(lex) if lex else 1.0
    hi = max(cos) if cos else 1.0
    lo = min(cos) if cos else 0.0
    strength = math.log1p(max(best_lex, 0.0))
    si = SHAPES.index(shape) if shape in SHAPES else SHAPES.index("question")
    for i, c in enumerate(cands):
        row = x[i]
        row[col["hand"]] = c.score
        ln = 0.0
        if c.lex_score is not None and best_lex > 0:
            ln = -c.lex_score / best_lex
            row[col[f"lex@{SHAPES[si]}"]] = ln
            row[col["has_lex"]] = 1.0
            row[col["lex*strength"]] = ln * strength
            row[col["lex*coverage"]] = ln * coverage
        if c.lex_rank:
            row[col["lex_rr"]] = 1.0 / c.lex_rank
        if c.dense_score is not None:
            dn = max(0.0, (c.dense_score - lo) / (hi - lo)) if hi > lo else 1.0
            row[col[f"dense@{SHAPES[si]}"]] = dn
            row[col["has_dense"]] = 1.0
            row[col["cos"]] = c.dense_score
            row[col["dense*best_cos"]] = dn * hi
        if c.dense_rank:
            row[col["dense_rr"]] = 1.0 / c.dense_rank
        other = 0.0
        for name, w in c.votes.items():
            if name in VOTES:
                row[col[f"vote:{name}"]] = w
            else:
                other += w
        for w, r in c.rank_votes.values():
            other += w * 2 / (1 + r)
        row[col["vote:other"]] = other
        for name, f in c.factors.items():
            key = f"log:{name}"
            if key in col and f > 0:
                row[col[key]] = math.log(f)
        row[col["log_lines"]] = math.log1p(max(0, c.end_line - c.start_line + 1))
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
    rank.fuse(cands, *rank.WEIGHTS.get(shape, rank.WEIGHTS["question"]))
    s = features(items, shape, coverage) @ w
    rel = np.exp(s - s.max())
    for c, v in zip(items, rel, strict=True):
        c.score = float(v)
