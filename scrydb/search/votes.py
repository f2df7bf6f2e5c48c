"""The ranker's evidence beyond the two legs: symbol votes (a chunk defines a name the
query gives), entry-point votes, fuzzy expansion of misspelt names, and the path,
content and kind priors. Each function reads the store and writes into the candidates."""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz.distance import Levenshtein

from scrydb import tokens
from scrydb.chunk.specs import SYMBOL_ONLY_KINDS
from scrydb.config import Config
from scrydb.search import rank
from scrydb.search.filters import Filter
from scrydb.search.query import STOP_WORDS, Query
from scrydb.store import Store, lookup
from scrydb.store import files as indexed_files

#: Fuzzy expansion: a query word of this length or more may match a symbol within
#: edit distance 1 (2 from FUZZY_LONG chars on); at most FUZZY_MAX names are added.
FUZZY_MIN = 5
FUZZY_LONG = 9
FUZZY_MAX = 3
#: Vote weight of a fuzzy (not exact) symbol match.
FUZZY_VOTE = 0.5
#: Trigram matches read per fuzzy lookup before the edit distance is computed.
FUZZY_CANDIDATES = 200
#: Definitions of one name read per symbol vote: a name defined more often than this is
#: too common to point at an answer anyway (plain words stop at PLAIN_WORD_MAX_DEFS).
MAX_DEFINITIONS = 50
#: Entry-point chunks read per "where does X start" question (a repository has a few).
MAX_ENTRY_POINTS = 500
#: Content and path factors remembered per engine (a few hundred bytes each).
FACTORS_MEMO_MAX = 100_000


def symbol_votes(
    store: Store, q: Query, expansions: list[str], filt: Filter, cands: dict[int, rank.Candidate]
) -> None:
    """Votes for chunks that define a symbol the query names."""
    wanted: dict[str, tuple[float, str | None]] = {}  # norm -> (weight, qualifier)
    for ident in q.identifiers:
        parts = [p for p in re.split(r"\.|::|->|#", ident.strip("()")) if p]
        if not parts:
            continue
        qual = tokens.normalise_name(parts[-2]) if len(parts) > 1 else None
        wanted[tokens.normalise_name(parts[-1])] = (rank.SYMBOL_VOTE, qual)
    plain = [
        t for t in q.terms if t.lower() not in STOP_WORDS and not any(t in i for i in q.identifiers)
    ]
    for n in (1, 2, 3) if q.is_code_lookup else (1,):
        for i in range(len(plain) - n + 1):
            norm = tokens.normalise_name("_".join(plain[i : i + n]))
            if len(norm) >= 3 and norm not in wanted:
                # -1 marks a plain word (checked for ambiguity below); a run of words
                # ("user repository" ~ UserRepository) votes in a keyword query only:
                # in a question it pulled in look-alike names (evals/RESULTS.md).
                wanted[norm] = (-1.0 if n == 1 else rank.SYMBOL_VOTE, None)
    for e in expansions:
        wanted.setdefault(e, (rank.SYMBOL_VOTE * FUZZY_VOTE, None))
    if not wanted:
        return
    where = filt.sql()
    for norm, (weight, qual) in wanted.items():
        rows = lookup.definitions(store, norm, where, MAX_DEFINITIONS)
        if not rows:
            continue
        if weight < 0:  # a plain word: only when it names few definitions
            if len(rows) > rank.PLAIN_WORD_MAX_DEFS or q.shape in ("question", "location"):
                continue
            weight = rank.SYMBOL_VOTE
        for cid, qualname, path, kind in rows:
            w = weight
            qual_ok = True
            if qual is not None:
                quals = [tokens.normalise_name(p) for p in re.split(r"\.|::", qualname)[:-1]]
                qual_ok = qual in quals
                if not qual_ok:  # ``Client.send`` asked, ``Server.send`` found
                    w *= rank.WRONG_QUALIFIER
            if w <= 0:
                continue
            c = cands.setdefault(cid, rank.Candidate(cid))
            if w > c.votes.get("symbol", 0.0) and kind not in SYMBOL_ONLY_KINDS:
                c.matched = (kind, qualname)  # hit kinds are chunk kinds
            c.votes["symbol"] = max(c.votes.get("symbol", 0.0), w)
            if q.shape == "identifier" and qual_ok:
                c.votes["definition"] = rank.DEFINITION_VOTE
                stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
                if tokens.normalise_name(stem) == norm:
                    c.votes["stem"] = rank.STEM_VOTE


