"""Every ranking constant, with why, and the pure functions that apply them.

A candidate collects evidence from the legs (lexical rank/score, dense rank/score) and
from the ranker (symbol votes, path and content priors); ``fuse`` turns evidence into one
score and ``diversify`` orders the final list. Change a constant only with
``scry eval --legs`` numbers before and after (evals/RESULTS.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: (dense weight, lexical weight) by query shape. Identifier and keyword queries lean
#: lexical: the exact token is the strongest evidence and MiniLM is weak on identifiers.
#: Questions lean dense (the defaults of the code-search tools we compare with).
WEIGHTS: dict[str, tuple[float, float]] = {
    "identifier": (0.35, 0.65),
    "keyword": (0.35, 0.65),
    "question": (0.55, 0.45),
    "location": (0.45, 0.55),
}

#: Share of a chunk's dense score that comes from its header vector (chunk/header.py):
#: a question reads like a docstring, and a short text of names and the first docstring
#: sentence matches it better than a body full of code does. `scry eval --half dev`, all
#: sets, MRR@10 fused / dense: 0 (body only) 0.655 / 0.457; 0.15 0.664 / 0.495; 0.25
#: 0.659 / 0.493; 0.4 0.651 / 0.486; the better of the two cosines 0.659 / 0.481.
HEAD_WEIGHT = 0.15


def with_header(body: float, head: float) -> float:
    """A chunk's dense score from the cosines of its body and its header."""
    return (1.0 - HEAD_WEIGHT) * body + HEAD_WEIGHT * head


#: Share of a window's lead over its chunk's body score that the chunk gets
#: (chunk/windows.py): 1.0 scores a long chunk by its best window. `scry eval --half dev`,
#: all sets, fused MRR@10: 0.5 0.696; 0.75 0.702; 1.0 0.705; 1.25 0.699.
WINDOW_LEAD = 1.0


def with_window(score: float | None, window: float) -> float:
    """A chunk's dense score raised by its best window cosine (None: no body score)."""
    if score is None:
        return window
    return score + WINDOW_LEAD * (window - score) if window > score else score


#: Candidates taken from each leg; location questions widen the pool (the answer is
#: often a small registration or ``main`` chunk that ranks low on both legs).
POOL = 100
POOL_LOCATION = 200
#: Up to this many hits the pool does not grow with ``k``, so the top hits do not depend
#: on ``-n`` or the MCP ``limit`` (at most 50); beyond it the pool is 3k per leg.
POOL_FIXED_K = 50


def pool_size(shape: str, k: int) -> int:
    """Candidates taken from each leg for a query of ``shape`` asking for ``k`` hits."""
    pool = POOL_LOCATION if shape == "location" else POOL
    return pool if k <= POOL_FIXED_K else max(pool, 3 * k)


#: Decimal places of a hit's score (``Hit.score``, ``--explain``'s score: one scale).
SCORE_DIGITS = 6

#: BM25 column weights (symbol, file stem, directories, body). The symbol column holds
#: a chunk's own definitions, so a match there says "this chunk defines it".
BM25_WEIGHTS = (4.0, 4.0, 1.0, 1.0)

#: Extra rank-1 vote for a chunk that defines a symbol named in the query.
SYMBOL_VOTE = 1.0
#: Symbol vote kept when the query's qualifier (``Client`` in ``Client.send``) differs.
WRONG_QUALIFIER = 0.5
#: For identifier queries, a definition of the exact identifier gets this much more,
#: and one in a file whose stem equals the identifier more again.
DEFINITION_VOTE = 1.0
STEM_VOTE = 0.5
#: A symbol named by a plain word ("run", "new") votes only when it has at most this
#: many definitions in the index: an ambiguous word must not pull in every ``run``.
PLAIN_WORD_MAX_DEFS = 3

