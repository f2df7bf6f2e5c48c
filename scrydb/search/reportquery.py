"""A bug report as a query (issue 47): what the legs and the votes read from a
:class:`~scrydb.search.report.Report` instead of the raw text.

- The lexical leg gets the report's names first (traceback functions, error types,
  identifiers in backticks, names its code uses, mentioned files' stems), then the prose's
  content words, at most :data:`MAX_TERMS` tokens: BM25 weighs each by its rarity.
- The dense leg embeds each prose segment (the model reads 256 word pieces; a report is
  thousands of characters) and searches with their normalised mean.
- Votes: the chunk around a traceback frame that maps to an indexed file (the innermost
  in-repository frame most), and the chunks that hold an error message's constant text
  (the code that raises or formats it). The names the report gives vote through the
  symbol votes, as a question's identifiers do.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from scrydb.search import rank
from scrydb.search.framepath import PathMapper
from scrydb.search.report import Frame, Report
from scrydb.store import Store, legs
from scrydb.store import evidence as ev
from scrydb.store import files as indexed_files

#: Most lexical tokens a report sends (names first, then prose words).
MAX_TERMS = 80
#: Most names (identifiers for symbol votes) a report gives.
MAX_NAMES = 40
#: Most prose segments embedded (a report's first ones: its title and description). Each
#: costs one query-encoder pass (~0.1-0.2 s on 2 cores): 6 took a 5,000-character report
#: to 1.6 s, 3 to 0.6 s on a loaded machine (bench/report_bench.py), with the same scores
#: on the CI subset of evals/reports (file Acc@1/5/10 0.4/0.8/1.0, MRR 0.713 both ways).
#: 3 -> 2 (8 December): every figure the same on all five repositories, dev and test
#: (proxy.py --dense: sqlfluff, pydicom, marshmallow, pvlib, astroid); 1 moved sqlfluff
#: up and pydicom down.
MAX_SEGMENTS = 2
#: Vote of the chunk around the innermost in-repository traceback frame, and of the
#: chunks around the other in-repository frames. Doubled from 2.0 / 1.0 (and MESSAGE_VOTE
#: from 1.0) on the dev half's proxy (evals/RESULTS.md, issue 47): MRR sqlfluff 0.457 ->
#: 0.491, pydicom 0.638 -> 0.663.
FRAME_VOTE = 4.0
OUTER_FRAME_VOTE = 2.0
#: Vote of a chunk that holds an error message's constant text.
MESSAGE_VOTE = 2.0
#: "Where to change" (issue 47): a report asks for the code to change, so after the fusion
#: a candidate in a test, fixture, example or docs path, and one in a file of prose or
#: configuration (Markdown, reStructuredText, text, YAML, TOML, JSON, INI, XML, HTML),
#: has its score multiplied by these (on top of the path priors every query gets; they
#: are the "not_code" and "test_docs" weights of :data:`REPORT_WEIGHTS`, as logs). Dev
#: half's proxy (evals/RESULTS.md): sqlfluff file Acc@5 0.333 -> 0.429, MRR 0.457 -> 0.602
#: (the prose and configuration files were what crowded its top five); pydicom MRR 0.638
#: -> 0.643; 0.1 and 0.05 score the same as 0.2.
REPORT_NOT_CODE = 0.2
REPORT_TEST_OR_DOCS = 0.2
#: Languages whose files hold no code to change.
NOT_CODE_LANGS = frozenset(
    {"markdown", "rst", "text", "yaml", "toml", "json", "ini", "xml", "html"}
)
#: "Which file": a report's evidence is spread over a file (a traceback's function, the
#: class it names, the message it formats), so its code files (outside tests, examples
#: and docs) are ranked by the sum of their chunks' BM25 over a wider lexical pool
#: (:data:`FILE_POOL` chunks), and a candidate's "file_rr" feature is
#: ``(FILE_K + 1) / (FILE_K + rank)`` (the best file 1.0).
FILE_POOL = 200
FILE_K = 5.0
#: The weight of "file_rr": the best file's candidates x e^FILE_WEIGHT. Dev half, each
#: repository indexed once with its vectors (evals/reports/proxy.py --dense), file Acc@1
#: / @5 / @10, function Acc@5 / @10, MRR, 0 -> 2: sqlfluff 0.214 / 0.452 / 0.524 / 0.214
#: / 0.214 / 0.642 -> 0.238 / 0.452 / 0.595 / 0.214 / 0.238 / 0.633; pydicom 0.400 /
#: 0.660 / 0.760 / 0.354 / 0.438 / 0.690 -> 0.400 / 0.680 / 0.760 / 0.354 / 0.438 / 0.696
#: (0.5 and 1 less on file Acc@10; evals/RESULTS.md).
FILE_WEIGHT = 2.0
#: Most hits per file for a report (rank.MAX_PER_FILE, 5, for other queries): a fix often
#: changes several functions of one file. Dev half (proxy.py --dense), function Acc@10:
#: sqlfluff 0.238 -> 0.262, pydicom 0.438 -> 0.479, every file figure the same (2: lower;
#: 12 and 20: lower than 8).
MAX_PER_FILE = 8
#: Shortest message fragment searched as a literal (shorter ones match everywhere).
MIN_FRAGMENT = 12
#: Chunks read per message fragment.
MAX_MESSAGE_CHUNKS = 20


def report_names(rep: Report) -> list[str]:
    """The names a report gives, strongest first: frames' functions (not library first,
    innermost first), error types, backtick identifiers, the names its code uses; each
    once, at most :data:`MAX_NAMES`."""
    frames = sorted(rep.frames, key=lambda f: (f.library, f.depth))
    names = [_last(f.function) for f in frames if f.function]
    names += [_last(e.type) for e in rep.errors if e.type]
    names += list(rep.identifiers) + list(rep.code_names)
    out: list[str] = []
    for n in names:
        n = n.strip("()`'\" ")
        if n and len(n) > 2 and n not in out:
            out.append(n)
    return out[:MAX_NAMES]


def _last(function: str) -> str:
    for sep in ("::", "->", "#", "/"):
        function = function.replace(sep, ".")
    return function.rstrip(".").split(".")[-1] if function else ""


def report_text_words(rep: Report) -> str:
    """The report's words for the lexical leg: its names, mentioned files, then prose."""
    stems = [m.path.rsplit("/", 1)[-1].split(".", 1)[0] for m in rep.mentions]
    return " ".join([*report_names(rep), *stems, *rep.segments])


