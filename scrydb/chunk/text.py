"""Chunking without a grammar: Markdown/reST by headings, TOML by tables, YAML by
top-level keys, and blank-line-snapped windows for everything else.

Windows aim at ``WINDOW_LINES`` lines or ``TARGET_CHUNK_BYTES`` characters, whichever
comes first, never exceed ``WINDOW_MAX_LINES`` lines or ``MAX_CHUNK_BYTES`` characters
(unless one line does), and cut preferably before a line that follows a blank line,
less indented lines first.
"""

from __future__ import annotations

import re
from itertools import pairwise

from scrydb.chunk import assemble as asm
from scrydb.chunk.assemble import Lines, Piece, assemble, pack
from scrydb.chunk.records import Chunk

WINDOW_LINES = 40
WINDOW_MAX_LINES = 60

_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)(.*)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_RST_ADORN = re.compile(r"([=\-~^\"'`#*+:._<>!$%&,/;?@\\|])\1{2,}[ \t]*")
_TOML_TABLE = re.compile(r"[ \t]*\[\[?[ \t]*([^\[\]]+?)[ \t]*\]\]?[ \t]*(?:#.*)?")
_YAML_KEY = re.compile(r"""([A-Za-z0-9_$"'][^:#]*?)[ \t]*:(?:[ \t]|$)""")


def _to_chunks(lines: Lines, pieces: list[Piece], filler: str) -> list[Chunk]:
    return [
        Chunk(
            p.start + 1,
            p.end + 1,
            p.kind,
            p.symbol,
            lines.content(p.start, p.end),
            peers=_peers(p.symbol),
        )
        for p in assemble(lines, pieces, filler)
    ]


def _peers(label: str | None) -> list[str]:
    """The sections a grouped label names (``"project.urls, project.scripts"``), each
    indexed as a symbol of its own; [] for a single name."""
    if not label or ", " not in label:
        return []
    return [n for n in label.split(", ") if not n.startswith("+")]


def _window_cands(lines: Lines, start: int, end: int) -> dict[int, float]:
    """Cut scores: after a blank line, less indented, not a closing bracket."""
    text, blank = lines.lines, lines.blank
    cands: dict[int, float] = {}
    for r in range(start + 1, end + 1):
        if blank[r]:
            continue
        line = text[r]
        body = line.lstrip()
        indent = len(line) - len(body) + 3 * line[: len(line) - len(body)].count("\t")
        score = (0.0 if blank[r - 1] else 2.0) + min(indent, 32) / 8
        if body[:1] in ")]}":
            score += 1.0
        cands[r] = score
    return cands


def window_pieces(
    lines: Lines, start: int, end: int, kind: str = "block", symbol: str | None = None
) -> list[Piece]:
    """Blank-line-snapped windows over rows ``start..end``."""
    if end - start < WINDOW_MAX_LINES and lines.size(start, end) <= asm.MAX_CHUNK_BYTES:
        return [Piece(start, end, kind, symbol, True)]
    cands = _window_cands(lines, start, end)
    ranges = pack(
        lines,
        start,
        end,
        cands,
        max_lines=WINDOW_MAX_LINES,
        target_lines=WINDOW_LINES,
    )
    return [Piece(a, b, kind, symbol, True) for a, b in ranges]


def window_chunks(text: str) -> list[Chunk]:
    """Blank-line-snapped windows over the whole text (kind ``block``)."""
    lines = Lines(text)
    return _to_chunks(lines, window_pieces(lines, 0, lines.n - 1), "block")


def _sections(
    lines: Lines, heads: list[tuple[int, str | None]], kind: str, group: bool = False
) -> list[Piece]:
    """Pieces from section starts (row, symbol); big sections are windowed. With
    ``group``, consecutive sections share a piece while it stays under the target
    size (named after its first section): config tables are often a few lines each."""
    pieces: list[Piece] = []
    bounds = [*heads, (lines.n, None)]
    if not heads or heads[0][0] > 0:
        bounds.insert(0, (0, None))
    spans = [(row, nxt - 1, sym) for (row, sym), (nxt, _) in pairwise(bounds) if nxt > row]
    if group:
        # (first row, last row, the names of the sections grouped, in order)
        grouped: list[tuple[int, int, list[str]]] = []
        for row, end, sym in spans:
            if (
                grouped
                and lines.size(grouped[-1][0], end) <= asm.TARGET_CHUNK_BYTES
                and end - grouped[-1][0] < WINDOW_LINES
            ):
                first, _, names = grouped[-1]
                more = [sym] if sym is not None and sym not in names else []  # [[array]]
                grouped[-1] = (first, end, [*names, *more])
            else:
                grouped.append((row, end, [sym] if sym is not None else []))
        # A group is named by every table it holds (``project.urls, project.scripts``),
        # as code peers are: the first name alone would carry the others' evidence.
        spans = [(r, e, asm.label_text(ns) if ns else None) for r, e, ns in grouped]
    for row, end, sym in spans:
        pieces.extend(window_pieces(lines, row, end, kind, sym))
    return pieces