#: "Connected to a strong hit" (issue 44, the code graph): a candidate that a chunk both
#: legs rank in their top STRONG_RANK calls (resolved, search/graph.py, confidence >=
#: 0.7) gets CONNECTED_VOTE. All nine sets, fused MRR@10 before -> after: dev 0.759 ->
#: 0.768 (location 0.708 -> 0.748), test 0.728 -> 0.737 (location 0.660 -> 0.675). Its
#: callers too: dev 0.772, test 0.728, and every candidate's calls resolved per query;
#: the same by name instead of resolution, a centrality prior (uses or PageRank): no
#: better on dev (evals/RESULTS.md).
CONNECTED_VOTE = 0.5
STRONG_RANK = 10

#: Multiplicative penalties for paths that are rarely the answer, lifted when the query
#: asks for them ("test for ...", "example of ...").
PENALTY_TEST = 0.55
PENALTY_EXAMPLE = 0.7
PENALTY_GENERATED = 0.5
PENALTY_VENDORED = 0.5
PENALTY_STUB = 0.7
PENALTY_DOCS = 0.75

#: At most this many hits per file keep one file from filling the list. (A per-file
#: score decay instead, 0.5 per extra chunk, cost -0.05 MRR@10 and -0.16 Recall@10 on
#: the evals/ sets: the answer is often the second chunk of the best file.)
MAX_PER_FILE = 5

#: Two hits whose word sets overlap more than this (Jaccard) are near-duplicates
#: (a v3/ and a v4/ copy of the same class): the lower one is dropped.
NEAR_DUPLICATE = 0.9

#: Location questions that ask for an entry point ("where does the CLI start"): chunks
#: shaped like one get a vote worth two symbol votes: the question names no symbol, and
#: words like "start" match every ``start_line`` (1.0 -> 2.0: +0.003 MRR@10, both
#: "where does ... start" cases of the sets move from rank 2 to 1).
ENTRY_VOTE = 2.0

_TEST_PATH = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testing|test_?utils?|e2e|integration_tests?)(/|$)"
    r"|(^|/)test_[^/]*$|_test\.[a-z]+$|\.test\.[a-z]+$|\.spec\.[a-z]+$|(^|/)conftest\.py$|Tests?\.[a-z]+$",
    re.I,
)
_FIXTURE_PATH = re.compile(
    r"(^|/)(fixtures?|testdata|test_data|mocks?|__mocks__|__snapshots__)(/|$)", re.I
)
_EXAMPLE_PATH = re.compile(
    r"(^|/)(examples?|samples?|demos?|tutorials?|benchmarks?|bench)(/|$)", re.I
)
_VENDOR_PATH = re.compile(r"(^|/)(vendor|vendored|third_party|thirdparty|external|deps)(/|$)", re.I)
_GENERATED_PATH = re.compile(
    r"(_pb2\.py|\.pb\.go|\.generated\.|_generated\.|\.g\.dart|\.designer\.cs)$", re.I
)
_STUB_PATH = re.compile(r"\.pyi$|\.d\.ts$")
_DOC_PATH = re.compile(
    r"(^|/)(docs?|documentation)(/|$)|(^|/)(CHANGELOG|CHANGES|HISTORY|NEWS)[^/]*$", re.I
)