def dense_segments(rep: Report, fallback: str) -> list[str]:
    """What the dense leg embeds: the first prose segments (the text itself without)."""
    segs = [s for s in rep.segments if s.strip()][:MAX_SEGMENTS]
    return segs or [fallback]


def frame_votes(
    store: Store, rep: Report, cands: dict[int, rank.Candidate], join: bool = True
) -> None:
    """The chunk holding each in-repository frame's line gets a vote (the innermost
    most); it joins the candidates even when neither leg found it (``join``; a filtered
    search passes False: only what the legs found inside the filter may be voted for)."""
    mapped = _mapped_frames(store, rep)
    if not mapped:
        return
    innermost = min(f.depth for f, _p in mapped)
    for f, path in mapped:
        if f.line is None:
            continue
        cid = ev.chunk_holding(store, path, f.line)
        if cid is None or (not join and cid not in cands):
            continue
        c = cands.setdefault(cid, rank.Candidate(cid))
        w = FRAME_VOTE if f.depth == innermost else OUTER_FRAME_VOTE
        c.votes["frame"] = max(c.votes.get("frame", 0.0), w)


def _mapped_frames(store: Store, rep: Report) -> list[tuple[Frame, str]]:
    """The report's frames with a line whose path maps to an indexed file, with that file.
    A "library" frame is the repository's own code when its path maps (the report came
    from an installed copy: site-packages/pkg/...)."""
    frames = [f for f in rep.frames if f.line and (f.module_path or f.path)]
    if not frames:
        return []
    mapper = PathMapper(indexed_files.paths(store))
    mapped = [(f, mapper.map(f.module_path or f.path)) for f in frames]
    return [(f, p) for f, p in mapped if p is not None]