def entry_votes(store: Store, filt: Filter, cands: dict[int, rank.Candidate]) -> None:
    """For "where does X start": chunks shaped like entry points get a vote."""
    for cid in lookup.entry_points(store, filt.sql(), MAX_ENTRY_POINTS):
        c = cands.get(cid)
        if c is not None:  # only candidates a leg found: an entry point alone is no answer
            c.votes["entry"] = rank.ENTRY_VOTE


def fuzzy_expand(store: Store, q: Query) -> list[str]:
    """Normalised symbol names within a small edit distance of query words."""
    out: list[str] = []
    words = list(q.identifiers)
    if q.is_code_lookup:
        # In a question, "header" is English, not a misspelt ``headers``.
        words += [t for t in q.terms if t.lower() not in STOP_WORDS and t not in words]
    for w in words:
        norm = tokens.normalise_name(w.split(".")[-1].strip("()"))
        if len(norm) < FUZZY_MIN:
            continue
        if lookup.has_symbol_name(store, norm):
            continue  # exact name exists: no need to guess
        dist = 2 if len(norm) >= FUZZY_LONG else 1
        for name in fuzzy_names(store, norm, max_dist=dist):
            if name not in out:
                out.append(name)
        if len(out) >= FUZZY_MAX:
            break
    return out[:FUZZY_MAX]


def fuzzy_names(store: Store, norm: str, max_dist: int) -> list[str]:
    """Symbol names within ``max_dist`` edits of ``norm`` (trigram candidates, then
    Levenshtein), closest first."""
    if len(norm) < 3:
        return []
    grams = {norm[i : i + 3] for i in range(len(norm) - 2)}
    match = " OR ".join('"' + g.replace('"', '""') + '"' for g in grams)
    scored = []
    for name in lookup.trigram_names(store, match, FUZZY_CANDIDATES):
        if abs(len(name) - len(norm)) > max_dist or name == norm:
            continue
        d = Levenshtein.distance(norm, name, score_cutoff=max_dist)
        if d <= max_dist:
            scored.append((d, name))
    scored.sort()
    return [n for _, n in scored[:5]]


def path_signals(
    store: Store,
    config: Config,
    q: Query,
    cands: dict[int, rank.Candidate],
    memo: dict[tuple[Any, ...], dict[str, float]],
) -> None:
    """Multiplicative priors from the path, the content shape, the kind and the length.
    ``memo`` keeps the pure per-chunk and per-path factors across queries (the same
    chunks come back query after query: 6 of 15 ms of a 16k-chunk query went to them)."""
    if len(memo) > FACTORS_MEMO_MAX:
        memo.clear()
    wants = (q.wants_tests, q.wants_examples, q.wants_docs)
    short: dict[int, float] = {}  # lines -> rank.short_factor, per query
    for c in cands.values():
        if not q.wants_docs:
            key = (c.text_hash, c.lang, c.kind, c.start_line)
            cf = memo.get(key)
            if cf is None:
                cf = memo[key] = rank.content_factors(c.content, c.lang, c.kind, c.start_line)
            c.factors.update(cf)
        if (
            q.shape in rank.DECLARATION_SHAPES
            and c.kind in rank.DECLARATION_KINDS
            and rank.PENALTY_DECLARATION < 1
        ):
            c.factors["declaration"] = rank.PENALTY_DECLARATION
        lines = c.end_line - c.start_line + 1
        if lines < rank.SHORT_LINES and not c.votes.get("symbol"):
            f = short.get(lines)
            if f is None:
                f = short[lines] = rank.short_factor(lines, q.shape, q.interrogative)
            if f < 1.0:
                c.factors["short"] = f
        pkey = (c.path, *wants)
        pf = memo.get(pkey)
        if pf is None:
            pf = memo[pkey] = rank.path_factors(c.path, *wants)
        c.factors.update(pf)
    if config.search.recency:
        newest = indexed_files.newest_mtime(store)
        for c in cands.values():
            f = rank.recency_factor(c.mtime_ns, newest)
            if f > 1.0:
                c.factors["recent"] = f