@dataclass
class Candidate:
    """Everything known about one chunk during ranking."""

    chunk_id: int
    lex_rank: int | None = None
    lex_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    votes: dict[str, float] = field(default_factory=dict)  #: name -> weight of a rank-1 vote
    factors: dict[str, float] = field(default_factory=dict)  #: name -> multiplier
    #: name -> (weight, rank) of a vote cast at that rank (the reranker leg)
    rank_votes: dict[str, tuple[float, int]] = field(default_factory=dict)
    rerank_score: float | None = None  #: the reranker's raw score (``--explain``)
    rerank_rank: int | None = None  #: its rank among the reranked candidates
    #: (kind, qualname) of the definition a symbol vote found in this chunk: it names
    #: the hit when the chunk holds several peers (``symbol`` ``"A, B"``)
    matched: tuple[str, str] | None = None
    #: the window (chunk/windows.py, its seq) whose cosine gave the dense score, if one did
    window: int | None = None
    score: float = 0.0
    # filled from the chunks table before path signals and diversity
    path: str = ""
    lang: str | None = None
    start_line: int = 0
    end_line: int = 0
    kind: str = ""
    symbol: str | None = None
    content: str = ""
    text_hash: str = ""
    mtime_ns: int = 0

    def explain(self) -> dict[str, Any]:
        """The components of the score, for ``--explain``."""
        votes = {k: round(v, 3) for k, v in self.votes.items()}
        for k, (w, r) in self.rank_votes.items():  # as the weight of an equal rank-1 vote
            votes[k] = round(w * 2 / (1 + r), 3)
        out = {
            "lexical_rank": self.lex_rank,
            "bm25": None if self.lex_score is None else round(-self.lex_score, 4),
            "dense_rank": self.dense_rank,
            "cosine": None if self.dense_score is None else round(self.dense_score, 4),
            "votes": votes,
            "factors": {k: round(v, 3) for k, v in self.factors.items()},
            "score": round(self.score, SCORE_DIGITS),
        }
        if self.window is not None:
            out["cosine_from_window"] = self.window
        if self.rerank_score is not None:
            out["rerank"] = round(self.rerank_score, 4)
            out["rerank_rank"] = self.rerank_rank
        return out


#: The legs are combined by score, not rank: a convex combination of per-query
#: normalised scores (BM25 / best BM25; cosine min-max over the pool) plus votes. It
#: keeps how far ahead a leg's best hit is, which rank fusion throws away: on the four
#: evals/ sets it beat weighted RRF (k=60, Cormack et al.) by +0.06 MRR@10 and RRF with k=20
#: by +0.03 (evals/RESULTS.md).
#: The weight of one vote (symbol, definition, entry ...) relative to a leg's
#: normalised score (1.0 for that leg's best hit).
SCORE_VOTE = 0.25


#: A rank vote's name in ``Evidence.vote_names`` (the reranker leg casts them).
RANK_VOTE = ""
#: Every vote name the ranker casts (votes.py); a reranker votes by rank (RANK_VOTE).
#: "frame" and "message" are a bug report's (search/reportquery.py), "connected" the code
#: graph's (CONNECTED_VOTE): the learned fusion has no column of theirs (fusion.json
#: predates them), so they count through its "hand" feature, as the short-chunk factor does.
VOTE_NAMES = frozenset({"symbol", "definition", "stem", "entry", "frame", "message", "connected"})
#: Every factor name a candidate can carry, in the learned features' column order: path
#: and content penalties (this module), the declaration, short-chunk and recency factors
#: (votes.py). The learned features (learned.py) use each one or say why not; any other
#: name is an error.
FACTOR_ORDER = (
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
    "short",
    "recent",
)
FACTOR_NAMES = frozenset(FACTOR_ORDER)


@dataclass
class Evidence:
    """A pool's evidence as arrays, read from the candidates once per query. ``fuse`` and
    the learned ranker (learned.py) both score from it, so the legs are normalised by one
    rule."""

    items: list[Candidate]
    #: BM25 over the pool's best (1.0 for the best hit); 0 outside the lexical leg, and
    #: everywhere when no hit has a positive BM25
    lex: np.ndarray
    has_lex: np.ndarray  #: in the lexical leg with a usable score
    best_lex: float  #: the pool's best BM25 (higher is better)
    cos: np.ndarray  #: the raw cosine; 0 outside the dense leg
    #: min-max normalised cosine in [0, 1]; 0 outside the dense leg; 1.0 when all are equal
    dense: np.ndarray
    has_dense: np.ndarray
    spread: bool  #: the cosines differ (min-max normalisation means something)
    hi: float  #: the pool's best cosine
    lex_rank: np.ndarray  #: 0 outside the leg
    dense_rank: np.ndarray
    lines: np.ndarray
    votes: np.ndarray  #: vote weight as rank-1 votes (a vote at rank r counts 2 / (1 + r))
    factor: np.ndarray  #: product of the factors
    #: the votes one by one: (candidate row, name or RANK_VOTE, weight as a rank-1 vote)
    vote_rows: list[int]
    vote_names: list[str]
    vote_vals: list[float]
    #: the factors one by one: (candidate row, name, multiplier)
    factor_rows: list[int]
    factor_names: list[str]
    factor_vals: list[float]


