"""Hits are built here and nowhere else: a chunk's location and labels, a score, and a
snippet around its best line (search and related both call :func:`make_hit`)."""

from __future__ import annotations

from typing import Any

from scrydb.chunk.windows import window_spans
from scrydb.results import Hit
from scrydb.search import rank
from scrydb.search.query import Query
from scrydb.search.snippet import best_line, make_snippet


def hits_for(chosen: list[rank.Candidate], q: Query, explain: bool = False) -> list[Hit]:
    """The hits of a search's chosen candidates, in order: each named by the peer the
    query named when its chunk holds several, scored on one scale (rank.SCORE_DIGITS)."""
    out = []
    for c in chosen:
        kind, symbol = c.kind, c.symbol
        if c.matched is not None and symbol and ", " in symbol:
            kind, symbol = c.matched  # the one of the chunk's peers the query named
        out.append(
            make_hit(
                c.path,
                c.start_line,
                c.end_line,
                c.lang,
                kind,
                symbol,
                round(c.score, rank.SCORE_DIGITS),
                c.content,
                c.chunk_id,
                words=set(q.hit_words),
                names=set(q.named),
                window=c.window,
                explain=c.explain() if explain else None,
            )
        )
    return out


def make_hit(
    path: str,
    start_line: int,
    end_line: int,
    lang: str | None,
    kind: str,
    symbol: str | None,
    score: float,
    content: str,
    chunk_id: int,
    *,
    words: set[str],
    names: set[str] | None = None,
    window: int | None = None,
    explain: dict[str, Any] | None = None,
) -> Hit:
    """A hit for a chunk; the snippet centres on a line holding ``names`` (symbols the
    query named, the chunk's own name) or the most query ``words``; but where no line holds
    a query word or a named symbol and the dense leg matched a ``window`` of the chunk
    (chunk/windows.py), on that window."""
    own = {symbol.split(".")[-1]} if symbol else set()
    snip = make_snippet(
        content,
        start_line,
        words,
        names | own if names is not None else own or None,
        focus=_window_focus(content, window, words, names) if window is not None else None,
    )
    return Hit(
        path=path,
        start_line=start_line,
        end_line=end_line,
        lang=lang,
        kind=kind,
        symbol=symbol,
        score=score,
        snippet=snip.text,
        anchor_line=snip.anchor_line,
        snippet_start=snip.start_line,
        truncated=snip.truncated,
        chunk_id=chunk_id,
        explain=explain,
    )


def _window_focus(content: str, window: int, words: set[str], names: set[str] | None) -> int | None:
    """The middle line of window ``window`` of a chunk, unless some line matches the
    query's words or named symbols (the chunk's own name does not count: its definition
    line would always win)."""
    spans = window_spans(content)
    if window >= len(spans) or best_line(content.split("\n"), words, names or None)[1] > 0:
        return None
    a, b = spans[window]
    return content.count("\n", 0, (a + b) // 2)
