"""Hits are built here and nowhere else: a chunk's location and labels, a score, and a
snippet around its best line (search and related both call :func:`make_hit`)."""

from __future__ import annotations

from typing import Any

from scrydb.results import Hit
from scrydb.search.snippet import make_snippet


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
    explain: dict[str, Any] | None = None,
) -> Hit:
    """A hit for a chunk; the snippet centres on a line holding ``names`` (symbols the
    query named, the chunk's own name) or the most query ``words``."""
    own = {symbol.split(".")[-1]} if symbol else set()
    snip = make_snippet(
        content, start_line, words, names | own if names is not None else own or None
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