def evidence(items: list[Candidate]) -> Evidence:
    """The pool's evidence (see :class:`Evidence`): one pass over the candidates, then numpy."""
    n = len(items)
    nan = math.nan
    num = np.array(
        [
            (
                nan if c.lex_score is None else c.lex_score,  # NaN: not in that leg
                nan if c.dense_score is None else c.dense_score,
                c.lex_rank or 0,
                c.dense_rank or 0,
                c.start_line,
                c.end_line,
            )
            for c in items
        ],
        dtype=np.float64,
    ).reshape(n, 6)
    bm25, cos, lex_rank, dense_rank, start, end = num.T
    (vrows, vnames, vvals), (frows, fnames, fvals) = _votes_and_factors(items)
    raw = -bm25  # FTS5's bm25() is lower-is-better
    in_lex = ~np.isnan(raw)
    best_lex = float(raw[in_lex].max()) if in_lex.any() else 1.0
    has_lex = in_lex & (best_lex > 0)
    lex = np.where(has_lex, raw / best_lex, 0.0) if best_lex > 0 else np.zeros(n)
    has_dense = ~np.isnan(cos)
    hi = float(cos[has_dense].max()) if has_dense.any() else 1.0
    lo = float(cos[has_dense].min()) if has_dense.any() else 0.0
    spread = hi > lo
    cos = np.where(has_dense, cos, 0.0)
    if spread:
        dense = np.where(has_dense, np.maximum(0.0, (cos - lo) / (hi - lo)), 0.0)
    else:
        dense = has_dense.astype(np.float64)
    votes = np.bincount(vrows, weights=vvals, minlength=n) if vrows else np.zeros(n)
    factor = np.ones(n)
    if frows:
        np.multiply.at(factor, frows, fvals)
    return Evidence(
        items,
        lex,
        has_lex,
        best_lex,
        cos,
        dense,
        has_dense,
        spread,
        hi,
        lex_rank,
        dense_rank,
        end - start + 1,
        votes,
        factor,
        vrows,
        vnames,
        vvals,
        frows,
        fnames,
        fvals,
    )


_Rows = tuple[list[int], list[str], list[float]]


def _votes_and_factors(items: list[Candidate]) -> tuple[_Rows, _Rows]:
    """The pool's votes (a rank vote as the weight of an equal rank-1 vote) and factors,
    one row each: (candidate rows, names, values). An unlisted name is an error."""
    votes: _Rows = ([], [], [])
    factors: _Rows = ([], [], [])
    for i, c in enumerate(items):
        named = [
            *c.votes.items(),
            *((RANK_VOTE, w * 2 / (1 + r)) for w, r in c.rank_votes.values()),
        ]
        for rows, pairs in ((votes, named), (factors, c.factors.items())):
            for name, value in pairs:
                rows[0].append(i)
                rows[1].append(name)
                rows[2].append(value)
    unknown = (set(factors[1]) - FACTOR_NAMES) | (set(votes[1]) - VOTE_NAMES - {RANK_VOTE})
    if unknown:  # a renamed or new factor must be named here (and in the learned features)
        raise ValueError(f"unknown ranking evidence {sorted(unknown)}: add it to rank.py")
    return votes, factors


def hand_scores(ev: Evidence, dense_w: float, lex_w: float) -> np.ndarray:
    """The hand ranker's score per candidate: the legs' normalised scores weighted, plus
    SCORE_VOTE per rank-1 vote, times every factor."""
    s = lex_w * ev.lex
    if ev.spread:  # equal cosines carry no ranking information
        s = s + dense_w * ev.dense
    return (s + SCORE_VOTE * ev.votes) * ev.factor


