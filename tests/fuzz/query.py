"""Fuzz the query parser and router: :func:`scrydb.search.query.prepare` (cleaning,
shape, lexical terms, and a long text read as a bug report: report.py, traces.py,
traceformats.py, errormessages.py, reportquery.py) and the frame-path mapping, the
parts of a search that run before any SQL or embedding.

Asserted: a bad query is a ScryError with one line, never another exception; a good one
has a known shape, at most MAX_QUERY_CHARS of text, one-line notes, at least one dense
text, and lexical terms whose MATCH expression a real SQLite FTS5 table accepts; a
report's parts stay within their caps and its frames map to indexed files or to none;
the same text routes the same way twice; and a CPU bound however long the paste.
"""

from __future__ import annotations

import apsw

from scrydb.search import reportquery
from scrydb.search.framepath import PathMapper
from scrydb.search.query import MAX_QUERY_CHARS, QUERY_SHAPES, dense_text, fts_match, prepare
from scrydb.search.report import MAX_NAMES

from .common import Finding, bounded, expected_errors, one_line, text_of

MAX_LEN = 16384
BOUND_S = 5.0
#: Files the frames of a fuzzed report are mapped onto (tests/sample_repo.py's layout).
INDEXED = (
    "app/__init__.py",
    "app/retry.py",
    "app/users.py",
    "app/config.py",
    "app/cli.py",
    "web/auth.ts",
    "web/server.ts",
    "svc/cache.go",
    "svc/main.go",
    "core/src/lib.rs",
    "tests/test_retry.py",
)
_fts: apsw.Connection | None = None
_mapper = PathMapper(INDEXED)


def _fts_table() -> apsw.Connection:
    """A real FTS5 table, made like the index's (unicode61 with ``_`` a token character)."""
    global _fts
    if _fts is None:
        _fts = apsw.Connection(":memory:")
        _fts.execute(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = \"porter unicode61 tokenchars '_'\")"
        )
        _fts.execute("INSERT INTO t VALUES ('getUserById get user by id retry backoff')")
    return _fts


def test_one(data: bytes) -> None:
    """One input: the text of a search."""
    text = text_of(data)
    q = None
    with expected_errors("prepare"), bounded(BOUND_S, "prepare"):
        q = prepare(text)
    if q is None:
        return
    again = prepare(text)
    if (again.shape, again.lexical_terms, again.dense_texts) != (
        q.shape,
        q.lexical_terms,
        q.dense_texts,
    ):
        raise Finding("the same text routed two ways")
    if q.shape not in QUERY_SHAPES or len(q.text) > MAX_QUERY_CHARS:
        raise Finding(f"shape {q.shape!r}, {len(q.text)} characters of text")
    for note in q.notes:
        one_line(note, "a search's note")
    if not q.text.strip():  # invisible characters alone: nothing to search (clean_query)
        if q.lexical_terms:
            raise Finding(f"an empty text gave terms {q.lexical_terms!r:.200}")
        return
    if not q.dense_texts or not all(t.strip() for t in q.dense_texts):
        raise Finding(f"dense texts {q.dense_texts!r:.200}")
    dense_text(q.text)
    expr = fts_match(q.lexical_terms)
    if expr is not None:
        list(_fts_table().execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)))
    rep = q.report
    if rep is None:
        return
    if len(q.terms) > reportquery.MAX_TERMS or len(q.identifiers) > reportquery.MAX_NAMES:
        raise Finding(f"{len(q.terms)} terms, {len(q.identifiers)} names")
    if len(q.dense_texts) > reportquery.MAX_SEGMENTS:
        raise Finding(f"{len(q.dense_texts)} dense segments")
    if max(len(rep.identifiers), len(rep.code_names), len(rep.mentions)) > MAX_NAMES:
        raise Finding("a report kept more names than MAX_NAMES")
    for f in rep.frames:
        got = _mapper.map(f.path) if f.path else None
        if got is not None and got not in INDEXED:
            raise Finding(f"frame path {f.path!r} mapped to {got!r}, not an indexed file")
        if f.line is not None and f.line < 0:
            raise Finding(f"frame line {f.line}")