# ------------------------------------------------------------------------ Markdown


def markdown_chunks(text: str) -> list[Chunk]:
    """One chunk per heading section (ATX ``#`` and setext), symbol = heading path
    (``Install > From source``); front matter and fenced code are respected."""
    lines = Lines(text)
    rows = [line.rstrip("\r") for line in lines.lines]
    blank = lines.blank
    heads: list[tuple[int, str | None]] = []
    path: list[tuple[int, str]] = []
    fence = ""
    i = 0
    n = len(rows)
    if n and rows[0].strip() == "---":  # front matter
        for j in range(1, min(n, 200)):
            if rows[j].strip() in ("---", "..."):
                i = j + 1
                heads.append((i, None))
                break
    while i < n:
        line = rows[i]
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                if not line.strip().lstrip(fence[0]):
                    fence = ""
            i += 1
            continue
        if m:
            fence = m.group(1)
            i += 1
            continue
        level, title = 0, ""
        start = i
        atx = _ATX.match(line)
        if atx:
            level = len(atx.group(1))
            title = atx.group(2).strip()
            title = re.sub(r"[ \t]+#+$", "", title).strip("# \t")
        elif (
            i + 1 < n
            and not blank[i]
            and (i == 0 or blank[i - 1] or _ATX.match(rows[i - 1]))
            and not line.lstrip().startswith(("-", "*", "+", ">", "|", "<"))
            and _SETEXT.fullmatch(rows[i + 1])
        ):
            level = 1 if rows[i + 1].strip()[0] == "=" else 2
            title = line.strip()
            i += 1
        if level:
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title or "#"))
            heads.append((start, " > ".join(t for _, t in path)))
        i += 1
    return _to_chunks(lines, _sections(lines, heads, "section"), "section")


def rst_chunks(text: str) -> list[Chunk]:
    """reStructuredText: sections at underlined (optionally overlined) titles."""
    lines = Lines(text)
    rows = [line.rstrip("\r") for line in lines.lines]
    blank = lines.blank
    styles: list[tuple[str, bool]] = []
    heads: list[tuple[int, str | None]] = []
    path: list[tuple[int, str]] = []
    i = 0
    n = len(rows)
    while i + 1 < n:
        title = rows[i]
        under = rows[i + 1]
        if (
            not blank[i]
            and not title[:1].isspace()
            and _RST_ADORN.fullmatch(under)
            and len(under.rstrip()) >= len(title.rstrip())
            and not _RST_ADORN.fullmatch(title)
        ):
            over = i > 0 and rows[i - 1].rstrip() == under.rstrip()
            style = (under[0], over)
            if style not in styles:
                styles.append(style)
            level = styles.index(style) + 1
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title.strip()))
            heads.append((i - 1 if over else i, " > ".join(t for _, t in path)))
            i += 2
            continue
        i += 1
    return _to_chunks(lines, _sections(lines, heads, "section"), "section")


# -------------------------------------------------------------------- TOML / YAML


def _with_comments_above(lines: Lines, row: int) -> int:
    """Move a section start up over the comment lines directly above it."""
    while row > 0 and lines.lines[row - 1].lstrip().startswith("#"):
        row -= 1
    return row


def toml_chunks(text: str) -> list[Chunk]:
    """TOML: one piece per ``[table]`` / ``[[array]]`` (symbol = table name)."""
    lines = Lines(text)
    heads: list[tuple[int, str | None]] = []
    for r, line in enumerate(lines.lines):
        if line.lstrip().startswith("[") and (m := _TOML_TABLE.fullmatch(line.rstrip("\r"))):
            heads.append((_with_comments_above(lines, r), m.group(1).strip()))
    return _to_chunks(lines, _sections(lines, _dedupe(heads), "block", group=True), "block")


def yaml_chunks(text: str) -> list[Chunk]:
    """YAML: one piece per top-level key (symbol = key) or ``---`` document."""
    lines = Lines(text)
    heads: list[tuple[int, str | None]] = []
    for r, raw in enumerate(lines.lines):
        line = raw.rstrip("\r")
        if not line or line[0] in " \t#-[{!&*|>%@`}]":
            if line.startswith("---"):
                heads.append((r, None))
            continue
        m = _YAML_KEY.match(line)
        if m:
            heads.append((_with_comments_above(lines, r), m.group(1).strip("\"'")))
    return _to_chunks(lines, _sections(lines, _dedupe(heads), "block", group=True), "block")


def _dedupe(heads: list[tuple[int, str | None]]) -> list[tuple[int, str | None]]:
    out: list[tuple[int, str | None]] = []
    for row, sym in heads:
        if out and row <= out[-1][0]:
            continue
        out.append((row, sym))
    return out