def fuse(cands: dict[int, Candidate], dense_w: float, lex_w: float) -> None:
    """One score per candidate from the legs, votes and factors (in place)."""
    items = list(cands.values())
    if not items:
        return
    for c, v in zip(items, hand_scores(evidence(items), dense_w, lex_w).tolist(), strict=True):
        c.score = v


#: A code chunk that is mostly comments (a module's doc block) or mostly imports is
#: rarely the answer: COMMENT_SHARE / IMPORT_SHARE of its non-blank lines trigger
#: PENALTY_COMMENTS / PENALTY_IMPORTS.
COMMENT_SHARE = 0.8
IMPORT_SHARE = 0.6
PENALTY_COMMENTS = 0.75
PENALTY_IMPORTS = 0.75
_PROSE_LANGS = frozenset(
    {None, "markdown", "rst", "text", "yaml", "toml", "json", "ini", "xml", "html"}
)
_COMMENT_LINE = re.compile(
    r"\s*(//|/\*|\*|#(?!include|define|if|endif|else|pragma|import)|--|;;|%)"
)
_IMPORT_LINE = re.compile(
    r"\s*(import\b|from\s+\S+\s+import\b|use\s|using\s|#include\b|require\(|package\s|extern crate\b|"
    r"export\s+\*\s+from\b|export\s*\{[^}]*\}\s*from\b|\}\s*from\s|mod\s+\w+;|pub\s+(use|mod)\s)"
)


#: Markdown, reST and plain text are documentation: the answer to a question about the
#: code is rarely there (lifted when the query asks for docs).
PENALTY_PROSE = 0.75
_DOC_LANGS = frozenset({"markdown", "rst", "text"})
#: A file's leading ``code`` chunk (module docstring, imports, constants) summarises the
#: module, so it matches every question about it, yet is rarely the answer.
PENALTY_PREAMBLE = 0.75


#: For questions, behaviour (functions, methods) answers more often than declarations
#: (classes, structs, interfaces, type aliases): a mild prior, not applied to
#: identifier or keyword queries, which name what they want.
PENALTY_DECLARATION = 0.85
DECLARATION_SHAPES = frozenset({"question", "location"})
DECLARATION_KINDS = frozenset(
    {"class", "struct", "interface", "enum", "type", "impl", "trait", "union"}
)


#: For questions, a very short chunk (a getter, a setter, a one-line macro or constant) is
#: rarely the answer to *how* something works, yet its few words match the question's as
#: well as a long body's many do, and its vector is all about them. A chunk of L <
#: SHORT_LINES lines gets (L / SHORT_LINES) ** alpha, alpha by the query's shape, unless
#: the query names it (a symbol vote). A statement of what code does ("merge adjacent
#: text nodes", a question shape without a question word) gets none: such descriptions
#: often fit a small helper exactly. `scry eval --half dev`, all sets, fused MRR@10:
#: none 0.710; question/location alpha 0.3/0.15, L 25: 0.739 (L 20 0.728, L 30 0.735;
#: 0.4/0.2 0.729); the same for statements too: 0.733 (paraphrase 0.477 -> 0.433).
SHORT_LINES = 25.0
SHORT_ALPHA = {"question": 0.3, "location": 0.15}


def short_factor(lines: int, shape: str, interrogative: bool = True) -> float:
    """The prior of a chunk of ``lines`` lines for a query of ``shape`` (question and
    location shapes; any other: 1.0). A question-shaped statement (``interrogative``
    False: no question word, no "?") gets none."""
    if shape == "question" and not interrogative:
        return 1.0
    alpha = SHORT_ALPHA.get(shape, 0.0)
    if alpha <= 0 or lines >= SHORT_LINES:
        return 1.0
    return float((max(lines, 1) / SHORT_LINES) ** alpha)


