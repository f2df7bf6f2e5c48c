"""Snippets: the best-matching line of a chunk and the lines around it.

The anchor is the line that matches the most query words (identifier parts count,
a definition line of a named symbol counts most); the snippet is the anchor ±
``SNIPPET_RADIUS`` lines, or the whole chunk when it is short. Over-long lines are cut
at a word boundary, so no snippet ends mid-token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scrydb import tokens

#: Lines kept on each side of the anchor: about a screenful around the matching line.
SNIPPET_RADIUS = 15
#: A line longer than this is cut (at a space) and marked with an ellipsis.
MAX_LINE_CHARS = 240
#: Weight of a definition line of a symbol named in the query.
DEF_LINE_BONUS = 3.0

_DEF_LINE = re.compile(
    r"^\s*(export\s+)?(default\s+)?(pub(\(\w+\))?\s+)?(public|private|protected|internal|static|async|abstract|final|override|\s)*"
    r"(def|class|func|fn|function|interface|struct|enum|trait|impl|type|module|object|sub|const|let|var|val)\b"
)


@dataclass
class Snippet:
    """A snippet of a chunk."""

    text: str
    anchor_line: int
    start_line: int
    truncated: bool


def make_snippet(
    content: str,
    start_line: int,
    query_words: set[str],
    symbols: set[str] | None = None,
    radius: int = SNIPPET_RADIUS,
    focus: int | None = None,
) -> Snippet:
    """Cut a snippet out of ``content`` (a chunk starting at ``start_line``) around its
    best line, or around ``focus`` (a line index in the chunk) when that is given."""
    lines = content.split("\n")
    if focus is not None and 0 <= focus < len(lines):
        best = focus
    else:
        best, best_score = best_line(lines, query_words, symbols)
        if best_score <= 0:
            best = _first_code_line(lines)
    if len(lines) <= 2 * radius + 1:
        lo, hi = 0, len(lines)
    else:
        lo = max(0, best - radius)
        hi = min(len(lines), lo + 2 * radius + 1)
        lo = max(0, hi - 2 * radius - 1)
    cut = [_cut_line(line) for line in lines[lo:hi]]
    truncated = (
        lo > 0
        or hi < len(lines)
        or any(c is not line for c, line in zip(cut, lines[lo:hi], strict=True))
    )
    return Snippet("\n".join(cut), start_line + best, start_line + lo, truncated)


def best_line(
    lines: list[str], query_words: set[str], symbols: set[str] | None
) -> tuple[int, float]:
    """(index, score) of the line that matches the query best (the first of equals)."""
    best, best_score = 0, -1.0
    for i, line in enumerate(lines):
        s = _line_score(line, query_words, symbols)
        if s > best_score:
            best, best_score = i, s
    return best, best_score


def _line_score(line: str, query_words: set[str], symbols: set[str] | None) -> float:
    if not line.strip():
        return 0.0
    # Every word below is a substring of the lower-cased line: a line that contains no
    # query word or symbol at all scores 0 without being split (most lines of a chunk).
    low = line.lower()
    if not any(q in low for q in query_words) and not (
        symbols and any(s and s.lower() in low for s in symbols)
    ):
        return 0.0
    found = 0.0
    words = set()
    for w in tokens.words(line[:2000]):
        lw = w.lower()
        words.add(lw)
        words.update(tokens.split_identifier(w))
    for q in query_words:
        if q in words:
            found += 1.0
    if symbols and _DEF_LINE.match(line):
        for s in symbols:
            if s and s.lower() in words:
                found += DEF_LINE_BONUS
                break
    return found


def _first_code_line(lines: list[str]) -> int:
    """First line that is not blank, a decorator or a comment: the signature, usually."""
    for i, line in enumerate(lines):
        s = line.strip()
        if s and not s.startswith(("#", "//", "/*", "*", "@", "--", ";", '"""', "'''")):
            return i
    return 0


def _cut_line(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    cut = line.rfind(" ", 0, MAX_LINE_CHARS)
    if cut < MAX_LINE_CHARS // 2:
        cut = MAX_LINE_CHARS
    return line[:cut] + " …"
