"""Line bookkeeping shared by the chunkers: sizes, cutting a range into pieces, and
turning raw pieces into the final, contract-abiding list of spans.

Every chunker (tree-sitter, Markdown, windows) produces :class:`Piece` objects: row
ranges with a kind and symbol, possibly overlapping, unsorted, tiny or leaving lines
out. :func:`assemble` is the single place that enforces the contract of
:func:`scrydb.chunk.chunk_file` (sorted, non-overlapping, every non-blank line covered)
and applies the merge rules (spans under ``MIN_CHUNK_LINES`` lines never stand alone).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate

#: A definition kept whole up to this size (characters); bigger ones are split.
MAX_CHUNK_BYTES = 3000
#: Size aimed at when a big definition or a run of module-level code is cut.
TARGET_CHUNK_BYTES = 1500
#: Spans with fewer lines than this are merged into a neighbour.
MIN_CHUNK_LINES = 4


def is_blank(line: str) -> bool:
    """True for a line that holds only whitespace (such lines need no chunk)."""
    return not line.strip()


class Lines:
    """The lines of a text (split on ``\\n`` only) with O(1) range sizes."""

    __slots__ = ("blank", "lines", "n", "pre")

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.n = len(self.lines)
        #: pre[i] = number of characters (newlines included) before row i.
        self.pre = [0, *accumulate(len(line) + 1 for line in self.lines)]
        self.blank = [not line.strip() for line in self.lines]

    def size(self, a: int, b: int) -> int:
        """Characters in rows ``a..b`` (inclusive, 0-based)."""
        return self.pre[b + 1] - self.pre[a]

    def content(self, a: int, b: int) -> str:
        """Rows ``a..b`` joined by ``\\n``."""
        return "\n".join(self.lines[a : b + 1])


@dataclass(slots=True)
class Piece:
    """A candidate chunk: 0-based inclusive rows plus what it is.

    ``unit`` marks a piece that should stand on its own when big enough (a whole
    definition, a slice of a split one, a Markdown section); other pieces are filler
    (module-level code, a class header) that may be grouped with neighbours.
    ``weight`` is the line count of the part that lends the piece its kind/symbol.
    ``names`` are the symbols of every piece merged into this one, in row order
    (see :func:`label`). ``in_class`` is set by the chunker on a piece that lies inside
    a class-like definition (a member, a split class's header or closing lines);
    ``side`` is what the merge rules derive from it (see :func:`side`).
    """

    start: int
    end: int
    kind: str
    symbol: str | None
    unit: bool = False
    weight: int = 0
    group: str | None = None  #: enclosing container: small pieces prefer their own
    small: bool = False
    names: list[str] = field(default_factory=list)
    in_class: bool = False
    side: int = 0


def pack(
    lines: Lines,
    start: int,
    end: int,
    cands: dict[int, float],
    target: int | None = None,
    hard: int | None = None,
    max_lines: int | None = None,
    target_lines: int | None = None,
) -> list[tuple[int, int]]:
    """Cut rows ``start..end`` into balanced ranges of about ``target`` characters
    (and about ``target_lines`` lines when given, whichever is reached first).

    A range never exceeds ``hard`` characters (or ``max_lines`` lines) unless one line
    alone does. Cuts go before candidate rows (``cands``: row -> score, lower is
    better) in the window from half the aimed size to the hard limit, then before a
    row that follows a blank line, then anywhere near the aimed size.
    """
    target = target or TARGET_CHUNK_BYTES
    hard = hard or MAX_CHUNK_BYTES
    pre = lines.pre
    rows = sorted(r for r in cands if start < r <= end)
    out: list[tuple[int, int]] = []
    cur = start
    while cur < end:
        size = pre[end + 1] - pre[cur]
        nlines = end - cur + 1
        if size <= hard and (max_lines is None or nlines <= max_lines):
            break
        # Pieces still to make, so that they come out about equal.
        parts = size / target
        if target_lines is not None:
            parts = max(parts, nlines / target_lines)
        aim = 1.0 / max(2, round(parts))  # share of what is left
        base = pre[cur]
        c_lo = max(cur + 1, bisect_left(pre, base + int(size * aim / 2)))
        if target_lines is not None:
            c_lo = min(c_lo, cur + max(1, int(nlines * aim / 2)))
        c_hi = min(end, bisect_right(pre, base + hard) - 1)
        if max_lines is not None:
            c_hi = min(c_hi, cur + max_lines)
        if c_hi < cur + 1:  # a single line bigger than hard
            c_hi = cur + 1
        c_lo = min(c_lo, c_hi)

        def dist(
            c: int,
            base: int = base,
            cur: int = cur,
            size: int = size,
            nlines: int = nlines,
            aim: float = aim,
        ) -> float:
            share = (pre[c] - base) / size
            if target_lines is not None:
                share = max(share, (c - cur) / nlines)
            return abs(share - aim)

        i = bisect_left(rows, c_lo)
        j = bisect_right(rows, c_hi)
        if i < j:
            best = min(rows[i:j], key=lambda c: (cands[c], dist(c)))
        else:
            blanks = [c for c in range(c_lo, c_hi + 1) if lines.blank[c - 1]]
            best = min(blanks or range(c_lo, c_hi + 1), key=dist)
        out.append((cur, best - 1))
        cur = best
    out.append((cur, end))
    return out


#: Kinds of a container's header piece: when a small header joins the first member
#: below it, the merged chunk is labelled with the container.
#: (Not namespaces and modules: they are opened wrappers, and what they hold names the
#: chunks.)
HEADER_KINDS = frozenset(
    {"class", "struct", "interface", "enum", "trait", "impl", "union", "object"}
)


#: What a piece holds, for the rule that keeps classes and free definitions apart.
NEUTRAL = 0  #: code, comments, a namespace's braces, a one-line macro: joins anything
CLASS_SIDE = 1  #: a class-like definition or part of one (member, header, closer)
FREE_SIDE = 2  #: a function outside any class (top-level, in a namespace, a Go method)
MIXED = CLASS_SIDE | FREE_SIDE
#: Kinds of the definitions that are ``FREE_SIDE`` outside a class. Type aliases are
#: not: ``type UserId = string`` above ``enum Role`` is a peer type, and merges.
FREE_KINDS = frozenset({"function", "method", "macro"})


def side(p: Piece) -> int:
    """Which side a fresh piece is on: a class-like definition or anything inside one is
    ``CLASS_SIDE``; a named function outside every class ``FREE_SIDE``; the rest (code,
    comments, type aliases, a one-line macro, text sections) ``NEUTRAL``."""
    if p.in_class or p.kind in HEADER_KINDS:
        return CLASS_SIDE
    return FREE_SIDE if p.unit and p.names and p.kind in FREE_KINDS else NEUTRAL


def can_merge(a: Piece, b: Piece) -> bool:
    """Whether one chunk may hold both: never a class (or a part of one) with a
    function outside every class. A function appended after a class stands alone
    (or joins a free neighbour) instead of becoming part of the class's chunk, and a
    small class does not join the function next to it (issue 42)."""
    return (a.side | b.side) != MIXED


def _merge(a: Piece, b: Piece) -> Piece:
    """``a`` absorbs ``b`` (rows become the union); the heavier part names the result,
    except that a container's header opening the merged rows names it (the chunk starts
    at the class line, so it is the class's chunk; the member stays in ``defs``)."""
    first = a if a.start <= b.start else b
    names = first.names + [n for n in (b if first is a else a).names if n not in first.names]
    header = (first.kind, first.symbol)
    is_header = not first.unit and first.kind in HEADER_KINDS and first.symbol is not None
    if (b.weight, b.unit) > (a.weight, a.unit):
        a.kind, a.symbol, a.unit, a.weight = b.kind, b.symbol, b.unit, b.weight
        a.group = b.group
    if is_header:
        a.kind, a.symbol = header
    a.names = names
    a.side |= b.side
    a.start = min(a.start, b.start)
    a.end = max(a.end, b.end)
    return a


#: At most this many definitions are named in a merged chunk's label; more are counted.
MAX_LABEL_NAMES = 6


def peer_names(p: Piece) -> list[str]:
    """The definitions a span is named by when small ones that are not part of each
    other were merged (peers: ``class A`` + ``class B``, a class + a function appended
    after it, two small methods), in row order; ``[]`` when one owns the span (a member
    under its class's header, ``Foo`` + ``Foo.__init__``, or a class's closing lines
    after its last member add no name), so that it keeps its own ``symbol``."""
    if p.symbol is None or len(p.names) < 2:
        return []
    kept: list[str] = []
    for n in p.names:
        if any(n.startswith(k + ".") or k.startswith(n + ".") for k in kept):
            continue
        kept.append(n)
    return kept if len(kept) >= 2 else []


def label_text(names: list[str]) -> str:
    """``"A, B, C"``: the symbol of a chunk named by several definitions (the first
    ``MAX_LABEL_NAMES - 1`` and a count when there are more)."""
    if len(names) > MAX_LABEL_NAMES:
        more = len(names) - (MAX_LABEL_NAMES - 1)
        names = [*names[: MAX_LABEL_NAMES - 1], f"+{more} more"]
    return ", ".join(names)


def _gap(a: Piece, b: Piece) -> int:
    """Rows strictly between two pieces (all blank after normalisation)."""
    return max(0, b.start - a.end - 1)


def assemble(lines: Lines, pieces: list[Piece], filler_kind: str) -> list[Piece]:
    """Normalise ``pieces`` into sorted, disjoint, covering, merged spans.

    Steps: trim blank edges; resolve overlaps (a shared row stays with the earlier
    piece); cover uncovered non-blank rows with ``filler_kind`` pieces; then
    :func:`_merge_small`.
    """
    blank = lines.blank
    n = lines.n
    norm: list[Piece] = []
    for p in pieces:
        s, e = max(p.start, 0), min(p.end, n - 1)
        while s <= e and blank[s]:
            s += 1
        while e >= s and blank[e]:
            e -= 1
        if s <= e:
            p.start, p.end = s, e
            p.weight = p.weight or (e - s + 1)
            # Definitions and class headers/closers name a merged span; namespaces (and
            # a wrapper's opening/closing lines) do not: what they hold does. Nor do
            # one-line macros (``#define X_H``, constants in all but name).
            named = (
                p.unit and p.kind != "namespace" and not (p.kind == "macro" and s == e)
            ) or p.kind in HEADER_KINDS
            p.names = [p.symbol] if p.symbol is not None and named else []
            norm.append(p)
    norm.sort(key=lambda p: (p.start, -p.end))

    # Overlaps: a row shared by two pieces stays with the first one.
    disjoint: list[Piece] = []
    for p in norm:
        if disjoint and p.start <= disjoint[-1].end:
            q = disjoint[-1]
            if p.end <= q.end:  # contained: adds nothing but perhaps its name
                if p.unit and not q.unit and p.weight > q.weight // 2:
                    q.kind, q.symbol, q.unit, q.group = p.kind, p.symbol, True, p.group
                    q.names = list(p.names)
                continue
            s = q.end + 1
            while s <= p.end and blank[s]:
                s += 1
            if s > p.end:
                continue
            p.start = s
        disjoint.append(p)

    # Coverage: every non-blank row must be in a piece.
    covered: list[Piece] = []
    prev_end = -1
    tail: list[Piece | None] = [*disjoint, None]
    for nxt in tail:
        stop = nxt.start if nxt is not None else n
        s = prev_end + 1
        while s < stop and blank[s]:
            s += 1
        if s < stop:
            e = stop - 1
            while blank[e]:
                e -= 1
            covered.append(Piece(s, e, filler_kind, None, False, e - s + 1, None))
        if nxt is not None:
            covered.append(nxt)
            prev_end = nxt.end
    return _merge_small(lines, covered)


def _merge_small(lines: Lines, ps: list[Piece]) -> list[Piece]:
    """The merge rules, in order: (A) adjacent filler of the same kind/symbol groups up
    to ``TARGET_CHUNK_BYTES``; (B0) small filler touching a neighbour (no blank line)
    joins it; (B) runs of small pieces merge up to ``TARGET_CHUNK_BYTES``; (C) what
    is still under ``MIN_CHUNK_LINES`` lines joins its neighbour, preferring one in
    the same container, then one that stays under ``MAX_CHUNK_BYTES``, then the
    nearer, then the smaller. Pieces of ``MIN_CHUNK_LINES`` lines or more that are
    definitions are never merged with each other, and no rule puts a class (or part of
    one) and a function outside every class into one chunk (:func:`can_merge`): a
    small piece with no neighbour it may join stands alone."""
    for p in ps:
        p.side = side(p)
    grouped = _group_filler(lines, ps)
    for p in grouped:
        p.small = p.end - p.start + 1 < MIN_CHUNK_LINES
    return _join_small(lines, _merge_runs(lines, _join_touching(lines, grouped)))


def _group_filler(lines: Lines, ps: list[Piece]) -> list[Piece]:
    """Rule A: adjacent filler with the same kind/symbol groups up to
    ``TARGET_CHUNK_BYTES``."""
    grouped: list[Piece] = []
    for p in ps:
        if grouped:
            q = grouped[-1]
            if (
                not q.unit
                and not p.unit
                and (q.kind, q.symbol) == (p.kind, p.symbol)
                and lines.size(q.start, p.end) <= TARGET_CHUNK_BYTES
            ):
                q.end = p.end
                q.weight += p.weight
                continue
        grouped.append(p)
    return grouped


def _join_touching(lines: Lines, grouped: list[Piece]) -> list[Piece]:
    """Rule B0: small filler that touches a neighbour joins it: a closing brace or
    ``end`` the body above it, a header the first member below it."""
    tight: list[Piece] = []
    for i, p in enumerate(grouped):
        if p.small and not p.unit:
            prev = tight[-1] if tight else None
            nxt = grouped[i + 1] if i + 1 < len(grouped) else None
            touch_prev = prev is not None and p.start - prev.end == 1 and can_merge(prev, p)
            touch_next = nxt is not None and nxt.start - p.end == 1 and can_merge(nxt, p)
            head = lines.lines[p.start].lstrip()
            closing = head[:1] in (")", "]", "}") or head.startswith("end")
            if touch_prev and (closing or not touch_next):
                assert prev is not None
                _merge(prev, p)
                continue
            if touch_next:
                assert nxt is not None
                _merge(nxt, p)
                nxt.small = nxt.end - nxt.start + 1 < MIN_CHUNK_LINES
                continue
        tight.append(p)
    return tight


def _merge_runs(lines: Lines, tight: list[Piece]) -> list[Piece]:
    """Rule B: runs of small pieces merge together up to ``TARGET_CHUNK_BYTES``."""
    runs: list[Piece] = []
    for p in tight:
        if runs:
            q = runs[-1]
            if (
                q.small
                and p.small
                and can_merge(q, p)
                and lines.size(q.start, p.end) <= TARGET_CHUNK_BYTES
            ):
                _merge(q, p)
                continue
        runs.append(p)
    return runs


def _join_small(lines: Lines, runs: list[Piece]) -> list[Piece]:
    """Rule C: a piece still under ``MIN_CHUNK_LINES`` lines joins the neighbour
    :func:`_neighbour_rank` prefers; one with no neighbour it may join stands alone."""
    out: list[Piece] = []
    carry: Piece | None = None
    for i, p in enumerate(runs):
        if carry is not None:
            _merge(p, carry)
            carry = None
        if p.end - p.start + 1 >= MIN_CHUNK_LINES:
            out.append(p)
            continue
        prev = out[-1] if out and can_merge(out[-1], p) else None
        nxt = runs[i + 1] if i + 1 < len(runs) and can_merge(runs[i + 1], p) else None
        if prev is None and nxt is None:
            out.append(p)
            continue
        if _neighbour_rank(lines, p, prev) <= _neighbour_rank(lines, p, nxt):
            assert prev is not None
            _merge(prev, p)
        else:
            carry = p
    if carry is not None:
        if out:
            _merge(out[-1], carry)
        else:
            out.append(carry)
    return out


def _neighbour_rank(lines: Lines, p: Piece, q: Piece | None) -> tuple[int, int, int, int]:
    """How much a small piece ``p`` would rather join ``q`` (lower is better): one in the
    same container, then one that stays under ``MAX_CHUNK_BYTES``, then the nearer, then
    the smaller; no neighbour (``None``) ranks last."""
    if q is None:
        return (9, 0, 0, 0)
    over = lines.size(min(p.start, q.start), max(p.end, q.end)) > MAX_CHUNK_BYTES
    gap = _gap(q, p) if q.start < p.start else _gap(p, q)
    return (int(q.group != p.group), int(over), gap, q.end - q.start)