def file_ranks(
    store: Store, match: str | None, where: legs.Where = ("", ()), active: bool = False
) -> dict[str, int]:
    """Code files ranked by the sum of their chunks' BM25 over the best
    :data:`FILE_POOL` chunks of the lexical expression ``match`` (1 = best); ``where``
    and ``active``: the search's filter, as the lexical leg takes it."""
    if not match:
        return {}
    pool = legs.bm25(store, match, where, active, FILE_POOL, rank.BM25_WEIGHTS)
    if not pool:
        return {}
    located = dict(legs.chunk_files(store, [cid for cid, _s in pool]))
    total: dict[str, float] = {}
    for cid, s in pool:
        pl = located.get(cid)
        if pl is None:
            continue
        path, lang = pl
        if lang is None or lang in NOT_CODE_LANGS or _not_code_path(path):
            continue
        total[path] = total.get(path, 0.0) - s  # bm25(): lower is better
    order = sorted(total, key=lambda p: (-total[p], p))
    return {p: i for i, p in enumerate(order, 1)}


def _not_code_path(path: str) -> bool:
    f = rank.path_factors(path, False, False, False)
    return any(k in f for k in ("test", "example", "docs"))


#: The features of a report's candidates after the fusion, in column order (see
#: :func:`report_features`).
REPORT_FEATURES = (
    "log_score",  # log of the fused score (the best candidate: 0)
    "lex_rr",  # 1 / lexical rank (0: not found lexically)
    "dense_rr",  # 1 / dense rank
    "lex",  # BM25 / the pool's best
    "cos",  # cosine minus the pool's best (0: not found densely)
    "frame",  # traceback frame vote
    "message",  # error message vote
    "symbol",  # symbol and definition votes (the report's names)
    "connected",  # the code graph's vote
    "file_rr",  # (FILE_K + 1) / (FILE_K + rank of its file by summed BM25), 0: unranked
    "not_code",  # a prose or configuration file
    "test_docs",  # a test, example or docs path
)
#: The weights of the report score ``exp(w . x)`` (a feature left out weighs 0): the
#: fused score, "where to change" (log REPORT_NOT_CODE, log REPORT_TEST_OR_DOCS), and the
#: file's rank (FILE_WEIGHT).
REPORT_WEIGHTS: dict[str, float] = {
    "log_score": 1.0,
    "not_code": math.log(REPORT_NOT_CODE),
    "test_docs": math.log(REPORT_TEST_OR_DOCS),
    "file_rr": FILE_WEIGHT,
}

_observers: list[Callable[[list[rank.Candidate], np.ndarray], None]] = []


def report_features(cands: list[rank.Candidate], files: dict[str, int]) -> np.ndarray:
    """The (len(cands) x len(REPORT_FEATURES)) feature matrix of a report's candidates,
    read after the fusion (``score`` set)."""
    x = np.zeros((len(cands), len(REPORT_FEATURES)))
    if not cands:
        return x
    best = max(c.score for c in cands)
    lex_best = max((-c.lex_score for c in cands if c.lex_score is not None), default=0.0)
    cos_best = max((c.dense_score for c in cands if c.dense_score is not None), default=0.0)
    for i, c in enumerate(cands):
        row = x[i]
        row[0] = math.log(max(c.score, 1e-12) / best) if best > 0 else 0.0
        if c.lex_rank:
            row[1] = 1.0 / c.lex_rank
            row[3] = -c.lex_score / lex_best if c.lex_score is not None and lex_best > 0 else 0.0
        if c.dense_rank:
            row[2] = 1.0 / c.dense_rank
            row[4] = (c.dense_score or 0.0) - cos_best
        row[5] = c.votes.get("frame", 0.0)
        row[6] = c.votes.get("message", 0.0)
        row[7] = c.votes.get("symbol", 0.0) + c.votes.get("definition", 0.0)
        row[8] = c.votes.get("connected", 0.0)
        r = files.get(c.path)
        row[9] = (FILE_K + 1.0) / (FILE_K + r) if r else 0.0
        row[10] = 1.0 if c.lang is None or c.lang in NOT_CODE_LANGS else 0.0
        row[11] = 1.0 if any(f in c.factors for f in ("test", "example", "docs")) else 0.0
    return x