def content_factors(
    content: str, lang: str | None, kind: str = "", start_line: int = 0
) -> dict[str, float]:
    """Penalties for prose files and for code chunks that are preambles, mostly comments
    or mostly imports."""
    if lang in _DOC_LANGS:
        return {"prose": PENALTY_PROSE} if PENALTY_PROSE < 1 else {}
    if lang in _PROSE_LANGS:
        return {}
    if kind == "code" and start_line == 1 and PENALTY_PREAMBLE < 1:
        return {"preamble": PENALTY_PREAMBLE}
    lines = [ln for ln in content.split("\n") if ln.strip()]
    if not lines:
        return {}
    n = len(lines)
    if sum(1 for ln in lines if _COMMENT_LINE.match(ln)) >= COMMENT_SHARE * n:
        return {"comments": PENALTY_COMMENTS}
    if n >= 2 and sum(1 for ln in lines if _IMPORT_LINE.match(ln)) >= IMPORT_SHARE * n:
        return {"imports": PENALTY_IMPORTS}
    return {}


#: Recency (``[search] recency = true``, off by default): a chunk of a file changed
#: within RECENCY_DAYS of the newest file in the index gets up to RECENCY_BOOST more,
#: fading linearly with age. Relative to the newest file, not to the clock, so an old
#: checkout is judged by its own history. Off by default: the golden sets are unpacked
#: archives whose files share one mtime, so there is no evidence it helps there.
RECENCY_DAYS = 14.0
RECENCY_BOOST = 0.1


def recency_factor(mtime_ns: int, newest_ns: int) -> float:
    """1 + RECENCY_BOOST for the newest file, fading to 1 at RECENCY_DAYS older."""
    if not mtime_ns or not newest_ns:
        return 1.0
    age_days = max(0.0, (newest_ns - mtime_ns) / 86_400e9)
    if age_days >= RECENCY_DAYS:
        return 1.0
    return 1.0 + RECENCY_BOOST * (1.0 - age_days / RECENCY_DAYS)


def path_factors(
    path: str, wants_tests: bool, wants_examples: bool, wants_docs: bool
) -> dict[str, float]:
    """Penalties that apply to a path, by name."""
    out: dict[str, float] = {}
    if not wants_tests and (_TEST_PATH.search(path) or _FIXTURE_PATH.search(path)):
        out["test"] = PENALTY_TEST
    if not wants_examples and _EXAMPLE_PATH.search(path):
        out["example"] = PENALTY_EXAMPLE
    if _VENDOR_PATH.search(path):
        out["vendored"] = PENALTY_VENDORED
    if _GENERATED_PATH.search(path):
        out["generated"] = PENALTY_GENERATED
    if _STUB_PATH.search(path):
        out["stub"] = PENALTY_STUB
    if not wants_docs and _DOC_PATH.search(path):
        out["docs"] = PENALTY_DOCS
    return out


def is_test_path(path: str) -> bool:
    """Whether a path looks like a test or fixture file."""
    return bool(_TEST_PATH.search(path) or _FIXTURE_PATH.search(path))


_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text))


def diversify(cands: list[Candidate], k: int, cap: int = MAX_PER_FILE) -> list[Candidate]:
    """Top ``k`` by score, at most ``cap`` per file, near-duplicates dropped."""
    chosen: list[Candidate] = []
    per_file: dict[str, int] = {}
    seen_hashes: set[str] = set()
    chosen_words: list[frozenset[str]] = []
    for c in sorted(cands, key=lambda c: (-c.score, c.path, c.start_line)):
        if len(chosen) >= k:
            break
        n = per_file.get(c.path, 0)
        if n >= cap or c.text_hash in seen_hashes:
            continue
        words = _word_set(c.content)
        if len(words) >= 8 and any(_jaccard(words, w) > NEAR_DUPLICATE for w in chosen_words):
            continue
        chosen.append(c)
        seen_hashes.add(c.text_hash)
        chosen_words.append(words)
        per_file[c.path] = n + 1
    return chosen


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)