def rescore(cands: dict[int, rank.Candidate], files: dict[str, int]) -> None:
    """A report's final scores (after the fusion): ``exp(w . x - max)`` over
    :func:`report_features` with :data:`REPORT_WEIGHTS`."""
    items = list(cands.values())
    if not items:
        return
    x = report_features(items, files)
    for fn in list(_observers):
        fn(items, x)
    w = np.array([REPORT_WEIGHTS.get(n, 0.0) for n in REPORT_FEATURES])
    s = x @ w
    rel = np.exp(s - s.max())
    for c, v in zip(items, rel.tolist(), strict=True):
        c.score = v


@contextlib.contextmanager
def observing(fn: Callable[[list[rank.Candidate], np.ndarray], None]) -> Iterator[None]:
    """Call ``fn(candidates, features)`` at every report rescoring in this process while
    the block runs (training and diagnostics; searches do not depend on it)."""
    _observers.append(fn)
    try:
        yield
    finally:
        _observers.remove(fn)


def message_votes(
    store: Store, rep: Report, cands: dict[int, rank.Candidate], join: bool = True
) -> None:
    """Chunks that hold an error message's longest constant fragment get a vote (they
    join the candidates as in :func:`frame_votes`)."""
    for frag in _fragments(rep):
        for cid in ev.chunks_containing(store, frag, MAX_MESSAGE_CHUNKS):
            if not join and cid not in cands:
                continue
            c = cands.setdefault(cid, rank.Candidate(cid))
            c.votes["message"] = MESSAGE_VOTE


def _fragments(rep: Report) -> Iterable[str]:
    seen: set[str] = set()
    for e in rep.errors:
        pats = sorted((p.strip() for p in e.patterns), key=len, reverse=True)
        if pats and len(pats[0]) >= MIN_FRAGMENT and pats[0] not in seen:
            seen.add(pats[0])
            yield pats[0]


def describe(rep: Report) -> str:
    """The note a search read as a report carries."""
    parts = []
    if rep.frames:
        parts.append(f"{len(rep.frames)} traceback frames")
    if rep.errors:
        parts.append(f"{len(rep.errors)} error messages")
    names = len(rep.identifiers) + len(rep.code_names)
    if names:
        parts.append(f"{names} names")
    parts.append(f"{len(rep.segments)} prose segments")
    return "read as a bug report: " + ", ".join(parts)


#: Most names listed per hit by :func:`matched_parts`.
EXPLAIN_NAMES = 8


def matched_parts(
    store: Store,
    rep: Report,
    chosen: list[rank.Candidate],
    segment_cosines: Callable[[rank.Candidate], list[float]] | None = None,
    files: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """Which parts of the report each chosen candidate matched, for ``--explain``: the
    traceback frames whose line it holds, the error-message fragments its text holds,
    the report's names it defines (first) or uses, (``segment_cosines``, when the
    dense leg ran) each embedded prose segment's cosine with it, and (``files``: see
    :func:`file_ranks`) its file's rank by summed evidence."""
    frames = _mapped_frames(store, rep)
    frags = list(_fragments(rep))
    names = report_names(rep)
    out: list[dict[str, Any]] = []
    for c in chosen:
        part: dict[str, Any] = {}
        held = [
            f"{f.path or f.module_path}:{f.line}" + (f" in {f.function}" if f.function else "")
            for f, p in frames
            if p == c.path and f.line is not None and c.start_line <= f.line <= c.end_line
        ]
        if held:
            part["frames"] = held
        msgs = [m for m in frags if m in c.content]
        if msgs:
            part["messages"] = msgs
        found = _names_in(c, names)
        if found:
            part["names"] = found
        if segment_cosines is not None:
            cos = segment_cosines(c)
            if cos:
                part["segments"] = [round(x, 4) for x in cos]
        if files and c.path in files:
            part["file_rank"] = files[c.path]
        out.append(part)
    return out


def _names_in(c: rank.Candidate, names: list[str]) -> list[str]:
    """The report's names the chunk defines (its symbols), then those its text uses."""
    own = {s.strip().rsplit(".", 1)[-1] for s in (c.symbol or "").split(",")}
    defined, used = [], []
    for n in names:
        last = _last(n)
        if last in own:
            defined.append(n)
        elif last and re.search(rf"(?<![\w$]){re.escape(last)}(?![\w$])", c.content):
            used.append(n)
    return (defined + used)[:EXPLAIN_NAMES]
